// The outcome class of one sent mutation (docs/design.md#outcomes): `rejected` only when
// nothing left the process or the remote said so in a way that cannot mean "applied";
// everything else that is not a valid result is `ambiguous`. Ambiguity is the safe side.
import type { RpcResult } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'
import type { ErrorCode } from '../core/errors.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'

export type Classified =
  | { cls: 'result'; result: unknown }
  | { cls: 'rejected'; code: ErrorCode; why: string; methodNotFound: boolean; leaseRefused: boolean }
  | { cls: 'ambiguous'; why: string }

/** error.data.reason → REST code; the reason beats the JSON-RPC code */
const REASONS: Record<string, ErrorCode> = {
  stale_epoch: 'stale_epoch',
  lease_held: 'lease_held_by_other',
  lease_expired: 'lease_expired',
  policy_violation: 'policy_rejected'
}

/** JSON-RPC codes that say the request was refused before anything was applied */
const REJECTING_CODES: ReadonlyMap<number, ErrorCode> = new Map([
  [RPC_CODES.parseError, 'upstream_rejected'],
  [RPC_CODES.invalidRequest, 'upstream_rejected'],
  [RPC_CODES.methodNotFound, 'capability_unavailable'],
  [RPC_CODES.invalidParams, 'upstream_rejected'],
  [RPC_CODES.taskNotFound, 'not_found'],
  [RPC_CODES.taskNotCancelable, 'task_not_cancelable'],
  [RPC_CODES.unsupportedOperation, 'upstream_rejected'],
  [RPC_CODES.contentTypeNotSupported, 'upstream_rejected']
])

function reasonOf (data: unknown): unknown {
  return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>).reason : undefined
}

/** a settled rpc() */
export function classifyAnswer (r: RpcResult): Classified {
  if (r.ok) return { cls: 'result', result: r.result }
  const reason = reasonOf(r.error.data)
  if (reason !== undefined) {
    const code = typeof reason === 'string' ? REASONS[reason] : undefined
    // an unknown reason may describe anything, including a partial apply
    if (code === undefined) return { cls: 'ambiguous', why: `remote error ${r.error.code} with an unknown reason` }
    return { cls: 'rejected', code, why: `remote reason ${String(reason)}`, methodNotFound: false, leaseRefused: code !== 'policy_rejected' }
  }
  const code = REJECTING_CODES.get(r.error.code)
  if (code === undefined) return { cls: 'ambiguous', why: `remote error ${r.error.code}` }
  return { cls: 'rejected', code, why: `remote error ${r.error.code}`, methodNotFound: r.error.code === RPC_CODES.methodNotFound, leaseRefused: false }
}

/** a thrown rpc(): only a failure before the connection was up proves nothing was sent */
export function classifyFailure (err: unknown): Classified {
  if (err instanceof UpstreamCallError && err.nothingSent) {
    return { cls: 'rejected', code: 'upstream_unavailable', why: `nothing sent (${err.kind})`, methodNotFound: false, leaseRefused: false }
  }
  return { cls: 'ambiguous', why: err instanceof UpstreamCallError ? err.kind : 'unexpected failure' }
}

/**
 * the class a mutation's client span carries (docs/design.md#tracing), handed to the tracing
 * wrapper by the upstream plugin: tracing knows no control code
 */
const spanClass = (c: Classified): string => c.cls === 'result' ? 'applied' : c.cls
export const mutationOutcomes = {
  ofAnswer: (r: RpcResult): string => spanClass(classifyAnswer(r)),
  ofFailure: (err: unknown): string => spanClass(classifyFailure(err))
}
