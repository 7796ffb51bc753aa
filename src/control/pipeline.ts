// The mutation pipeline (docs/design.md#order-of-checks): one ordered list of steps, the
// first that fails answers. Authentication, scopes and the body cap come before it (the
// HTTP layer); from the body rules on, every step is here and runs without Fastify.
// A mutation is committed `pending` before it leaves, sent once through the mutation
// dispatcher (no retry, a fresh connection), and its outcome written compare-and-set.
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import { MUTATION_BODY_SCHEMAS } from '../../schemas/control.js'
import type { CapabilityName, ControlOperation } from '../discovery/capabilities.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError, isErrorCode, isGatewayError } from '../core/errors.js'
import { requestView } from './views.js'
import { invalidRequest, parseReadable } from '../core/validation.js'
import type { z } from 'zod'
import type { CampaignTicket, InsertResult, Ledger, MutationOperation, MutationRecord } from '../ledger/types.js'
import type { UpstreamClient } from '../upstream/client.js'
import { fetchTask } from '../tasks/fetch-task.js'
import { ambiguousAnswer, reconcilePath } from './ambiguous-answer.js'
import { applyResult, type Applied } from './effects.js'
import type { LeaseKeeper } from './leases.js'
import { classifyAnswer, classifyFailure, type Classified } from './outcome.js'
import { checkBodyRules, normaliseAliases, paramsHash, resolveRequestId } from './rules.js'
import { wireParams, type Authority, type Lease } from './wire.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import type { A2aWire } from '../upstream/a2a-wire.js'
import type { ClockWatch } from './clocks.js'
import { callerIdentity } from './identity.js'
import type { GrantGate } from './grants.js'

export type MutationMetric = 'applied' | 'rejected' | 'ambiguous' | 'blocked' | 'replayed'

/**
 * The points of a mutation where a crash leaves a different trace (docs/design.md#outcomes):
 * before its pending record is committed, after it and before a byte leaves, and after the
 * answer before the outcome is written. Crash tests stop the process exactly there.
 */
export type MutationStep = 'before-pending' | 'before-send' | 'before-outcome'

export interface PipelineDeps {
  ledger: Ledger
  client: UpstreamClient
  discovery: Discovery
  leases: LeaseKeeper
  instanceId: string
  connectTimeoutMs: number
  mutationTimeoutMs: number
  readTimeoutMs: number
  maxTaskResponseBytes: number
  lockWaitMs: number
  logger: Logger
  now: () => number
  onMutation?: (operation: MutationOperation, outcome: MutationMetric) => void
  /**
   * the upstream circuit breaker's view (docs/design.md#circuit-breaker): while it is not closed
   * a mutation is refused before anything is written; absent: always closed
   */
  circuit?: { retryAfterSeconds: () => number | undefined }
  /** called synchronously at each step (crash tests); default none */
  onStep?: (step: MutationStep, requestId: string) => void
  /** this replica's offsets to the ledger's and the remote's clocks (docs/design.md#one-clock) */
  clocks: ClockWatch
  /** another identity presented a bound controller id (a metric) */
  onControllerConflict?: () => void
  /** a pending record was committed and its mutation may now leave: its owner waits `waitMs` (docs/design.md#one-clock) */
  onPending?: (requestId: string, waitMs: number) => void
  /** grants per campaign (docs/design.md#grants); absent (a rig of the steps alone), every caller reaches every campaign */
  grants?: GrantGate
}

export interface MutationRequest {
  operation: MutationOperation
  campaignId: string
  caller: Caller
  body: unknown
  /** the Idempotency-Key header, as received */
  idempotencyKey: string | string[] | undefined
  /**
   * the task a cancel names (the A2A front door's tasks/cancel, docs/api.md#a2a-front-door): it must
   * still be the campaign's bound task, and it is part of the params hash; REST names none
   */
  taskId?: string | undefined
}

export interface MutationAnswer { httpStatus: number; body: unknown; replayed: boolean }

/** the card's operation each mutation needs; submit rides on message/send */
export const CONTROL_OPERATION: Record<MutationOperation, ControlOperation | undefined> = {
  claim: 'claim_control',
  renew: 'renew_control',
  release: 'release_control',
  intervene: 'intervene',
  cancel: 'cancel',
  // an admin's claim on a blocked campaign (docs/design.md#fence)
  fence: 'claim_control',
  submit: undefined
}

const TERMINAL = new Set(['completed', 'canceled', 'failed', 'rejected'])
const GRACE_MS = 30_000

// ---- the steps, in order; each exported for its unit test --------------------------------

