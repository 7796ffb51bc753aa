// The stored answer of an ambiguous outcome (docs/design.md#ledger): what a replay of the
// request returns once its record is `ambiguous`, whoever made it so — the sender after a
// timeout, or any process expiring a stale `pending` record. Built from the error table so
// it is the same body the error handler gives for a live ambiguous outcome.
import { GatewayError } from '../core/errors.js'
import type { StoredAnswer } from './types.js'

/** where the caller resolves an ambiguous request */
export function reconcilePath (campaignId: string, requestId: string): string {
  return `/v1/campaigns/${campaignId}/requests/${requestId}/reconcile`
}

export function ambiguousAnswer (campaignId: string, requestId: string): StoredAnswer {
  const err = new GatewayError('ambiguous_write', { requestId, reconcile: reconcilePath(campaignId, requestId) })
  return { httpStatus: err.statusCode, body: err.toBody() }
}
