// The answer of an ambiguous outcome (docs/design.md#ledger): what a request answers once its
// record is `ambiguous`, live or on a replay, whoever made it so — the sender after a timeout,
// or a store expiring a stale `pending` record. Built from the error table, so it is the same
// body the error handler gives for a live ambiguous outcome. The control plane renders it; a
// store is handed this function (LedgerOptions.ambiguousAnswer) and only writes what it returns.
import { GatewayError } from '../core/errors.js'
import type { StoredAnswer } from '../ledger/types.js'

/** where the caller resolves an ambiguous request */
export function reconcilePath (campaignId: string, requestId: string): string {
  return `/v1/campaigns/${campaignId}/requests/${requestId}/reconcile`
}

export function ambiguousAnswer (campaignId: string, requestId: string): StoredAnswer {
  const err = new GatewayError('ambiguous_write', { requestId, reconcile: reconcilePath(campaignId, requestId) })
  return { httpStatus: err.statusCode, body: err.toBody() }
}
