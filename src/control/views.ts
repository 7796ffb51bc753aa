// Ledger records as callers see them (docs/design.md#request-records): to anyone with read, the
// request id, operation, state, caller name and times; everything else (campaign, epoch, task id,
// outcome code, resolution and its note, params, answer) only to the record's own caller — its
// identity, never a caller of the same name — or an admin.
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import type { MutationRecord } from '../ledger/types.js'
import { ownerIdentity } from './identity.js'

const iso = (ms: number): string => new Date(ms).toISOString()

export function maySeeDetails (viewer: Caller, record: MutationRecord): boolean {
  // a record of unknown owner (identity null) is no viewer's own
  return (record.identity !== null && record.identity === ownerIdentity(viewer)) || viewer.scopes.includes('admin')
}

/** `viewer` null: the full view, as stored for a replay (only the record's caller replays it) */
export function requestView (r: MutationRecord, viewer: Caller | null): RequestView {
  const summary: RequestView = {
    requestId: r.requestId,
    operation: r.operation,
    state: r.state,
    caller: r.caller,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt)
  }
  if (viewer !== null && !maySeeDetails(viewer, r)) return summary
  const view: RequestView = {
    ...summary,
    campaignId: r.campaignId,
    controllerEpoch: r.controllerEpoch,
    taskId: r.taskId,
    outcomeCode: r.outcomeCode,
    reconcileFailures: r.reconcileFailures,
    deadline: iso(r.deadline),
    resolution: r.resolution === null ? null : { ...r.resolution, at: iso(r.resolution.at) }
  }
  if (viewer !== null) {
    view.params = r.params
    if (r.answer !== null) view.answer = r.answer
  }
  return view
}
