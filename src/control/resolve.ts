// Resolving an ambiguous mutation (docs/design.md#reconcile-and-acknowledge). Reconcile asks
// the remote once with `request_status` and the original id; it never re-sends the mutation
// and never claims or renews. Acknowledge is an admin's decision, allowed only where
// reconcile cannot help, and `assume_not_applied` only when the remote has provably moved
// past the record's epoch.
import type { Logger } from 'pino'
import type { z } from 'zod'
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import { readRpc } from '../argus/read-rpc.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../core/errors.js'
import type { BoundTaskStore, ClockStore, MutationRecord, RecordStore, Resolution } from '../ledger/types.js'
import type { UpstreamClient } from '../upstream/client.js'
import type { LeaseKeeper } from './leases.js'
import { requestView } from './views.js'
import { callerIdentity } from './identity.js'
import { RequestStatusSchema, wireParams } from './wire.js'
import type { GrantGate } from './grants.js'

export interface ResolverDeps {
  ledger: RecordStore & BoundTaskStore & ClockStore
  client: UpstreamClient
  discovery: Discovery
  leases: LeaseKeeper
  readTimeoutMs: number
  logger: Logger
  now: () => number
  /**
   * ms this process must still wait before judging the record's deadline, on its monotonic clock:
   * every owner's wait since the start, and this record's own since this process sent it
   * (docs/design.md#one-clock); absent: none
   */
  waitLeftMs?: (r: MutationRecord) => number
  /** grants per campaign (docs/design.md#grants): reconcile and acknowledge are control of the campaign */
  grants: GrantGate
}

export interface Resolver {
  reconcile: (campaignId: string, requestId: string, caller: Caller) => Promise<RequestView>
  acknowledge: (campaignId: string, requestId: string, caller: Caller, body: { resolution: 'assume_applied' | 'assume_not_applied'; note: string }) => Promise<RequestView>
}

type RequestStatus = z.infer<typeof RequestStatusSchema>

async function recordOf (d: ResolverDeps, campaignId: string, requestId: string): Promise<MutationRecord> {
  const r = await d.ledger.get(requestId)
  if (r === undefined || r.campaignId !== campaignId) throw new GatewayError('not_found', { message: 'No such request for this campaign.' })
  return r
}

async function finish (d: ResolverDeps, r: MutationRecord, to: 'applied' | 'not_applied', res: Resolution, taskId: string | null, viewer: Caller): Promise<RequestView> {
  const resolved: MutationRecord = { ...r, state: to, taskId: taskId ?? r.taskId, resolution: res, updatedAt: res.at }
  const view = requestView(resolved, null)
  // a later replay of the request id tells the resolved state, not the old 504
  if (!(await d.ledger.resolve(r.requestId, to, res, taskId, { httpStatus: 200, body: view }))) {
    throw new GatewayError('request_in_flight', { requestId: r.requestId, message: 'The request was resolved concurrently; read it again.' })
  }
  if (to === 'applied' && r.operation === 'submit') {
    // the applied submission's task replaces the bound one; when its id is unknown nothing
    // stays bound, so a cancel can never reach the task before it
    if (taskId !== null) await d.ledger.setBoundTask({ campaignId: r.campaignId, taskId, requestId: r.requestId, boundAt: res.at })
    else await d.ledger.clearBoundTask(r.campaignId)
  }
  // whatever the record did to the lease, the gateway no longer knows it
  await d.leases.forget(r.campaignId)
  // the resolver's identity beside its name: two callers may share a name (docs/design.md#request-records)
  d.logger.info({ event: 'mutation', caller: res.by, identity: callerIdentity(viewer), operation: r.operation, campaignId: r.campaignId, requestId: r.requestId, outcome: to, resolution: res.kind }, 'mutation resolved')
  const fresh = await d.ledger.get(r.requestId)
  return requestView(fresh ?? resolved, viewer)
}

/**
 * until the record's deadline the remote may still hold a request that arrived late, and
 * apply it: "not applied" settles nothing before then (docs/design.md#reconcile-and-acknowledge),
 * as the ledger's clock reads it, the clock the deadline was written on (docs/design.md#one-clock)
 */
async function notBeforeDeadline (d: ResolverDeps, r: MutationRecord): Promise<void> {
  // and on this process's monotonic clock: after a start, or a step of the wall clock (SQLite's
  // ledger clock), the deadline as written may read as past while an owner still waits
  const left = Math.max(r.deadline - await d.ledger.now(), d.waitLeftMs?.(r) ?? 0)
  if (left <= 0) return
  throw new GatewayError('reconcile_too_early', {
    requestId: r.requestId,
    message: 'The remote may still apply this request; ask again after its deadline.',
    headers: { 'retry-after': String(Math.ceil(left / 1000)) }
  })
}

