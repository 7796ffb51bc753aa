// The remote's lease rules (the seed: serialised claims, monotonic epochs on takeover,
// enforced expiry, stale epochs rejected on every mutation) and the policy check. Each rule
// answers with a refusal reason, which goes out as a JSON-RPC error with `data.reason`.
// Handlers run synchronously on one event loop, which is what serialises the claims.
import type { RpcErrorBody } from './argus.js'
import type { ControlBook } from './control-book.js'
import type { ResolvedControl } from './control-options.js'
import { constraintsMatch } from './control-options.js'
import type { Lease } from './types.js'

export type Refusal = 'stale_epoch' | 'lease_expired' | 'lease_held' | 'policy_violation'

/** Not a JSON-RPC or A2A standard meaning: the extension's own "refused by control rules". */
export const CONTROL_REFUSED_CODE = -32003

const MESSAGES: Record<Refusal, string> = {
  stale_epoch: 'Controller epoch is not the current one',
  lease_expired: 'No unexpired lease for this controller',
  lease_held: 'Campaign is controlled by another controller',
  policy_violation: 'Request violates the control policy'
}

export function refusalError(reason: Refusal): RpcErrorBody {
  return { code: CONTROL_REFUSED_CODE, message: MESSAGES[reason], data: { reason } }
}

export function policyRefusal(control: ResolvedControl, constraints: unknown): Refusal | undefined {
  return control.policyEnforced && !constraintsMatch(constraints) ? 'policy_violation' : undefined
}

/** Same holder: same epoch, new expiry. No live lease: a takeover with the next epoch. */
export function claim(book: ControlBook, campaignId: string, controllerId: string, ttlSeconds: number): Lease | Refusal {
  const live = book.liveLease(campaignId)
  if (live !== null && live.controller_id !== controllerId) return 'lease_held'
  const epoch = live !== null ? live.epoch : book.currentEpoch(campaignId) + 1
  const lease = { controller_id: controllerId, epoch, expires_at: book.nowSeconds() + ttlSeconds }
  book.setLease(campaignId, lease)
  return lease
}

/** Whether this controller, at this epoch, may mutate the campaign now. */
export function authority(book: ControlBook, control: ResolvedControl, campaignId: string, controllerId: string, epoch: number): Refusal | undefined {
  if (!control.leaseEpochEnforced) return undefined
  const live = book.liveLease(campaignId)
  if (live !== null && live.controller_id !== controllerId) return 'lease_held'
  if (epoch !== book.currentEpoch(campaignId)) return 'stale_epoch'
  if (live === null) return 'lease_expired'
  return undefined
}

export function renew(book: ControlBook, campaignId: string, controllerId: string, epoch: number, ttlSeconds: number): Lease {
  const lease = { controller_id: controllerId, epoch, expires_at: book.nowSeconds() + ttlSeconds }
  book.setLease(campaignId, lease)
  return lease
}