/** body rules (constraints, reserved fields), aliases, then the strict schema */
export function parseBody (operation: MutationOperation, raw: unknown): Record<string, unknown> {
  checkBodyRules(raw)
  const parsed = parseReadable(MUTATION_BODY_SCHEMAS[operation] as z.ZodType<unknown>, normaliseAliases(raw))
  if (!parsed.success) throw invalidRequest(parsed.issues, 'body')
  return parsed.data as Record<string, unknown>
}

/** a record that ended rejected because nothing left the process (docs/design.md#request-ids) */
export const isUnsent = (r: MutationRecord): boolean => r.state === 'rejected' && r.outcomeCode === 'upstream_unavailable'

/**
 * the id's earlier use: another caller's (409), other params (422), in flight (409), a replay,
 * or 'unsent': nothing of it ever left, so the same request runs again as new. Another caller is
 * another identity, whatever its name; a record of unknown owner is every caller's conflict
 * (docs/design.md#request-records)
 */
export function priorUse (existing: MutationRecord | undefined, caller: Caller, hash: string): MutationAnswer | 'unsent' | undefined {
  if (existing === undefined) return undefined
  // nothing of another caller's request is shown, not even that its params differ
  if (existing.identity === null || existing.identity !== callerIdentity(caller)) throw new GatewayError('idempotency_key_conflict')
  if (existing.paramsHash !== hash) throw new GatewayError('idempotency_key_mismatch', { requestId: existing.requestId })
  if (existing.state === 'pending') throw new GatewayError('request_in_flight', { requestId: existing.requestId })
  if (isUnsent(existing)) return 'unsent'
  if (existing.prunedAt !== null) return { ...prunedAnswer(existing), replayed: true }
  if (existing.answer === null) throw new GatewayError('request_in_flight', { requestId: existing.requestId })
  return { httpStatus: existing.answer.httpStatus, body: existing.answer.body, replayed: true }
}

/**
 * What a record retention pruned replays (docs/design.md#request-ids-are-forever), from what
 * stays of it: a resolved one its record, as it replayed before; a refused one its error again;
 * an applied one its final state. `pruned: true` says the details are gone.
 */
export function prunedAnswer (r: MutationRecord): { httpStatus: number; body: unknown } {
  if (r.resolution !== null) return { httpStatus: 200, body: { ...requestView(r, null), pruned: true } }
  if (r.state === 'applied') {
    return {
      httpStatus: r.operation === 'submit' ? 202 : 200,
      body: { requestId: r.requestId, campaignId: r.campaignId, operation: r.operation, state: r.state, taskId: r.taskId, pruned: true }
    }
  }
  const e = new GatewayError(isErrorCode(r.outcomeCode) ? r.outcomeCode : 'upstream_rejected', { requestId: r.requestId })
  return { httpStatus: e.statusCode, body: e.toBody() }
}

/** controller mode, then this operation's own capability; answers the method to call */
export function requireCapability (discovery: Discovery, operation: MutationOperation, body: Record<string, unknown>): string {
  const snap = discovery.snapshot()
  if (snap.mode !== 'controller') throw new GatewayError('capability_unavailable', { missingPrerequisites: snap.missingPrerequisites })
  const unavailable = (name: CapabilityName): GatewayError | undefined => {
    const cap = discovery.capability(name)
    return cap.state === 'unavailable' ? new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] }) : undefined
  }
  const op = CONTROL_OPERATION[operation]
  if (op !== undefined) {
    const method = snap.controlMethods[op]
    if (method === undefined) throw new GatewayError('capability_unavailable', { missingPrerequisites: snap.controlMissing[op] ?? [`operation ${op} is not advertised`] })
    if (operation === 'cancel') {
      const e = unavailable('a2a.tasks.get')
      if (e !== undefined) throw e
    }
    return method
  }
  const e = unavailable('a2a.message.send') ?? (body.project !== undefined ? unavailable('control.project_selection') : undefined)
  if (e !== undefined) throw e
  return discovery.wire().method('message/send')
}

/**
 * any pending or ambiguous record of the campaign blocks every mutation of it; a fence only a
 * pending one (docs/design.md#fence). Read with the ticket the insert will check again.
 */
export function ambiguityBlock (ticket: CampaignTicket, fence: boolean): void {
  const open = ticket.blocker
  if (open === undefined || (fence && open.state !== 'pending')) return
  throw new GatewayError('ambiguity_unresolved', {
    message: `Request ${open.requestId} of this campaign is unresolved; ${open.state === 'pending' ? 'wait for its outcome' : 'reconcile or acknowledge it first'}.`,
    requestId: open.requestId,
    reconcile: reconcilePath(ticket.campaignId, open.requestId)
  })
}

