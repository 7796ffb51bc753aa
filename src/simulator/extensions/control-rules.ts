// How the remote judges one campaign-control call, in the order it does: the params it
// validates, the policy (the one constraints envelope it accepts), the lease rules (the seed:
// serialised claims, monotonic epochs on takeover, enforced expiry, stale epochs rejected on
// every mutation) and persistent idempotency (a request id applies at most once). One file
// because they are one reading of the seed: a handler asks these rules and applies what they
// allow. Each refusal is a reason, which goes out as a JSON-RPC error with `data.reason`.
// Handlers run synchronously on one event loop, which is what serialises the claims.
import { z } from 'zod'
import type { ControlBook, Sender, StoredResult } from '../books/control-book.js'
import type { RpcErrorBody, RpcOutcome } from '../rpc/outcome.js'
import { rpcError, rpcResult } from '../rpc/outcome.js'
import type { Lease } from '../types.js'
import type { ResolvedControl } from './control-options.js'

// ---- params --------------------------------------------------------------------------------
// Snake_case, as the seed and docs/design.md#campaign-control write them. `constraints` is left
// unknown here: its absence or any difference is a policy refusal, not a malformed request.

const Id = z.string().min(1)
const Epoch = z.number().int().min(0)
const Ttl = z.number().int().min(1).max(86_400)
const Constraints = z.unknown().optional()

export const ReadControlParams = z.object({ campaign_id: Id })
export const RequestStatusParams = z.object({ campaign_id: Id, request_id: Id })

export const ClaimParams = z.object({ campaign_id: Id, controller_id: Id, ttl_seconds: Ttl, request_id: Id, constraints: Constraints })

const Mutation = { campaign_id: Id, controller_id: Id, controller_epoch: Epoch, request_id: Id, constraints: Constraints }
export const RenewParams = z.object({ ...Mutation, ttl_seconds: Ttl })
export const ReleaseParams = z.object(Mutation)
export const InterveneParams = z.object({ ...Mutation, intervention: z.record(z.string(), z.unknown()) })

/** message.metadata.argus_supervisor of a submission. */
export const SubmissionMetadata = z.object({ ...Mutation, project: z.string().min(1).optional() })

/** The request id of any mutating call's params, before validation (for receipt counts). */
export function requestIdOf (params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('request_id' in params)) return undefined
  return typeof params.request_id === 'string' ? params.request_id : undefined
}

/** The campaign id of any mutating call's params, before validation (for the receipt log). */
export function campaignIdOf (params: unknown): unknown {
  return typeof params === 'object' && params !== null && 'campaign_id' in params ? params.campaign_id : undefined
}

/** The extension answers malformed params with -32602 on every profile (it is its own handler). */
export function invalidParams (rpcId: unknown, message: string): RpcOutcome {
  return rpcError(rpcId, { code: -32602, message })
}

// ---- refusals ------------------------------------------------------------------------------

export type Refusal = 'stale_epoch' | 'lease_expired' | 'lease_held' | 'policy_violation'

/** Not a JSON-RPC or A2A standard meaning: the extension's own "refused by control rules". */
export const CONTROL_REFUSED_CODE = -32003

const MESSAGES: Record<Refusal, string> = {
  stale_epoch: 'Controller epoch is not the current one',
  lease_expired: 'No unexpired lease for this controller',
  lease_held: 'Campaign is controlled by another controller',
  policy_violation: 'Request violates the control policy'
}

export function refusalError (reason: Refusal): RpcErrorBody {
  return { code: CONTROL_REFUSED_CODE, message: MESSAGES[reason], data: { reason } }
}

// ---- policy --------------------------------------------------------------------------------

/** The only envelope a claim or mutation may carry: the seed's restrictions, none relaxed. */
export const REQUIRED_CONSTRAINTS: Readonly<Record<string, unknown>> = Object.freeze({
  version: 1,
  execution: 'remote_only',
  allow_publication: false,
  allow_destructive_git: false,
  allow_credential_changes: false,
  allow_force_push: false,
  allow_merge: false
})

/** Exactly the required envelope: same keys, same values, nothing extra. */
export function constraintsMatch (value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const given = Object.keys(value)
  const required = Object.keys(REQUIRED_CONSTRAINTS)
  return given.length === required.length && required.every((key) => Object.hasOwn(value, key) && Object.is((value as Record<string, unknown>)[key], REQUIRED_CONSTRAINTS[key]))
}

export function policyRefusal (control: ResolvedControl, constraints: unknown): Refusal | undefined {
  return control.policyEnforced && !constraintsMatch(constraints) ? 'policy_violation' : undefined
}

// ---- lease rules ---------------------------------------------------------------------------

/** Same holder: same epoch, new expiry. No live lease: a takeover with the next epoch. */
export function claim (book: ControlBook, campaignId: string, controllerId: string, ttlSeconds: number): Lease | Refusal {
  const live = book.liveLease(campaignId)
  if (live !== null && live.controller_id !== controllerId) return 'lease_held'
  const epoch = live !== null ? live.epoch : book.currentEpoch(campaignId) + 1
  const lease = { controller_id: controllerId, epoch, expires_at: book.nowSeconds() + ttlSeconds }
  book.setLease(campaignId, lease)
  return lease
}

/** Whether this controller, at this epoch, may mutate the campaign now. */
export function authority (book: ControlBook, control: ResolvedControl, campaignId: string, controllerId: string, epoch: number): Refusal | undefined {
  if (!control.leaseEpochEnforced) return undefined
  const live = book.liveLease(campaignId)
  if (live !== null && live.controller_id !== controllerId) return 'lease_held'
  if (epoch !== book.currentEpoch(campaignId)) return 'stale_epoch'
  if (live === null) return 'lease_expired'
  return undefined
}

export function renew (book: ControlBook, campaignId: string, controllerId: string, epoch: number, ttlSeconds: number): Lease {
  const lease = { controller_id: controllerId, epoch, expires_at: book.nowSeconds() + ttlSeconds }
  book.setLease(campaignId, lease)
  return lease
}

// ---- at most once --------------------------------------------------------------------------
// A request id the campaign already applied answers with its stored result and applies
// nothing; otherwise the attempt runs, and only an applied attempt is stored. Refusals and
// other answers are not remembered, so the same id may be tried again (nothing of it was
// applied). The book is witnessed just before the attempt, so the applied log shows the state
// the mutation was judged against.

export type Attempt =
  | { applied: unknown; taskId?: string }
  | { refused: Refusal }
  /** Not applied, answered as is (e.g. a task that cannot be canceled). */
  | { outcome: RpcOutcome }

export interface MutationKey {
  operation: StoredResult['operation']
  campaignId: string
  requestId: string
  /** The controller_id and controller_epoch the request carried, for the applied log. */
  sender: Sender
}

export function mutateOnce (book: ControlBook, rpcId: unknown, key: MutationKey, attempt: () => Attempt): RpcOutcome {
  const prior = book.stored(key.campaignId, key.requestId)
  if (prior !== undefined) {
    if (prior.operation !== key.operation) return invalidParams(rpcId, 'request_id was already used for another operation')
    return rpcResult(rpcId, structuredClone(prior.result))
  }
  const before = book.witness(key.campaignId, key.operation, key.sender)
  const result = attempt()
  if ('refused' in result) return rpcError(rpcId, refusalError(result.refused))
  if ('outcome' in result) return result.outcome
  book.record(key.campaignId, key.requestId, { operation: key.operation, result: result.applied, taskId: result.taskId }, key.sender, before)
  return rpcResult(rpcId, result.applied)
}
