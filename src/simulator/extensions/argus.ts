// The Argus supervisor extension as the seed describes it: envelope rules, the three read
// operations and their payloads, and the four safe error codes in every placement a remote
// may use. Error details never carry exception text.
import type { Payload } from '../books/task-book.js'
import type { RpcErrorBody } from '../rpc/outcome.js'
import type { ArgusErrorCode, ArgusErrorPlacement } from '../types.js'

export const ARGUS_URN = 'urn:openoperator:argus-supervisor:v1'
const SUPPORTED = new Set(['supervisor.health', 'supervisor.status', 'campaign.list'])

export interface ArgusMessage {
  metadata?: Record<string, unknown>
  extensions?: string[]
  parts: Array<{ kind: string; data?: unknown }>
}

export type ArgusDecision =
  | { ok: true; operation: string; requestId: string; payload: Payload }
  | { ok: false; code: ArgusErrorCode }

export function isArgusRead (message: ArgusMessage): boolean {
  return message.metadata !== undefined && Object.hasOwn(message.metadata, ARGUS_URN)
}

/** The operation named by a raw (unvalidated) request body, for matching faults. */
export function argusOperationOf (params: unknown): string | undefined {
  const envelope = field(field(field(params, 'message'), 'metadata'), ARGUS_URN)
  const operation = field(envelope, 'operation')
  return typeof operation === 'string' ? operation : undefined
}

export function decideArgus (message: ArgusMessage, enabled: boolean, campaigns: ReadonlyArray<Record<string, unknown>>): ArgusDecision {
  const envelope = message.metadata?.[ARGUS_URN]
  const operation = field(envelope, 'operation')
  // The legacy snake_case key is accepted; answers always use requestId.
  const requestId = field(envelope, 'requestId') ?? field(envelope, 'request_id')
  const dataPart = message.parts.find((p) => p.kind === 'data')
  const params = field(dataPart?.data, 'params')
  const wellFormed =
    typeof operation === 'string' && operation !== '' &&
    typeof requestId === 'string' && requestId !== '' &&
    (message.extensions ?? []).includes(ARGUS_URN) &&
    isObject(params)
  if (!wellFormed) return { ok: false, code: 'invalid_argus_envelope' }
  if (!enabled) return { ok: false, code: 'argus_supervisor_disabled' }
  if (!SUPPORTED.has(operation)) return { ok: false, code: 'unsupported_argus_operation' }
  return { ok: true, operation, requestId, payload: argusPayload(operation, requestId, campaigns) }
}

function argusPayload (operation: string, requestId: string, campaigns: ReadonlyArray<Record<string, unknown>>): Payload {
  if (operation === 'supervisor.health') {
    return { ok: true, operation, requestId, backend: 'simulated', checkedAt: new Date().toISOString() }
  }
  if (operation === 'supervisor.status') {
    return { operation, requestId, supervisor: { state: 'running', campaigns: 2, blocked: 0 } }
  }
  return { operation, requestId, campaigns: campaigns.map((c) => ({ ...c })) }
}

/** The JSON-RPC error for a placement that uses one; the default delivery is 'rpc-default'. */
export function argusRpcError (code: ArgusErrorCode, placement: 'rpc-default' | 'rpc-data' | 'rpc-message'): RpcErrorBody {
  const rpcCode = code === 'invalid_argus_envelope' ? -32602 : -32000
  if (placement === 'rpc-message') return { code: rpcCode, message: code }
  if (placement === 'rpc-data') return { code: rpcCode, message: 'Argus request failed', data: { code } }
  return { code: rpcCode, message: code, data: { code } }
}

/** The data payload for placements that deliver the code inside a task. */
export function argusErrorPayload (code: ArgusErrorCode, placement: ArgusErrorPlacement): Payload {
  return placement === 'payload-object' ? { error: { code } } : { error: code }
}

function field (value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