/** what an insert refused on the ledger's own checks answers: nothing was sent (docs/design.md#serialisation) */
function busy (requestId: string, why: 'moved' | 'blocked'): GatewayError {
  return new GatewayError('campaign_busy', {
    requestId,
    message: why === 'moved'
      ? 'Another mutation of this campaign started while this one was checked; nothing was sent. Retry.'
      : 'Another mutation of this campaign is in flight or unresolved; nothing was sent.'
  })
}

/**
 * cancel targets the bound task only, and only while the remote says it is not terminal. Its
 * lease is read after this (docs/design.md#leases): the remote's tasks/cancel ignores the
 * lease, so nothing may stand between the lease's answer and the send but the pending write.
 */
export async function cancelTarget (d: PipelineDeps, campaignId: string, named?: string): Promise<string> {
  const bound = await d.ledger.getBoundTask(campaignId)
  if (bound === undefined) throw new GatewayError('no_bound_task')
  if (named !== undefined && bound.taskId !== named) throw new GatewayError('task_not_cancelable', { message: 'The task is no longer its campaign\'s bound task.' })
  let task
  try {
    task = await fetchTask(d, bound.taskId, Date.now() + d.readTimeoutMs)
  } catch (err) {
    if (isGatewayError(err) && err.code === 'not_found') throw new GatewayError('not_found', { message: 'The bound task does not exist on the remote.' })
    throw err
  }
  if (TERMINAL.has(task.status.state)) throw new GatewayError('task_not_cancelable', { message: `The bound task is already ${task.status.state}.` })
  return bound.taskId
}

/** how long a sent mutation's owner may wait for its outcome, plus the grace (docs/design.md#outcomes) */
export function ownerWaitMs (d: Pick<PipelineDeps, 'connectTimeoutMs' | 'mutationTimeoutMs' | 'readTimeoutMs'>, operation: MutationOperation): number {
  // a renewal's readback (read_control) comes before its outcome is written
  return d.connectTimeoutMs + d.mutationTimeoutMs + (operation === 'renew' ? d.readTimeoutMs : 0) + GRACE_MS
}

function wireFor (operation: MutationOperation, a: Authority, body: Record<string, unknown>, taskId: string | undefined): Record<string, unknown> {
  switch (operation) {
    case 'claim':
    case 'fence': return wireParams.claim(a.campaignId, a.controllerId, a.requestId, body.ttlSeconds as number)
    case 'renew': return wireParams.renew(a, body.ttlSeconds as number)
    case 'release': return wireParams.release(a)
    case 'intervene': return wireParams.intervene(a, body.intervention as Record<string, unknown>)
    case 'submit': return wireParams.submit(a, body.parts as unknown[], body.project as string | undefined)
    case 'cancel': return wireParams.cancel(a, taskId ?? '')
  }
}

/** a submission's and a cancel's result are A2A's (a send, a task): read in v0.3's shape; the extension's own results are as sent */
function resultIn (wire: A2aWire, operation: MutationOperation, result: unknown): unknown {
  if (operation === 'submit') return wire.sendResult(result)
  if (operation === 'cancel') return wire.task(result)
  return result
}

// ---- the pipeline ---------------------------------------------------------------------

