// What the control plane reads for a caller (docs/design.md#campaign-control): a campaign's lease,
// fresh from the remote, and the ledger's records — each behind the campaign's grants
// (docs/design.md#grants) but the admins' listing of every unresolved record, which is whole.
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import { GatewayError } from '../core/errors.js'
import type { RecordState, UnresolvedState } from '../ledger/types.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import type { PlaneState } from './plane-state.js'
import { requestView } from './views.js'
import type { Lease } from './wire.js'

export async function readControl (s: PlaneState, campaignId: string, viewer: Caller): Promise<Lease | null> {
  await s.grants.require(viewer, 'read', campaignId)
  if (s.o.discovery.model().controlMethods.read_control === undefined) {
    throw new GatewayError('capability_unavailable', { missingPrerequisites: [s.o.discovery.capability('control.read_control').reason] })
  }
  return await s.leases.fresh(campaignId)
}

export async function listRequests (s: PlaneState, campaignId: string, viewer: Caller, opts: { state?: RecordState; limit: number }): Promise<RequestView[]> {
  await s.grants.require(viewer, 'read', campaignId)
  return (await s.o.ledger.listByCampaign(campaignId, opts)).map((r) => requestView(r, viewer))
}

/** an admin's listing (routes/requests.ts): admins keep every campaign, so it is whole */
export async function listUnresolved (s: PlaneState, viewer: Caller, opts: { state?: UnresolvedState | undefined; limit: number; cursor?: string | undefined }): Promise<{ requests: RequestView[]; nextCursor: string | null }> {
  const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor)
  // one more than asked: whether another page follows, without a count
  const rows = await s.o.ledger.listUnresolved({ state: opts.state, after, limit: opts.limit + 1 })
  const page = rows.slice(0, opts.limit)
  const last = page.at(-1)
  return {
    requests: page.map((r) => requestView(r, viewer)),
    nextCursor: rows.length > opts.limit && last !== undefined ? encodeCursor(last) : null
  }
}

export async function getRequest (s: PlaneState, campaignId: string, requestId: string, viewer: Caller): Promise<RequestView> {
  await s.grants.require(viewer, 'read', campaignId)
  const r = await s.o.ledger.get(requestId)
  if (r === undefined || r.campaignId !== campaignId) throw new GatewayError('not_found', { message: 'No such request for this campaign.' })
  return requestView(r, viewer)
}