function unresolved (r: MutationRecord, viewer: Caller): RequestView | undefined {
  if (r.state === 'pending') throw new GatewayError('request_in_flight', { requestId: r.requestId })
  return r.state === 'ambiguous' ? undefined : requestView(r, viewer)
}

/**
 * the remote's word on this very request, asked once with `request_status`; every failure —
 * of the call, or an answer that proves nothing — is counted on the record before it is thrown
 * (acknowledge waits for one)
 */
async function requestStatus (d: ResolverDeps, r: MutationRecord, method: string): Promise<RequestStatus> {
  const { campaignId, requestId } = r
  const fail = async (e: unknown): Promise<never> => {
    await d.ledger.noteReconcileFailure(requestId, d.now())
    throw e
  }
  const wire = d.discovery.wire()
  let result
  try {
    result = await readRpc(d, wire, {
      call: { method, params: wireParams.requestStatus(campaignId, requestId), op: 'request_status', deadline: d.now() + d.readTimeoutMs, headers: wire.headers() },
      capability: 'control.request_status',
      requestId
    })
  } catch (err) {
    // every failed reconcile counts, whatever failed (acknowledge waits for one)
    return await fail(err)
  }
  const status = RequestStatusSchema.safeParse(result)
  // the answer must be about this very request, or it proves nothing
  if (!status.success || status.data.request_id !== requestId) {
    return await fail(new GatewayError('upstream_invalid_response', { requestId, message: 'The remote did not answer about this request id.' }))
  }
  if (status.data.state === 'applied' && r.operation === 'submit' && (status.data.task_id ?? null) === null) {
    return await fail(new GatewayError('upstream_invalid_response', { requestId, message: 'The remote reports the submission applied without its task id.' }))
  }
  return status.data
}

async function reconcile (d: ResolverDeps, campaignId: string, requestId: string, caller: Caller): Promise<RequestView> {
  await d.grants.require(caller, 'control', campaignId)
  const r = await recordOf(d, campaignId, requestId)
  const settled = unresolved(r, caller)
  if (settled !== undefined) return settled
  const method = d.discovery.model().controlMethods.request_status
  if (method === undefined) {
    throw new GatewayError('capability_unavailable', { requestId, missingPrerequisites: [d.discovery.capability('control.request_status').reason] })
  }
  const status = await requestStatus(d, r, method)
  const taskId = status.task_id ?? null
  if (status.state === 'not_applied') await notBeforeDeadline(d, r)
  const res: Resolution = { kind: 'reconcile', by: caller.name, at: d.now(), note: null, resolution: null }
  return await finish(d, r, status.state, res, status.state === 'applied' ? taskId : null, caller)
}

async function acknowledge (d: ResolverDeps, campaignId: string, requestId: string, caller: Caller, body: { resolution: 'assume_applied' | 'assume_not_applied'; note: string }): Promise<RequestView> {
  // an admin's route, and admins keep every campaign: asked all the same, as every path is
  await d.grants.require(caller, 'control', campaignId)
  const r = await recordOf(d, campaignId, requestId)
  if (r.state === 'pending') throw new GatewayError('request_in_flight', { requestId })
  if (r.state !== 'ambiguous') throw new GatewayError('acknowledge_unsafe', { requestId, message: 'Only an ambiguous request can be acknowledged.' })
  const canReconcile = d.discovery.model().controlMethods.request_status !== undefined
  if (canReconcile && r.reconcileFailures === 0) {
    throw new GatewayError('acknowledge_unsafe', { requestId, message: 'The remote offers request_status: reconcile the request first.' })
  }
  if (body.resolution === 'assume_not_applied') {
    if (r.controllerEpoch !== null) {
      // a higher epoch proves the remote now rejects the old mutation, deadline or not
      const lease = await d.leases.fresh(campaignId)
      if (lease === null || lease.epoch <= r.controllerEpoch) {
        throw new GatewayError('acknowledge_unsafe', { requestId, message: 'The remote does not show an epoch above the request\'s; it could still apply.' })
      }
    }
    // a claim carries no epoch to be overtaken, and the remote's tasks/cancel ignores the
    // epoch a cancel carries: for both, only the deadline ends a late arrival
    if (r.operation === 'claim' || r.operation === 'fence' || r.operation === 'cancel') await notBeforeDeadline(d, r)
  }
  const res: Resolution = { kind: 'acknowledge', by: caller.name, at: d.now(), note: body.note, resolution: body.resolution }
  return await finish(d, r, body.resolution === 'assume_applied' ? 'applied' : 'not_applied', res, null, caller)
}

/** the resolver holds no state of its own: its dependencies are what every step reads */
export function createResolver (d: ResolverDeps): Resolver {
  return {
    reconcile: async (campaignId, requestId, caller) => await reconcile(d, campaignId, requestId, caller),
    acknowledge: async (campaignId, requestId, caller, body) => await acknowledge(d, campaignId, requestId, caller, body)
  }
}