export function createPipeline (d: PipelineDeps): (req: MutationRequest) => Promise<MutationAnswer> {
  const log = (req: MutationRequest, requestId: string, outcome: MutationMetric, started: number, extra: Record<string, unknown> = {}): void => {
    d.onMutation?.(req.operation, outcome)
    // never params: ids, outcome and timing are enough to follow a mutation. An ambiguous one
    // blocks its campaign until an operator resolves it (docs/runbooks/ambiguous-write.md): warn
    const line = { event: 'mutation', caller: req.caller.name, operation: req.operation, campaignId: req.campaignId, requestId, outcome, durationMs: d.now() - started, ...extra }
    if (outcome === 'ambiguous') d.logger.warn(line, 'mutation')
    else d.logger.info(line, 'mutation')
  }

  return async (req) => {
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

    const replay = (a: MutationAnswer): MutationAnswer => {
      log(req, requestId, 'replayed', started)
      return a
    }
    const prior = priorUse(await d.ledger.get(requestId), req.caller, hash)
    if (prior !== undefined && prior !== 'unsent') return replay(prior)

    let release: (() => Promise<void>) | undefined
    let sent = false
    const isClaim = req.operation === 'claim' || req.operation === 'fence'
    try {
      // a clock past the margin decides nothing (docs/design.md#one-clock)
      await d.clocks.ready({ claim: true })
      await bindController(req.caller, controllerId)
      // the method and the wire that writes it, taken together: a card changing meanwhile cannot mix them
      const wire = d.discovery.wire()
      const method = requireCapability(d.discovery, req.operation, body)
      // measured clocks only (docs/design.md#one-clock): a clock past the margin decides nothing,
      // and nothing that depends on a lease leaves before the remote's clock is measured — by a
      // lease read of this campaign when neither this replica nor another has a measurement
      if (!isClaim) await d.clocks.ready({ claim: false, measure: async () => await d.leases.fresh(req.campaignId) })
      // a queue, so one replica's mutations of a campaign take turns; the insert's checks serialise
      release = await d.ledger.lockCampaign(req.campaignId, d.lockWaitMs)
      if (release === undefined) throw new GatewayError('campaign_busy', { requestId })
      // what the insert must find unchanged: no mutation of the campaign may start in between.
      // Read with it, as of the same moment: this id's record (it may have finished while this
      // request waited for the campaign) and, for a mutation under a lease but a cancel, the lease view
      const isCancel = req.operation === 'cancel'
      const ticket = await d.ledger.ticket(req.campaignId, { requestId, lease: !isClaim && !isCancel })
      const again = priorUse(ticket.record, req.caller, hash)
      if (again !== undefined && again !== 'unsent') return replay(again)
      ambiguityBlock(ticket, req.operation === 'fence')
      // a cancel checks its task first, then asks the remote for the lease it is sent under
      const boundTaskId = isCancel ? await cancelTarget(d, req.campaignId, req.taskId) : undefined
      const lease: Lease | undefined = isClaim ? undefined : await d.leases.require(req.campaignId, controllerId, { fresh: isCancel, view: ticket.lease, remoteClock: d.clocks.remote })
      const authority: Authority = { campaignId: req.campaignId, controllerId, epoch: lease?.epoch ?? 0, requestId }

      const at = d.now()
      const waitMs = ownerWaitMs(d, req.operation)
      const controllerEpoch = lease?.epoch ?? null
      // a remote that stopped answering gets no mutation, and none is the breaker's probe
      const wait = d.circuit?.retryAfterSeconds()
      if (wait !== undefined) {
        throw new GatewayError('upstream_unavailable', { requestId, message: 'The remote is not answering; nothing was sent. Retry shortly.', headers: { 'retry-after': String(wait) } })
      }
      d.onStep?.('before-pending', requestId)
      // an unsent record goes back to pending by compare-and-set, a new one is inserted; either
      // way under the ledger's own checks against the ticket (docs/design.md#serialisation)
      const inserted: InsertResult = again === 'unsent'
        ? await d.ledger.retryUnsent(requestId, { owner: d.instanceId, waitMs, controllerEpoch, params: body, at }, ticket)
        : await d.ledger.insertPending({
          requestId,
          campaignId: req.campaignId,
          caller: req.caller.name,
          identity: callerIdentity(req.caller),
          operation: req.operation,
          paramsHash: hash,
          params: body,
          controllerEpoch,
          owner: d.instanceId,
          waitMs,
          createdAt: at
        }, ticket, { fence: req.operation === 'fence' })
      if (inserted === 'moved' || inserted === 'blocked') throw busy(requestId, inserted)
      if (inserted === 'exists') {
        const raced = priorUse(await d.ledger.get(requestId), req.caller, hash)
        if (raced !== undefined && raced !== 'unsent') return replay(raced)
        throw new GatewayError('request_in_flight', { requestId })
      }
      d.onPending?.(requestId, waitMs)

      d.onStep?.('before-send', requestId)
      sent = true
      let classified: Classified
      const sentAt = d.now()
      try {
        const params = wireFor(req.operation, authority, body, boundTaskId)
        const r = await d.client.rpc({ method, params: req.operation === 'submit' ? wire.sendParams(params) : params, op: CONTROL_OPERATION[req.operation] ?? 'submit', kind: 'mutation', id: requestId, headers: wire.headers() })
        // a refused version is ambiguous like any unlisted code; the discovery stops speaking it
        if (!r.ok && r.error.code === RPC_CODES.versionNotSupported) d.discovery.markVersionRefused(wire.version)
        // results in v0.3's shape whatever the remote speaks (docs/design.md#protocol-versions)
        classified = classifyAnswer(r.ok ? { ...r, result: resultIn(wire, req.operation, r.result) } : r)
      } catch (err) {
        classified = classifyFailure(err)
      }
      return await settle(req, requestId, started, classified, { lease, boundTaskId, controllerId, sentAt, ttlSeconds: body.ttlSeconds as number | undefined })
    } catch (err) {
      if (!sent) log(req, requestId, 'blocked', started, { code: isGatewayError(err) ? err.code : 'internal_error' })
      throw err
    } finally {
      await release?.()
    }
  }

  /**
   * One identity per controller id (docs/design.md#controller-bindings): the first verified
   * identity to use an id binds it in the ledger, for every replica; another identity presenting
   * it, in any letter case, is refused before anything is sent.
   */
  async function bindController (caller: Caller, controllerId: string): Promise<void> {
    const identity = callerIdentity(caller)
    const holder = await d.ledger.bindController({ controllerId, identity, caller: caller.name, boundAt: d.now() })
    if (holder.identity === identity) return
    d.onControllerConflict?.()
    throw new GatewayError('controller_conflict', { message: 'Another caller identity holds this controller id; an admin can list and remove bindings under /v1/admin/controllers.' })
  }

  async function settle (req: MutationRequest, requestId: string, started: number, c: Classified, ctx: { lease: Lease | undefined; boundTaskId: string | undefined; controllerId: string; sentAt: number; ttlSeconds: number | undefined }): Promise<MutationAnswer> {
    const { campaignId, operation } = req
    const answeredAt = d.now()
    let state: 'applied' | 'rejected' | 'ambiguous'
    let answer: Applied
    let why: string | undefined
    if (c.cls === 'result') {
      const applied = await applyResult({ operation, campaignId, requestId, controllerId: ctx.controllerId, lease: ctx.lease, boundTaskId: ctx.boundTaskId, leases: d.leases, ledger: d.ledger, now: d.now }, c.result)
        .then((a) => {
          // a lease granted now measures the remote's clock (docs/design.md#one-clock)
          if (a?.lease !== undefined && ctx.ttlSeconds !== undefined) d.clocks.observeLease(a.lease.expiresAt, ctx.ttlSeconds, ctx.sentAt, answeredAt)
          return a
        })
        .catch((err: unknown) => {
          d.logger.error({ err, requestId }, 'recording the effects of an applied mutation failed')
          return undefined
        })
      state = applied === undefined ? 'ambiguous' : 'applied'
      answer = applied ?? { ...ambiguousAnswer(campaignId, requestId), taskId: null }
      if (applied === undefined) why = 'the result does not have the expected shape'
    } else if (c.cls === 'rejected') {
      state = 'rejected'
      const e = new GatewayError(c.code, { requestId })
      answer = { httpStatus: e.statusCode, body: e.toBody(), taskId: null }
      why = c.why
      const op = CONTROL_OPERATION[operation]
      if (c.methodNotFound) d.discovery.markMethodNotFound(op !== undefined ? `control.${op}` : 'a2a.message.send')
    } else {
      state = 'ambiguous'
      answer = { ...ambiguousAnswer(campaignId, requestId), taskId: null }
      why = c.why
    }
    // our view of the lease is wrong or unproven after these
    if (state === 'ambiguous' || (c.cls === 'rejected' && c.leaseRefused)) await d.leases.forget(campaignId).catch(() => undefined)

    let written = false
    d.onStep?.('before-outcome', requestId)
    try {
      written = await d.ledger.recordOutcome(requestId, { state, answer: { httpStatus: answer.httpStatus, body: answer.body }, outcomeCode: codeOf(answer), taskId: answer.taskId, at: d.now() })
    } catch (err) {
      d.logger.error({ err, requestId }, 'writing a mutation outcome failed')
    }
    if (!written) {
      // the record says ambiguous, so the lease this answer may have stored is unproven too
      await d.leases.forget(campaignId).catch(() => undefined)
      // the ledger cannot vouch for this outcome (or another replica already turned it
      // ambiguous): the caller is told what the ledger will say
      log(req, requestId, 'ambiguous', started, { why: 'the outcome could not be written' })
      return { ...ambiguousAnswer(campaignId, requestId), replayed: false }
    }
    log(req, requestId, state, started, why !== undefined ? { why } : {})
    return { httpStatus: answer.httpStatus, body: answer.body, replayed: false }
  }
}

function codeOf (a: Applied): string | null {
  const b = a.body as { error?: { code?: unknown } } | null
  return typeof b?.error?.code === 'string' ? b.error.code : null
}
