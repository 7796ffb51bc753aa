// One mutation through the pipeline (docs/design.md#order-of-checks), the first failing step
// answering: the request read (grants, body, request id), its earlier use, the clocks, the
// controller id and the capability; then, its campaign queued for, the ticket the insert must find
// unchanged, the campaign's unresolved records, a cancel's target and the lease. Only then is it
// committed `pending`, and sent once through the mutation dispatcher (no retry, a fresh
// connection); its outcome is written compare-and-set (pipeline-settle.ts).
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { GatewayError, isGatewayError } from '../core/errors.js'
import type { CampaignTicket, InsertResult } from '../ledger/types.js'
import type { A2aWire } from '../upstream/a2a-wire.js'
import { callerIdentity } from './identity.js'
import { classifyAnswer, classifyFailure, type Classified } from './outcome.js'
import { logMutation, settle } from './pipeline-settle.js'
import { ambiguityBlock, bindController, busy, cancelTarget, ownerWaitMs, parseBody, priorUse, requireCapability, resultIn, wireFor } from './pipeline-steps.js'
import { CONTROL_OPERATION, type Mutation, type MutationAnswer, type MutationRequest, type PipelineDeps } from './pipeline-types.js'
import { paramsHash, resolveRequestId } from './rules.js'
import type { Authority, Lease } from './wire.js'

/** the method the send calls and the wire that writes it, taken together: a card changing meanwhile cannot mix them */
interface Route { wire: A2aWire; method: string }

/** the campaign as the insert must find it, and the authority the mutation is sent under */
interface Decided {
  ticket: CampaignTicket
  /** the id's record as of the ticket: 'unsent' when nothing of it ever left */
  again: 'unsent' | undefined
  boundTaskId: string | undefined
  lease: Lease | undefined
  authority: Authority
}

/** an earlier use of the request id answers again, as a replay */
function replay (d: PipelineDeps, m: Mutation, a: MutationAnswer): MutationAnswer {
  logMutation(d, m, 'replayed')
  return a
}

/** the request read: nothing of the ledger is asked before the grants and the body */
async function admit (d: PipelineDeps, req: MutationRequest): Promise<Mutation> {
  const started = d.now()
  // grants come first (docs/design.md#grants): a caller refused the campaign learns nothing of
  // it, its body's rules or its request id's use; the project a submission names right after
  // the body is read
  await d.grants?.require(req.caller, 'control', req.campaignId)
  const body = parseBody(req.operation, req.body)
  if (typeof body.project === 'string') d.grants?.requireProject(req.caller, body.project)
  const requestId = resolveRequestId(body.requestId as string | undefined, req.idempotencyKey)
  const controllerId = req.caller.controllerId
  if (controllerId === undefined) throw new GatewayError('forbidden', { message: 'The caller has no controllerId.' })
  const hash = paramsHash(req.operation, req.campaignId, req.taskId === undefined ? body : { ...body, taskId: req.taskId })
  return { req, started, body, requestId, controllerId, paramsHash: hash, isClaim: req.operation === 'claim' || req.operation === 'fence' }
}

/** the steps before the campaign is queued for: clocks, controller id, capability */
async function prepare (d: PipelineDeps, m: Mutation): Promise<Route> {
  // a clock past the margin decides nothing (docs/design.md#one-clock)
  await d.clocks.ready({ claim: true })
  await bindController(d, m.req.caller, m.controllerId)
  const wire = d.discovery.wire()
  const method = requireCapability(d.discovery, m.req.operation, m.body)
  // measured clocks only (docs/design.md#one-clock): a clock past the margin decides nothing,
  // and nothing that depends on a lease leaves before the remote's clock is measured — by a
  // lease read of this campaign when neither this replica nor another has a measurement
  if (!m.isClaim) await d.clocks.ready({ claim: false, measure: async () => await d.leases.fresh(m.req.campaignId) })
  return { wire, method }
}

/** under the campaign's queue: the ticket, the id's use as of it, the unresolved records, a cancel's target, the lease */
async function decide (d: PipelineDeps, m: Mutation): Promise<Decided | { replay: MutationAnswer }> {
  const { req, requestId, controllerId } = m
  // what the insert must find unchanged: no mutation of the campaign may start in between.
  // Read with it, as of the same moment: this id's record (it may have finished while this
  // request waited for the campaign) and, for a mutation under a lease but a cancel, the lease view
  const isCancel = req.operation === 'cancel'
  const ticket = await d.ledger.ticket(req.campaignId, { requestId, lease: !m.isClaim && !isCancel })
  const again = priorUse(ticket.record, req.caller, m.paramsHash)
  if (again !== undefined && again !== 'unsent') return { replay: again }
  ambiguityBlock(ticket, req.operation === 'fence')
  // a cancel checks its task first, then asks the remote for the lease it is sent under
  const boundTaskId = isCancel ? await cancelTarget(d, req.campaignId, req.taskId) : undefined
  const lease: Lease | undefined = m.isClaim ? undefined : await d.leases.require(req.campaignId, controllerId, { fresh: isCancel, view: ticket.lease, remoteClock: d.clocks.remote })
  const authority: Authority = { campaignId: req.campaignId, controllerId, epoch: lease?.epoch ?? 0, requestId }
  return { ticket, again, boundTaskId, lease, authority }
}

