// Ledger records as callers see them (docs/design.md#rest-interface): ids, operation, state,
// caller and times for anyone with read; params and answers only for the record's own caller
// or an admin.
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import type { MutationRecord } from '../ledger/types.js'

const iso = (ms: number): string => new Date(ms).toISOString()

export function maySeeDetails (viewer: Caller, record: MutationRecord): boolean {
  return viewer.name === record.caller || viewer.scopes.includes('admin')
}

export function requestView (r: MutationRecord, viewer: Caller | null): RequestView {
  const view: RequestView = {
    requestId: r.requestId,
    campaignId: r.campaignId,
    operation: r.operation,
    state: r.state,
    caller: r.caller,
    controllerEpoch: r.controllerEpoch,
    taskId: r.taskId,
    outcomeCode: r.outcomeCode,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    reconcileFailures: r.reconcileFailures,
    resolution: r.resolution === null ? null : { ...r.resolution, at: iso(r.resolution.at) }
  }
  if (viewer !== null && maySeeDetails(viewer, r)) {
    view.params = r.params
    if (r.answer !== null) view.answer = r.answer
  }
  return view
}