/**
 * the pending record committed, under the ledger's own checks against the ticket; answers the
 * id's record instead when another use of it got in first (a replay)
 */
async function commitPending (d: PipelineDeps, m: Mutation, c: Decided): Promise<MutationAnswer | undefined> {
  const { req, requestId } = m
  const at = d.now()
  const waitMs = ownerWaitMs(d, req.operation)
  const controllerEpoch = c.lease?.epoch ?? null
  // a remote that stopped answering gets no mutation, and none is the breaker's probe
  const wait = d.circuit?.retryAfterSeconds()
  if (wait !== undefined) {
    throw new GatewayError('upstream_unavailable', { requestId, message: 'The remote is not answering; nothing was sent. Retry shortly.', headers: { 'retry-after': String(wait) } })
  }
  d.onStep?.('before-pending', requestId)
  // an unsent record goes back to pending by compare-and-set, a new one is inserted; either
  // way under the ledger's own checks against the ticket (docs/design.md#serialisation)
  const inserted: InsertResult = c.again === 'unsent'
    ? await d.ledger.retryUnsent(requestId, { owner: d.instanceId, waitMs, controllerEpoch, params: m.body, at }, c.ticket)
    : await d.ledger.insertPending({
      requestId,
      campaignId: req.campaignId,
      caller: req.caller.name,
      identity: callerIdentity(req.caller),
      operation: req.operation,
      paramsHash: m.paramsHash,
      params: m.body,
      controllerEpoch,
      owner: d.instanceId,
      waitMs,
      createdAt: at
    }, c.ticket, { fence: req.operation === 'fence' })
  if (inserted === 'moved' || inserted === 'blocked') throw busy(requestId, inserted)
  if (inserted === 'exists') {
    const raced = priorUse(await d.ledger.get(requestId), req.caller, m.paramsHash)
    if (raced !== undefined && raced !== 'unsent') return raced
    throw new GatewayError('request_in_flight', { requestId })
  }
  d.onPending?.(requestId, waitMs)
  return undefined
}

/** the one send: whatever comes back, or fails, is classified, never retried */
async function sendOnce (d: PipelineDeps, m: Mutation, route: Route, c: Decided): Promise<Classified> {
  const { operation } = m.req
  const { wire } = route
  try {
    const params = wireFor(operation, c.authority, m.body, c.boundTaskId)
    const r = await d.client.rpc({ method: route.method, params: operation === 'submit' ? wire.sendParams(params) : params, op: CONTROL_OPERATION[operation] ?? 'submit', kind: 'mutation', id: m.requestId, headers: wire.headers() })
    // a refused version is ambiguous like any unlisted code; the discovery stops speaking it
    if (!r.ok && r.error.code === RPC_CODES.versionNotSupported) d.discovery.markVersionRefused(wire.version)
    // results in v0.3's shape whatever the remote speaks (docs/design.md#protocol-versions)
    return classifyAnswer(r.ok ? { ...r, result: resultIn(wire, operation, r.result) } : r)
  } catch (err) {
    return classifyFailure(err)
  }
}

/** one mutation, its steps in order; the campaign's queue held from the lock to the outcome */
export async function runMutation (d: PipelineDeps, req: MutationRequest): Promise<MutationAnswer> {
  const m = await admit(d, req)
  const prior = priorUse(await d.ledger.get(m.requestId), req.caller, m.paramsHash)
  if (prior !== undefined && prior !== 'unsent') return replay(d, m, prior)

  let release: (() => Promise<void>) | undefined
  let sent = false
  try {
    const route = await prepare(d, m)
    // a queue, so one replica's mutations of a campaign take turns; the insert's checks serialise
    release = await d.ledger.lockCampaign(req.campaignId, d.lockWaitMs)
    if (release === undefined) throw new GatewayError('campaign_busy', { requestId: m.requestId })
    const decided = await decide(d, m)
    if ('replay' in decided) return replay(d, m, decided.replay)
    const raced = await commitPending(d, m, decided)
    if (raced !== undefined) return replay(d, m, raced)

    d.onStep?.('before-send', m.requestId)
    sent = true
    const sentAt = d.now()
    const classified = await sendOnce(d, m, route, decided)
    return await settle(d, m, classified, { lease: decided.lease, boundTaskId: decided.boundTaskId, sentAt })
  } catch (err) {
    if (!sent) logMutation(d, m, 'blocked', { code: isGatewayError(err) ? err.code : 'internal_error' })
    throw err
  } finally {
    await release?.()
  }
}
