// The commands of a generated history (fast-check model-based testing): mutations by two static
// controllers and two JWT identities sharing a controller id claim, on two campaigns, with faults
// mixed in; bursts of mutations fired at once over the replicas, with a campaign lock's session
// killed and the sweeps run while one is in flight; replays and id reuse, reconcile and
// acknowledge, late arrivals delivered, takeovers by a third controller; clocks that move, jump
// and skew, each replica's on its own, within the safety margin and far beyond it; retention
// runs and gateway restarts; the same mutations through the A2A front door (`POST /a2a/`) on the
// same campaigns, their answers read back as the REST twin's; a caller granted one campaign alone
// (docs/design.md#grants) mutating and reading both, every answer to it free of the other
// campaign's data. Each command predicts its answer
// from the model and the remote's truth where it can, checks the answer and the ledger, and
// updates the model.
import * as fc from 'fast-check'
import { expect } from 'vitest'
import type { JsonResponse } from '../helpers/http.js'
import { CONTROL_METHOD } from '../helpers/control.js'
import { ERROR_TABLE, isErrorCode } from '../../src/core/errors.js'
import { checkInvariants, deadlineLeftMs, readTruth, remoteLeaseOf, remoteState, type Fault, type Model, type ModelRecord, type ModelState, type Op } from './model.js'
import { ALL_CALLERS, CALLERS, CAMPAIGNS, CONTROLLER_OF, GRANTED, IDENTITY_OF, TIMING, granted, ownerWaitMs, type CallerName, type Campaign, type World } from './world.js'

/** the real side of a history: the world, plus the cancels the remote took late, and the tasks each front-door submission made its caller's */
export interface Real { w: World; lateCancels: Set<string>; takeoverEpochs: Map<Campaign, number>; frontTasks?: Map<string, CallerName> }

type Cmd = fc.AsyncCommand<Model, Real>

const PATH: Record<Op, string> = {
  claim: 'control/claim',
  renew: 'control/renew',
  release: 'control/release',
  submit: 'submissions',
  intervene: 'interventions',
  cancel: 'cancel'
}

const DAY_MS = 86_400_000
/** how far a deadline may sit from the ledger's clock at its send: PostgreSQL's clock and this process's, read a moment apart */
const CLOCK_READ_MS = 20

const codeOf = (res: JsonResponse): string => res.status < 300 ? String(res.status) : `${res.status} ${String(res.body?.error?.code)}`

function bodyFor (op: Op, id: string, n: number): Record<string, unknown> {
  switch (op) {
    case 'claim':
    case 'renew': return { requestId: id, ttlSeconds: n % 5 === 0 ? 15 : 60 + (n % 4) * 180 }
    case 'submit': return { requestId: id, parts: [{ kind: 'data', data: { step: n } }] }
    case 'intervene': return { requestId: id, intervention: { n } }
    default: return { requestId: id }
  }
}

function injectFault (w: World, op: Op, id: string, fault: Fault): void {
  const target = { rpcMethod: w.methods[op] }
  switch (fault) {
    case 'drop': return w.sim.inject(target, { kind: 'drop' }, 1)
    case 'hold':
    case 'hold-restart': return w.sim.inject(target, { kind: 'hold' }, 1)
    // well past the timeout (undici's timers are coarse above one second)
    case 'delay': return w.sim.inject(target, { kind: 'delay', ms: TIMING.mutationMs + 1000 }, 1)
    case 'status-502': return w.sim.inject(target, { kind: 'status', status: 502 }, 1)
    case 'internal-error': return w.sim.inject(target, { kind: 'rpc-error', code: -32603, message: 'internal' }, 1)
    case 'unknown-reason': return w.sim.inject(target, { kind: 'rpc-error', code: -32003, message: 'no', data: { reason: 'quota_exceeded' } }, 1)
    case 'policy': return w.sim.inject(target, { kind: 'rpc-error', code: -32003, message: 'no', data: { reason: 'policy_violation' } }, 1)
    case 'method-not-found': return w.sim.inject(target, { kind: 'rpc-error', code: -32601, message: 'Method not found' }, 1)
    case 'slow-read':
      // the reads a mutation makes between its lock and its insert: a lock session killed
      // meanwhile lets another replica's mutation of the campaign start first
      w.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'delay', ms: 400 }, 1)
      return w.sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 400 }, 1)
    case 'both': return w.sim.inject(target, {
      kind: 'status',
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ jsonrpc: '2.0', id, result: { accepted: true, released: true, lease: null }, error: { code: -32603, message: 'x' } })
    }, 1)
    default:
  }
}

/** the answer class a clean remote gives a request that reaches it under a good lease */
const SENT_CLASS: Record<Fault, string> = {
  none: 'ok',
  drop: '504 ambiguous_write',
  hold: '504 ambiguous_write',
  'hold-restart': 'cut',
  delay: '504 ambiguous_write',
  'status-502': '504 ambiguous_write',
  'internal-error': '504 ambiguous_write',
  'unknown-reason': '504 ambiguous_write',
  policy: '403 policy_rejected',
  both: '504 ambiguous_write',
  unreachable: '503 upstream_unavailable',
  'method-not-found': '503 capability_unavailable',
  'slow-read': 'ok'
}

/** one mutation: who sends it, through which replica; `front`: through the A2A front door (a cancel names its task) */
interface Shot { caller: CallerName; campaign: Campaign; op: Op; id: string; body: Record<string, unknown>; fault: Fault; replica: number; front?: { taskId?: string }; sentMono?: number }

/** the JSON-RPC params of the REST body `s.body` (docs/api.md#a2a-front-door): the pipeline gets the same params, so REST replays of it match */
function frontParams (s: Shot): Record<string, unknown> {
  const b = s.body
  switch (s.op) {
    case 'submit': return {
      configuration: { blocking: false },
      message: { role: 'user', kind: 'message', messageId: s.id, metadata: { argus_supervisor: { campaign_id: s.campaign } }, parts: b.parts }
    }
    case 'cancel': return { id: s.front?.taskId ?? 'task-nobody-has', metadata: { argus_supervisor: { request_id: s.id } } }
    default: return {
      campaign_id: s.campaign,
      request_id: s.id,
      ...(b.ttlSeconds !== undefined ? { ttl_seconds: b.ttlSeconds } : {}),
      ...(b.intervention !== undefined ? { intervention: b.intervention } : {})
    }
  }
}

/**
 * A mutation through `POST /a2a/`, its JSON-RPC answer read back as the REST twin's status and
 * body, so one judge checks both doors: an error's contract code (data.code) and that code's
 * status, a result as 200 (202 for a submission) with the task id where REST names one.
 */
async function frontPost (w: World, s: Shot): Promise<JsonResponse> {
  const res = await w.postTo(s.replica, s.caller, '/a2a/', { jsonrpc: '2.0', id: s.id, method: CONTROL_METHOD[s.op], params: frontParams(s) })
  expect(res.status, `POST /a2a/ ${s.op} ${s.id}: ${res.text}`).toBe(200)
  expect(res.body.id).toBe(s.id)
  const e = res.body.error as { code: number; data?: Record<string, unknown> } | undefined
  if (e !== undefined) {
    const code = e.data?.code
    expect(isErrorCode(code), `${s.op} ${s.id}: a front-door error carries a contract code: ${res.text}`).toBe(true)
    return { ...res, status: ERROR_TABLE[code as keyof typeof ERROR_TABLE].status, body: { error: e.data } }
  }
  const result = res.body.result as Record<string, unknown>
  const task = s.op === 'submit' || s.op === 'cancel' ? { taskId: result.id } : {}
  // a replay of a pruned record says so (docs/design.md#request-ids-are-forever)
  const sup = (result.metadata as { argus_supervisor?: { pruned?: boolean } } | undefined)?.argus_supervisor
  const pruned = sup?.pruned === true || result.pruned === true ? { pruned: true } : {}
  return { ...res, status: s.op === 'submit' ? 202 : 200, body: { ...result, ...task, ...pruned } }
}

/** the identity that holds a controller id, other than the caller's (a JWT caller's claim bound by another subject) */
function boundToOther (m: Model, caller: CallerName): boolean {
  const holder = m.bindings.get(CONTROLLER_OF[caller])
  return holder !== undefined && holder !== caller
}

/**
 * The class the model predicts for one mutation sent alone, or undefined where it cannot know
 * (the order is docs/design.md#campaign-control's: the clock, the controller binding, the
 * capability, the ambiguity block, the cancel's task, the lease).
 */
async function predict (m: Model, r: Real, s: Shot): Promise<string | undefined> {
  const { w } = r
  const { caller, campaign, op, fault } = s
  // grants come first: a caller without one to the campaign learns nothing more (docs/design.md#grants)
  if (!granted(caller, campaign)) return '403 campaign_forbidden'
  // a replica that measured its clock past the margin decides nothing (contract §13, docs/design.md#one-clock)
  if (m.clockPast.has(s.replica)) return '503 clock_skew'
  // one identity per controller id (contract §13, docs/design.md#controller-bindings): the first to mutate binds it
  if (boundToOther(m, caller)) return '403 controller_conflict'
  const blocker = m.blocker(campaign)
  const lease = remoteLeaseOf(w, campaign, caller, s.replica)
  const view = await w.gw.app.ledger.getLease(campaign)
  const remote = w.sim.control.lease(campaign)
  // the gateway's view agrees with the remote, or is unknown (then read fresh)
  const viewAgrees = view === undefined || !view.known || (remote === null ? view.lease === null : view.lease?.controllerId === remote.controller_id && view.lease.epoch === remote.epoch && view.lease.expiresAt === remote.expires_at)
  const bound = m.bound.get(campaign)
  const off = w.offsets(s.replica)
  const withinHalf = Math.abs(off.ledger) <= TIMING.leaseSafetyMs / 2 && Math.abs(off.remote) <= TIMING.leaseSafetyMs / 2
  const clean = withinHalf && viewAgrees
  // the gateway asks the remote first when its view is unknown, and for every cancel
  const readsFirst = op !== 'claim' && (op === 'cancel' || view === undefined || !view.known)
  // capability comes before the ambiguity block; without claim_control the gateway is an observer
  const marks = m.unavailable(s.replica)
  if (marks.has('claim') || marks.has(op)) return '503 capability_unavailable'
  // but for a claim, the remote's clock is measured (by a lease read where none is at hand) and
  // judged before the campaign's turn (docs/design.md#one-clock): a replica that stepped far from it
  // (SQLite: no other replica's measurement to use) refuses; anywhere else not near, who can say
  if (op !== 'claim' && m.remoteFar.has(s.replica)) return fault === 'unreachable' ? undefined : '503 clock_skew'
  if (op !== 'claim' && remoteState(w, s.replica) !== 'near') return undefined
  // a replica with no measurement at hand (restarted, its wall clock stepped) measures with a lease
  // read before the campaign's turn: with the remote unreachable that read fails first, 503
  if (op !== 'claim' && fault === 'unreachable' && (blocker !== undefined || op === 'cancel')) return undefined
  if (blocker !== undefined) return '409 ambiguity_unresolved'
  // a cancel checks its bound task (the ledger, then tasks/get) before it reads the lease it is
  // sent under (contract §13, "a cancel is sent on a lease read after its tasks/get"; docs/design.md#leases)
  if (op === 'cancel' && bound === undefined) return '409 no_bound_task'
  if (readsFirst && fault === 'unreachable') return '503 upstream_unavailable'
  if (op === 'cancel' && m.canceled.has(bound!)) return '409 task_not_cancelable'
  if (op === 'claim') return clean && (remote === null || lease.mine) ? SENT_CLASS[fault] : undefined
  if (clean && lease.mine && lease.usableMs > TIMING.leaseSafetyMs + 5000) return SENT_CLASS[fault]
  if (readsFirst && withinHalf && !lease.mine) return '409 lease_not_held'
  return undefined
}

interface JudgeContext {
  predicted: string | undefined
  /** the request ids a 409 ambiguity_unresolved may name */
  blockers: Set<string>
  /** the ledger's clock just before the send and just after the answer */
  ledgerFrom: number
  ledgerTo: number
  /** several mutations were in flight at once: which one went first is the ledger's to say */
  burst: boolean
}

/**
 * Judges one mutation's answer: the predicted class where the model knew it, and in every case
 * an answer consistent with the ledger record and the remote's truth; then adopts it into the
 * model.
 */
async function judge (m: Model, r: Real, s: Shot, res: JsonResponse | undefined, c: JudgeContext): Promise<void> {
  const { w } = r
  const { caller, campaign, op, id, fault } = s
  const got = res === undefined ? 'cut' : codeOf(res)
  const cls = got === '200' || got === '202' ? 'ok' : got
  m.count(`${c.burst ? 'burst' : s.front !== undefined ? 'front' : 'mutate'}:${op}`, `${cls}${fault === 'none' ? '' : ` (${fault})`}`)
  const { predicted } = c
  if (predicted !== undefined) {
    if (predicted === 'ok' && cls === '504 ambiguous_write') m.stats.ambiguousWithoutFault++ // a slow machine, not a safety matter
    else if (predicted === 'cut') expect(['cut', '503 shutting_down', '504 ambiguous_write'], `${op} ${id}`).toContain(cls)
    else expect(cls, `${op} ${id} by ${caller} via replica ${s.replica} under fault ${fault}: ${res?.text ?? 'no answer'}`).toBe(predicted)
  }
  if (cls === '409 ambiguity_unresolved') {
    const named = String(res!.body.error.requestId)
    expect(c.blockers.has(named), `${id} blocked by ${named}, which blocked nothing`).toBe(true)
    expect((await w.gw.app.ledger.get(named))?.campaignId).toBe(campaign)
  }
  // a clock past the margin refuses, and only then (the gateway's measurement agrees with the model's
  // clocks): the ledger's offset refuses everything, the remote's everything but a claim
  const remote = remoteState(w, s.replica)
  // (a campaign the caller has no grant to is refused first, below)
  if (m.clockPast.has(s.replica) && granted(caller, campaign)) expect(cls, `${id} via replica ${s.replica}: its clock is past the ledger's margin`).toBe('503 clock_skew')
  else if (cls === '503 clock_skew') expect(op !== 'claim' && (remote !== 'near' || m.remoteFar.has(s.replica)), `${id} (${op}) via replica ${s.replica}: 503 clock_skew, its offsets ${JSON.stringify(w.offsets(s.replica))}`).toBe(true)
  // a cancel decides on its own fresh lease read, which measures the remote's clock: never sent past the margin
  if (op === 'cancel' && remote === 'far') expect(readTruth(w).wireIds.includes(id), `cancel ${id} sent with the remote's clock far off (${w.offsets(s.replica).remote} ms)`).toBe(false)
  // the controller binding: another identity's claim is refused, nothing sent; the holder never is.
  // j1 and j2 share a display name: the identity tells them apart
  const binding = (await w.gw.app.ledger.listControllerBindings()).find((b) => b.controllerId === CONTROLLER_OF[caller])
  // a campaign the caller has no grant to is refused before anything else, its binding included
  if (cls === '403 campaign_forbidden') expect(granted(caller, campaign), `${id} by ${caller} on ${campaign}: ${cls}`).toBe(false)
  if (!granted(caller, campaign)) expect(cls, `${id} by ${caller} on ${campaign}, which it has no grant to`).toBe('403 campaign_forbidden')
  expectNoTrace(m, caller, res, `${op} ${id}`)
  if (!m.clockPast.has(s.replica) && granted(caller, campaign)) {
    expect(binding, `${id}: ${CONTROLLER_OF[caller]} is bound after a mutation got past the clock`).toBeDefined()
    expect(cls === '403 controller_conflict', `${id} by ${caller}: ${cls} while ${CONTROLLER_OF[caller]} is bound to ${binding!.identity}`).toBe(binding!.identity !== IDENTITY_OF[caller])
    if (!m.bindings.has(CONTROLLER_OF[caller]) && binding!.identity === IDENTITY_OF[caller]) m.bindings.set(CONTROLLER_OF[caller], caller)
  }

  // the ledger and the remote must agree with the answer
  const t = readTruth(w)
  const reached = t.wireIds.includes(id)
  const applied = t.appliedIds.has(id)
  const stored = await w.gw.app.ledger.get(id)
  const prior = m.records.get(id)
  if (stored === undefined || (prior?.state === 'unsent' && stored.state === 'rejected' && stored.outcomeCode === 'upstream_unavailable' && !reached)) {
    // refused before anything was written, or an unsent retry refused again before the send
    expect(reached, `${id} reached the remote without a record`).toBe(false)
    expect(cls, `${id}: no record, yet ${cls}`).not.toMatch(/^(ok|504 ambiguous_write)$/)
    if (!c.burst && cls === '409 no_bound_task') expect(m.bound.get(campaign)).toBeUndefined()
    if (!c.burst && cls === '409 task_not_cancelable') expect(m.canceled.has(m.bound.get(campaign)!)).toBe(true)
    return
  }
  // the deadline is written on the ledger's clock, whatever this replica's (docs/design.md#one-clock)
  if (prior === undefined || reached) {
    const wait = ownerWaitMs(op)
    expect(stored.deadline, `${id}'s deadline against the ledger's clock at its send`).toBeGreaterThanOrEqual(c.ledgerFrom + wait - CLOCK_READ_MS)
    expect(stored.deadline, `${id}'s deadline against the ledger's clock at its send`).toBeLessThanOrEqual(c.ledgerTo + wait + CLOCK_READ_MS)
  }
  const bound = m.bound.get(campaign)
  let state: ModelState
  switch (stored.state) {
    case 'applied':
      expect(applied, `${id} recorded applied, not applied at the remote`).toBe(true)
      expect(cls, `${id} recorded applied`).toMatch(/^(ok|502 lease_readback_mismatch|502 upstream_invalid_response)$/)
      state = 'applied'
      if (op === 'submit') m.bound.set(campaign, res!.body.taskId)
      if (op === 'cancel') {
        expect(res!.body.taskId, 'a cancel targets the bound task').toBe(bound)
        m.canceled.add(bound!)
      }
      break
    case 'rejected':
      expect(applied, `${id} recorded rejected, applied at the remote`).toBe(false)
      if (stored.outcomeCode === 'upstream_unavailable') {
        expect(reached, `${id} recorded as never sent, but it reached the remote`).toBe(false)
        state = 'unsent'
      } else {
        expect(reached).toBe(true)
        state = 'rejected'
      }
      expect(cls).toBe(`${res!.status} ${String(stored.outcomeCode)}`)
      if (stored.outcomeCode === 'capability_unavailable') m.unavailable(s.replica).add(op)
      break
    case 'ambiguous':
      expect(['504 ambiguous_write', 'cut', '503 shutting_down']).toContain(cls)
      state = 'ambiguous'
      break
    case 'pending':
      // PostgreSQL: a stopped replica's record waits for its deadline (no wholesale expiry at start)
      expect(w.kind === 'postgres' && fault === 'hold-restart', `${id} left pending after its answer (${cls})`).toBe(true)
      state = 'pending'
      break
    default:
      throw new Error(`${id} left ${stored.state} after its answer (${cls})`)
  }
  const rec: ModelRecord = prior ?? { id, campaign, caller, op, body: s.body, state, status: res?.status ?? 504, reconcileFailed: false, replica: s.replica, incarnation: w.incarnation(s.replica), sentMono: s.sentMono ?? w.monoNow(), sentMonoEnd: w.monoNow() }
  if (prior !== undefined && reached) {
    // an unsent record sent again: its wait counts from this send, on this replica
    rec.replica = s.replica
    rec.incarnation = w.incarnation(s.replica)
    rec.sentMono = s.sentMono ?? w.monoNow()
    rec.sentMonoEnd = w.monoNow()
  }
  if (s.front !== undefined) rec.front = true
  if (s.front !== undefined && op === 'submit' && state === 'applied') rec.taskId = String(res!.body.taskId)
  rec.state = state
  rec.status = res?.status ?? 504
  if (prior === undefined) {
    m.records.set(id, rec)
    m.order.push(id)
  }
}

/**
 * Sends one mutation (new, or the retry of an unsent one) alone and judges it: the predicted
 * class where the model can know it, and in every case an answer consistent with the ledger
 * record and the remote's truth.
 */
async function sendMutation (m: Model, r: Real, a: Omit<Shot, 'replica'>, via?: number): Promise<void> {
  const { w } = r
  const s: Shot = { ...a, replica: via ?? w.pickReplica(), sentMono: w.monoNow() }
  const { campaign, op, id, fault } = s
  const blocker = m.blocker(campaign)
  // a front-door cancel of a task its caller's own front-door submission did not make: the task
  // does not exist for them (-32001), before anything is written or sent (docs/api.md#a2a-front-door)
  if (s.front !== undefined && op === 'cancel' && (s.front.taskId === undefined || r.frontTasks?.get(s.front.taskId) !== s.caller)) {
    const wire = readTruth(w).wireIds.length
    const res = await frontPost(w, s)
    expectNoTrace(m, s.caller, res, `front cancel ${id}`)
    m.count('front:cancel', `${codeOf(res)} (not the caller's task)`)
    expect(codeOf(res), `front cancel ${id} of ${s.front.taskId ?? 'no task'} by ${s.caller}`).toBe('404 not_found')
    expect(await w.gw.app.ledger.get(id)).toBeUndefined()
    expect(readTruth(w).wireIds.length, 'a refused front-door cancel sent nothing').toBe(wire)
    return
  }
  const predicted = await predict(m, r, s)

  injectFault(w, op, id, fault)
  if (fault === 'unreachable') await w.fwd.shut()
  const ledgerFrom = w.ledgerNow()
  let res: JsonResponse | undefined
  try {
    const sending = s.front !== undefined ? frontPost(w, s) : w.postTo(s.replica, s.caller, `/v1/campaigns/${campaign}/${PATH[op]}`, s.body)
    if (fault === 'hold-restart') {
      // the gateway stops (drain, then close) while the remote holds the request
      let answered = false
      const answer = sending.catch(() => undefined).finally(() => { answered = true })
      const held = await until(() => answered || readTruth(w).heldIds.has(id), 3000)
      const restarted = held && !answered
      const restarting = restarted ? w.restart(s.replica) : Promise.resolve()
      res = await answer
      await restarting
      if (restarted) m.unavailable(s.replica).clear()
    } else {
      res = await sending
    }
  } finally {
    if (fault === 'unreachable') await w.fwd.reopen()
    w.sim.clearFaults()
  }
  // a late arrival lands (or is refused) before anything else is judged
  if (fault === 'delay') await until(() => w.sim.control.received().some((x) => x.requestId === id) || !w.sim.rpcCalls().some((c) => c.id === id), 5000)
  await judge(m, r, s, res, { predicted, blockers: new Set(blocker === undefined ? [] : [blocker.id]), ledgerFrom, ledgerTo: w.ledgerNow(), burst: false })
  if (s.front !== undefined) {
    if (op === 'submit' && res !== undefined && res.status === 202) (r.frontTasks ??= new Map()).set(String(res.body.taskId), s.caller)
    const rec = m.records.get(id)
    if (op === 'cancel' && rec !== undefined) rec.frontTask = s.front.taskId
  }
}

/** `holder`: whichever caller holds the remote lease now (else `fallback`) */
type Who = CallerName | 'holder'

function resolveWho (m: Model, w: World, who: Who, campaign: Campaign, fallback: CallerName): CallerName {
  if (who !== 'holder') return who
  const holder = w.sim.control.lease(campaign)?.controller_id
  // the JWT identities share one controller id: the one bound to it, if any
  if (holder === CONTROLLER_OF.j1) return m.bindings.get(holder) ?? 'j1'
  return ALL_CALLERS.find((c) => CONTROLLER_OF[c] === holder) ?? fallback
}

class MutateCmd implements Cmd {
  constructor (readonly who: Who, readonly campaign: Campaign, readonly op: Op, readonly fault: Fault, readonly fallback: CallerName = 'c1') {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const caller = resolveWho(m, r.w, this.who, this.campaign, this.fallback)
    const id = m.newId(this.op)
    await sendMutation(m, r, { caller, campaign: this.campaign, op: this.op, id, body: bodyFor(this.op, id, m.order.length), fault: this.fault })
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => `${this.who} ${this.op} ${this.campaign}${this.fault === 'none' ? '' : ` [${this.fault}]`}`
}

/**
 * The same mutation through the A2A front door (docs/api.md#a2a-front-door), on the same
 * campaigns as the REST ones, judged by the same rules against the same remote log: a
 * submission (message/send), a cancel (tasks/cancel of the campaign's bound task, which only the
 * caller whose front-door submission made it may cancel), claim, renew, release, intervene
 * (campaign/*).
 */
class FrontCmd implements Cmd {
  constructor (readonly who: Who, readonly campaign: Campaign, readonly op: Op, readonly fault: Fault, readonly fallback: CallerName = 'c1') {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const bound = m.bound.get(this.campaign)
    // the holder's cancel is sent by the caller whose front-door submission made the bound task, if one did
    const owner = this.op === 'cancel' && this.who === 'holder' && bound !== undefined ? r.frontTasks?.get(bound) : undefined
    const caller = owner ?? resolveWho(m, r.w, this.who, this.campaign, this.fallback)
    const id = m.newId(this.op)
    const front = this.op === 'cancel' ? { taskId: bound } : {}
    await sendMutation(m, r, { caller, campaign: this.campaign, op: this.op, id, body: bodyFor(this.op, id, m.order.length), fault: this.fault, front })
    m.stats.frontCommands++
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => `${this.who} ${this.op} ${this.campaign} via /a2a/${this.fault === 'none' ? '' : ` [${this.fault}]`}`
}

/** claim, submit and cancel through the front door in a row, by one caller: its own task, cancelled by the door's scoping rules */
class FrontFlowCmd implements Cmd {
  constructor (readonly campaign: Campaign, readonly fallback: CallerName) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const caller = resolveWho(m, r.w, 'holder', this.campaign, this.fallback)
    for (const op of ['claim', 'submit', 'cancel'] as const) {
      const id = m.newId(op)
      const front = op === 'cancel' ? { taskId: m.bound.get(this.campaign) } : {}
      await sendMutation(m, r, { caller, campaign: this.campaign, op, id, body: bodyFor(op, id, m.order.length), fault: 'none', front })
      m.stats.frontCommands++
      await checkInvariants(r.w, m, r.lateCancels)
    }
  }

  toString = (): string => `holder (or ${this.fallback}) claim, submit, cancel ${this.campaign} via /a2a/`
}

export interface BurstShot { who: Who; op: Op; campaign: Campaign }
/** what happens while a burst is in flight: a campaign lock's sessions killed after a delay or while the remote holds a request */
export type Kill = 'none' | 'soon' | 'held'

/**
 * Several mutations fired at once (several callers, one campaign mostly, over every replica in
 * turn), with one fault for the first request of one method, and while they are in flight the
 * campaign locks' sessions killed and every replica's sweep run. The model cannot predict
 * which goes first, so it adopts each answer from what the ledger and the remote's log say;
 * what it can predict it checks: a replica whose clock is past the margin refuses, another
 * identity's controller id is refused, and the invariants hold — at most one mutation of a
 * campaign in flight at the remote, whichever lock session died.
 */
class BurstCmd implements Cmd {
  constructor (readonly shots: BurstShot[], readonly fault: Fault, readonly faultShot: number, readonly kill: Kill, readonly killAfterMs: number, readonly sweepWhileHeld: boolean, readonly waiters = false, readonly holdToo = false) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    if (this.fault === 'slow-read') {
      // the holder's mutations on both replicas: a claim first when none of the callers holds the campaign
      const k = this.shots[0]!.campaign
      if (!ALL_CALLERS.some((c) => CONTROLLER_OF[c] === w.sim.control.lease(k)?.controller_id)) {
        const id = m.newId('claim')
        await sendMutation(m, r, { caller: 'c1', campaign: k, op: 'claim', id, body: bodyFor('claim', id, m.order.length), fault: 'none' })
      }
    }
    const shots: Shot[] = this.shots.map((b) => {
      // the holder's mutation where one of the callers holds the campaign, else a claim: bursts
      // that contend at the remote, not only at the gateway's refusals
      const held = w.sim.control.lease(b.campaign)
      const op: Op = b.who === 'holder' && !ALL_CALLERS.some((c) => CONTROLLER_OF[c] === held?.controller_id) ? 'claim' : b.op
      const id = m.newId(op)
      return { caller: resolveWho(m, w, b.who, b.campaign, 'c1'), campaign: b.campaign, op, id, body: bodyFor(op, id, m.order.length), fault: 'none', replica: w.pickReplica(), sentMono: w.monoNow() }
    })
    const faulted = shots[this.faultShot % shots.length]!
    faulted.fault = this.fault
    // bindController comes before the lock: a controller id bound before the burst refuses the other identity
    const predicted = shots.map((s) => m.clockPast.has(s.replica) ? '503 clock_skew' : boundToOther(m, s.caller) ? '403 controller_conflict' : undefined)
    const blockers = new Set<string>(shots.map((s) => s.id))
    for (const k of CAMPAIGNS) {
      const b = m.blocker(k)
      if (b !== undefined) blockers.add(b.id)
    }
    // slow reads: every mutation reads the lease first (the view unknown, as after any replica's
    // restart: forgetting is ledger-wide), so the first to hold the lock waits on a slow read
    if (this.fault === 'slow-read') for (const s of shots) await w.gw.app.ledger.markLeaseUnknown(s.campaign, w.replicaNow(0))
    // a hold takes the first request of each method the burst sends: whichever goes first is held
    if (this.fault === 'hold' || this.holdToo) for (const o of new Set(shots.map((s) => s.op))) injectFault(w, o, faulted.id, 'hold')
    if (this.fault !== 'hold') injectFault(w, faulted.op, faulted.id, this.fault)
    const ledgerFrom = w.ledgerNow()
    const answers: Array<JsonResponse | undefined> = []
    let done = 0
    const sending = shots.map(async (s, i) => {
      try {
        answers[i] = await w.postTo(s.replica, s.caller, `/v1/campaigns/${s.campaign}/${PATH[s.op]}`, s.body)
      } finally {
        done++
      }
    })
    let killed = 0
    const meanwhile = (async () => {
      if (this.kill === 'soon') await sleep(this.killAfterMs)
      else if (this.kill === 'held' || this.sweepWhileHeld) await until(() => done === shots.length || w.sim.held().some((h) => blockers.has(String(h.id))), 2000)
      if (this.kill !== 'none' && done < shots.length) killed = await w.killLockSessions({ waiters: this.waiters })
      if (this.sweepWhileHeld && done < shots.length) {
        // every replica's sweep, the skewed ones' included, while a mutation may be in flight:
        // none may turn a record ambiguous before its deadline on the ledger's clock
        for (const id of await w.sweep()) {
          expect((await w.gw.app.ledger.get(id))!.deadline, `the sweep turned ${id} ambiguous before its deadline`).toBeLessThan(w.ledgerNow())
        }
        m.stats.sweepsInFlight++
        if (m.clockPast.size > 0) m.stats.sweepsInFlightPast++
      }
    })()
    // every answer is in before anything is judged, whatever failed meanwhile
    const outcomes = await Promise.allSettled([meanwhile, ...sending])
    w.sim.clearFaults()
    for (const o of outcomes) if (o.status === 'rejected') throw o.reason
    m.stats.kills += killed
    m.stats.bursts++
    m.stats.burstShots += shots.length
    // a late arrival lands (or is refused) before anything else is judged
    if (this.fault === 'delay') {
      await until(() => {
        const t = readTruth(w)
        const handled = new Set(w.sim.control.received().map((x) => x.requestId))
        return shots.every((s) => s.op !== faulted.op || !t.wireIds.includes(s.id) || handled.has(s.id) || t.heldIds.has(s.id))
      }, 5000)
    }
    const ledgerTo = w.ledgerNow()
    // judged in the order they reached the remote (one at a time per campaign): a cancel targets
    // what a submission before it bound
    const wire = readTruth(w).wireIds
    const rank = (s: Shot): number => { const i = wire.indexOf(s.id); return i < 0 ? Infinity : i }
    const order = shots.map((s, i) => ({ s, i })).sort((a, b) => rank(a.s) - rank(b.s))
    for (const { s, i } of order) await judge(m, r, s, answers[i], { predicted: predicted[i], blockers, ledgerFrom, ledgerTo, burst: true })
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `burst [${this.shots.map((b) => `${b.who} ${b.op} ${b.campaign}`).join(', ')}]${this.fault === 'none' ? '' : ` [${this.fault} on #${this.faultShot % this.shots.length}]`}${this.kill === 'none' ? '' : ` [kill ${this.kill === 'soon' ? `after ${this.killAfterMs} ms` : 'while held'}${this.waiters ? ', waiters too' : ''}]`}${this.holdToo ? ' [hold]' : ''}${this.sweepWhileHeld ? ' [sweep while held]' : ''}`
}

/** what a pruned record replays (docs/design.md#request-ids-are-forever): its final state */
function prunedStatus (rec: ModelRecord, resolved: boolean, state: string): number {
  if (resolved) return 200
  if (state === 'applied') return rec.op === 'submit' ? 202 : 200
  return rec.status
}

/** the same request id again: as sent, by another caller, or with other params */
class ReuseCmd implements Cmd {
  constructor (readonly pick: number, readonly how: 'same' | 'other-caller' | 'other-params') {}
  check = (m: Model): boolean => m.order.length > 0
  async run (m: Model, r: Real): Promise<void> {
    // another caller's reuse: a JWT identity's record (its twin shares the display name) or a
    // front-door submission (re-sent through the door) one time in three each, where there is one
    const kind = this.pick % 3
    const pool = this.how !== 'other-caller'
      ? m.order
      : m.order.filter((id) => { const x = m.records.get(id)!; return kind === 0 ? x.caller[0] === 'j' : kind === 1 ? x.front === true && x.op === 'submit' : true })
    const from = pool.length > 0 ? pool : m.order
    const rec = m.records.get(from[this.pick % from.length]!)!
    const { w } = r
    const path = `/v1/campaigns/${rec.campaign}/${PATH[rec.op]}`
    // a front-door cancel's params name its task, which REST cannot: its same-request reuse goes through the front door
    const front = rec.frontTask !== undefined && this.how === 'same'
    const frontShot = (): Shot => ({ caller: rec.caller, campaign: rec.campaign, op: rec.op, id: rec.id, body: rec.body, fault: 'none', replica: w.pickReplica(), front: { taskId: rec.frontTask } })
    if (rec.state === 'pending' && this.how === 'same') {
      const res = front ? await frontPost(w, frontShot()) : await w.post(rec.caller, path, rec.body)
      m.count('reuse:same', codeOf(res))
      expect(codeOf(res)).toBe('409 request_in_flight')
    } else if (this.how === 'same' && rec.state === 'unsent') {
      // nothing of it ever left: it runs again as new (pruned or not)
      await sendMutation(m, r, { caller: rec.caller, campaign: rec.campaign, op: rec.op, id: rec.id, body: rec.body, fault: 'none', ...(front ? { front: { taskId: rec.frontTask } } : {}) })
    } else {
      const wire = readTruth(w).wireIds.length
      const stored = (await w.gw.app.ledger.get(rec.id))!
      const pruned = stored.prunedAt !== null
      // another identity: j1 and j2 share one display name, and are still two callers
      const caller: CallerName = this.how === 'other-caller' ? OTHER[rec.caller] : rec.caller
      const other: Record<Op, Record<string, unknown>> = {
        intervene: { intervention: { other: true } },
        submit: { parts: [{ kind: 'text', text: 'other' }] },
        claim: { ttlSeconds: 3600 },
        renew: { ttlSeconds: 3600 },
        // no other params exist: an unknown field, refused by the strict schema before the id is looked at
        release: { note: 'x' },
        cancel: { note: 'x' }
      }
      const body = this.how === 'other-params' ? { ...rec.body, ...other[rec.op] } : rec.body
      // another identity re-sending a front-door submission's message id: it gets nothing of it
      const frontOther = this.how === 'other-caller' && rec.front === true && rec.op === 'submit'
      const res = front ? await frontPost(w, frontShot()) : frontOther ? await frontPost(w, { ...frontShot(), caller }) : await w.post(caller, path, body)
      m.count(`reuse:${this.how}${front || frontOther ? ' via /a2a/' : ''}${pruned ? ' (pruned)' : ''}${caller[0] === 'j' ? ' (one display name)' : ''}`, codeOf(res))
      if (this.how === 'other-caller') {
        expect(codeOf(res), `${rec.id} of ${rec.caller} re-sent by ${caller}${frontOther ? ' via /a2a/' : ''}`).toBe('409 idempotency_key_conflict')
        if (!frontOther) expect(res.headers['idempotent-replayed']).toBeUndefined()
        // and the record shows it nothing but the summary
        const view = await w.get(caller, `/v1/campaigns/${rec.campaign}/requests/${rec.id}`)
        expect(view.status).toBe(200)
        expect(view.body.params, `${rec.id}'s params shown to ${caller}`).toBeUndefined()
        expect(view.body.campaignId, `${rec.id}'s details shown to ${caller}`).toBeUndefined()
        // the task the owner's front-door submission made does not exist for the other identity
        if (rec.taskId !== undefined) {
          const got = await w.post(caller, '/a2a/', { jsonrpc: '2.0', id: `get-${rec.id}`, method: 'tasks/get', params: { id: rec.taskId } })
          expect(got.body.error?.code, `${caller} read ${rec.caller}'s task ${rec.taskId}: ${got.text}`).toBe(-32001)
        }
      } else if (this.how === 'other-params') expect(codeOf(res)).toBe(rec.op === 'release' || rec.op === 'cancel' ? '400 invalid_request' : '422 idempotency_key_mismatch')
      else if (pruned) {
        // what stays of a pruned record replays its final state, never sends (contract §13, docs/design.md#request-ids-are-forever)
        if (!front) expect(res.headers['idempotent-replayed']).toBe('true')
        m.stats.prunedReplays++
        expect(res.status, `${rec.id} (pruned) replayed`).toBe(prunedStatus(rec, stored.resolution !== null, stored.state))
        if (res.status < 300) expect(res.body.pruned, `${rec.id} (pruned) replayed: ${res.text}`).toBe(true)
      } else {
        // a replay: the stored answer, nothing sent
        expect(res.status, `${rec.id} replayed`).toBe(rec.status)
        if (!front) expect(res.headers['idempotent-replayed']).toBe('true')
      }
      expect(readTruth(w).wireIds.length, 'a reuse sent nothing').toBe(wire)
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `reuse #${this.pick} ${this.how}`
}

class ReconcileCmd implements Cmd {
  constructor (readonly pick: number, readonly failing: boolean, readonly via: number = 0) {}
  check = (m: Model): boolean => m.order.length > 0
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const rec = pickAmbiguousFirst(m, this.pick)
    const t = readTruth(w)
    const applied = t.appliedIds.has(rec.id)
    const stored = (await w.gw.app.ledger.get(rec.id))!
    // the deadline as the ledger's clock reads it, whatever the clock of the replica asked (contract §13),
    // and the owner's wait on the asked replica's monotonic clock since the send or its start (§14, docs/design.md#one-clock)
    const replica = this.via % w.replicas.length
    const left = deadlineLeftMs(w, rec, stored.deadline, replica)
    if (this.failing) w.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
    const res = await w.postTo(replica, rec.caller, `/v1/campaigns/${rec.campaign}/requests/${rec.id}/reconcile`)
    w.sim.clearFaults()
    m.count('reconcile', codeOf(res))
    if (rec.state === 'pending') {
      expect(codeOf(res)).toBe('409 request_in_flight')
    } else if (rec.state !== 'ambiguous') {
      expect(res.status).toBe(200)
      expect(res.body.state).toBe(rec.state === 'unsent' ? 'rejected' : rec.state)
    } else if (this.failing) {
      expect(codeOf(res)).toBe('503 upstream_unavailable')
      rec.reconcileFailed = true
    } else if (applied) {
      expect(codeOf(res), `reconcile ${rec.id}`).toBe('200')
      expect(res.body.state).toBe('applied')
      settle(m, rec, 'applied', res.body.taskId ?? null)
      // a front-door submission settled by a reconcile makes its task its sender's at once, as a
      // returned send does (CONTRACT §14, docs/design.md#front-door): that sender may now cancel it
      if (rec.front === true && rec.op === 'submit' && typeof res.body.taskId === 'string') {
        rec.taskId = res.body.taskId
        ;(r.frontTasks ??= new Map()).set(res.body.taskId, rec.caller)
      }
    } else if (left.lo < 1000 && left.hi > -1000) {
      expect(['409 reconcile_too_early', '200']).toContain(codeOf(res))
      if (res.status === 200) settle(m, rec, 'not_applied', null)
    } else if (left.lo > 0) {
      expect(codeOf(res), `reconcile ${rec.id} through replica ${replica} ${left.lo}–${left.hi} ms before its deadline (the ledger's clock and the replica's monotonic one)`).toBe('409 reconcile_too_early')
      // seconds to the deadline, counted by the gateway a moment after `left` was
      const retryAfter = Number(res.headers['retry-after'])
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil(left.hi / 1000))
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil(left.lo / 1000) - 1)
    } else {
      expect(codeOf(res), `reconcile ${rec.id} after its deadline`).toBe('200')
      expect(res.body.state).toBe('not_applied')
      settle(m, rec, 'not_applied', null)
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `reconcile #${this.pick} via ${this.via}${this.failing ? ' [request_status fails]' : ''}`
}

/** an admin's acknowledgement, always of what the remote shows (an operator who looked) */
class AcknowledgeCmd implements Cmd {
  constructor (readonly pick: number) {}
  check = (m: Model): boolean => m.order.length > 0
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const rec = pickAmbiguousFirst(m, this.pick)
    const t = readTruth(w)
    const applied = t.appliedIds.has(rec.id)
    const resolution = applied ? 'assume_applied' : 'assume_not_applied'
    const stored = (await w.gw.app.ledger.get(rec.id))!
    const left = deadlineLeftMs(w, rec, stored.deadline, w.nextReplica())
    const remote = w.sim.control.lease(rec.campaign)
    const res = await w.post('admin', `/v1/campaigns/${rec.campaign}/requests/${rec.id}/acknowledge`, { resolution, note: 'checked on the remote' })
    m.count('acknowledge', `${codeOf(res)} (${resolution})`)
    if (rec.state === 'pending') {
      expect(codeOf(res)).toBe('409 request_in_flight')
    } else if (rec.state !== 'ambiguous' || !rec.reconcileFailed) {
      expect(codeOf(res)).toBe('409 acknowledge_unsafe')
    } else if (applied) {
      expect(codeOf(res)).toBe('200')
      settle(m, rec, 'applied', null)
    } else {
      // not applied (yet): only a deadline passed, or for an epoch-bearing record other than a
      // cancel a higher epoch at the remote, makes it safe
      // (a cancel needs both: the remote's tasks/cancel ignores the epoch it carries)
      const higher = stored.controllerEpoch !== null && remote !== null && remote.epoch > stored.controllerEpoch
      const past = left.hi <= 0
      const safe = rec.op === 'claim' ? past : rec.op === 'cancel' ? higher && past : higher
      if (left.lo < 1000 && left.hi > -1000 && (rec.op === 'cancel' || rec.op === 'claim')) {
        expect(res.status === 200 || res.status === 409).toBe(true)
      } else if (safe) {
        expect(codeOf(res), `acknowledge ${rec.id} (${rec.op})`).toBe('200')
      } else {
        expect(['409 acknowledge_unsafe', '409 reconcile_too_early'], `acknowledge ${rec.id} (${rec.op}) must be refused`).toContain(codeOf(res))
      }
      if (res.status === 200) {
        settle(m, rec, 'not_applied', null)
        // the remote now refuses a late arrival of it; the history may still deliver one
      }
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `acknowledge #${this.pick}`
}

function pickAmbiguousFirst (m: Model, pick: number): ModelRecord {
  const open = m.order.filter((id) => m.records.get(id)!.state === 'ambiguous')
  const from = open.length > 0 && pick % 4 !== 0 ? open : m.order
  return m.records.get(from[pick % from.length]!)!
}

function settle (m: Model, rec: ModelRecord, to: 'applied' | 'not_applied', taskId: string | null): void {
  rec.state = to
  rec.status = 200
  if (to === 'applied' && rec.op === 'submit') m.bound.set(rec.campaign, taskId ?? undefined)
  if (to === 'applied' && rec.op === 'cancel') {
    const target = m.bound.get(rec.campaign)
    if (target !== undefined) m.canceled.add(target)
  }
}

/** the remote's handler finally reaches the requests it holds (before their deadlines) */
class DeliverCmd implements Cmd {
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const before = readTruth(w)
    const n = w.sim.deliverHeld()
    const after = readTruth(w)
    for (const a of after.applied) {
      if (!before.appliedIds.has(a.requestId) && a.operation === 'cancel') {
        r.lateCancels.add(a.requestId)
        m.stats.lateCancels++
        const rec = m.records.get(a.requestId)
        const target = rec !== undefined ? m.bound.get(rec.campaign) : undefined
        if (target !== undefined) m.canceled.add(target)
      }
    }
    m.count('deliver-held', String(n))
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => 'deliver held requests'
}

/** a third controller takes the campaign over at the remote */
class TakeoverCmd implements Cmd {
  constructor (readonly campaign: Campaign) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    // above every epoch the remote has issued for the campaign: claims and earlier takeovers
    const epochs = w.sim.control.applied().filter((a) => a.campaignId === this.campaign).map((a) => a.currentEpoch + 1)
    const epoch = Math.max(1000, r.takeoverEpochs.get(this.campaign) ?? 0, w.sim.control.lease(this.campaign)?.epoch ?? 0, ...epochs) + 1
    r.takeoverEpochs.set(this.campaign, epoch)
    w.sim.control.setLease(this.campaign, { controller_id: 'ctl-ext', epoch, expires_at: Math.floor(w.sim.control.now() / 1000) + 60 })
    m.count('takeover', 'ok')
  }

  toString = (): string => `takeover ${this.campaign}`
}

/** time passes on every clock; the replicas' sweeps run as their timers would */
async function advance (m: Model, r: Real, ms: number): Promise<void> {
  const { w } = r
  await dropOverdue(m, w, w.ledgerNow() + ms, w.monoNow() + ms)
  w.advance(ms)
  // pending records past their deadline, on the ledger's clock, whichever replica's sweep ran
  for (const id of await w.sweep()) {
    expect((await w.gw.app.ledger.get(id))!.deadline, `the sweep turned ${id} ambiguous before its deadline`).toBeLessThan(w.ledgerNow())
  }
  for (const rec of m.records.values()) {
    if (rec.state === 'pending' && (await w.gw.app.ledger.get(rec.id))?.state === 'ambiguous') rec.state = 'ambiguous'
  }
}

/** time passes on every clock (a jump when large); held requests past their deadline are lost */
class AdvanceCmd implements Cmd {
  constructor (readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    await advance(m, r, this.ms)
    m.count('advance', String(this.ms))
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => `advance ${this.ms} ms`
}

/**
 * Before a replica's clock is set `skew` off the ledger's: time passes first on every clock if
 * the replica's would otherwise run behind the real one (World.aheadOfReal says why)
 */
async function keepAheadOfReal (m: Model, r: Real, skew: number): Promise<void> {
  const behind = -(r.w.aheadOfReal().ledger + skew)
  if (behind > 0) await advance(m, r, behind + 1000)
}

/** the half margin: skews within it leave every prediction as it is */
const HALF = TIMING.leaseSafetyMs / 2

/**
 * One clock moves alone, kept within half the safety margin of the ledger's and the remote's
 * (a replica's clock past the margin comes back within it): the remote's, or one replica's —
 * which then measures its offset, as its 30 s timer would.
 */
class SkewCmd implements Cmd {
  constructor (readonly target: 'remote' | 'replica', readonly replica: number, readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    // SQLite: a replica that stepped far from the remote is put right first (NTP)
    if (m.remoteFar.size > 0) return await new StepCmd(0, 0).run(m, r)
    const s = w.skews()
    // SQLite: the replica's clock is its ledger's, so moving it is moving the remote the other way
    const remote = this.target === 'remote' || w.kind === 'sqlite'
    const ms = this.target === 'remote' ? this.ms : -this.ms
    let move: number
    if (remote) {
      let lo = -HALF
      let hi = HALF
      for (let i = 0; i < w.replicas.length; i++) {
        if (m.clockPast.has(i)) continue
        lo = Math.max(lo, s.replicas[i]! - HALF)
        hi = Math.min(hi, s.replicas[i]! + HALF)
      }
      move = Math.max(lo, Math.min(hi, s.remote + ms)) - s.remote
      // the remote's clock only moves forward: moving it back moves the ledger's forward
      if (move < 0) await dropOverdue(m, w, w.ledgerNow() - move)
      w.moveRemote(move)
    } else {
      // a replica past the margin first: NTP puts it right
      const i = m.clockPast.size > 0 ? [...m.clockPast][0]! : this.replica % w.replicas.length
      const target = Math.max(-HALF, s.remote - HALF, Math.min(HALF, s.remote + HALF, s.replicas[i]! + ms))
      await keepAheadOfReal(m, r, target)
      move = target - w.skews().replicas[i]!
      w.moveReplica(i, move)
      // the replica measures its offset to the ledger now (moving the remote changes none)
      const offset = await w.measure(i)
      m.clockPast.delete(i)
      // a measurement may understate an offset, never invent one
      expect(Math.abs(offset), `replica ${i} measured the ledger ${offset} ms off`).toBeLessThanOrEqual(Math.abs(w.offsets(i).ledger) + CLOCK_READ_MS)
      expect(w.replicas[i]!.app.control.clocks.status().ok).toBe(true)
    }
    m.count('skew', remote ? 'remote' : 'replica')
  }

  toString = (): string => `skew ${this.target === 'remote' ? 'the remote' : `replica ${this.replica}`} ${this.ms} ms`
}

/**
 * PostgreSQL: one replica's clock jumps past the safety margin (the issue's finding: a replica
 * 60 s ahead) and the replica measures it, as its 30 s timer would: from then on it refuses every
 * mutation with 503 clock_skew, while its sweeps and reconciles, judged on the ledger's clock,
 * turn nothing ambiguous early and settle nothing early.
 */
class ClockJumpCmd implements Cmd {
  constructor (readonly replica: number, readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    // a replica already past the margin is put right instead (NTP), and measures it
    const back = m.clockPast.size > 0
    const i = back ? [...m.clockPast][0]! : this.replica % w.replicas.length
    const to = back ? 0 : this.ms
    await keepAheadOfReal(m, r, to)
    w.moveReplica(i, to - w.skews().replicas[i]!)
    const offset = await w.measure(i)
    if (back) {
      expect(Math.abs(offset), `replica ${i} put right measured ${offset} ms`).toBeLessThanOrEqual(Math.abs(w.offsets(i).ledger) + CLOCK_READ_MS)
      m.clockPast.delete(i)
    } else {
      expect(Math.abs(offset), `replica ${i} measured a ${this.ms} ms jump as ${offset} ms`).toBeGreaterThan(TIMING.leaseSafetyMs)
      m.clockPast.add(i)
    }
    expect(w.replicas[i]!.app.control.clocks.status().ok).toBe(back)
    m.count('clock-jump', back ? 'put right' : String(this.ms))
  }

  toString = (): string => `replica ${this.replica}'s clock jumps ${this.ms} ms (or the one past the margin is put right)`
}

/**
 * A replica's wall clock steps, its monotonic clock does not (docs/design.md#one-clock): 0.7 s
 * either way (under half the margin: it measures again, nothing else changes), or 6 s or 15 s
 * either way (past it); a replica already past is put right instead (NTP). Nothing is measured
 * here: the replica must notice the step itself at its next mutation, or refuse as it should. On
 * SQLite the ledger's clock is the replica's and steps with it, so a step there is a jump of every
 * deadline's clock: nothing may settle early for it, on reconcile or sweep.
 */
class StepCmd implements Cmd {
  constructor (readonly replica: number, readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const pg = w.kind === 'postgres'
    const i = this.replica % w.replicas.length
    const back = pg ? m.clockPast.has(i) : m.remoteFar.has(i)
    // put right: back to the ledger's clock (PostgreSQL), to the remote's (SQLite: its ledger's is its own)
    const moveOf = (): number => back ? (pg ? -w.skews().replicas[i]! : w.offsets(i).remote) : this.ms
    const ahead = w.aheadOfReal().replicas[i]! + moveOf()
    if (ahead < 0) await advance(m, r, -ahead + 1000)
    const move = moveOf()
    w.moveReplica(i, move)
    if (pg) {
      const off = Math.abs(w.offsets(i).ledger)
      if (off > TIMING.leaseSafetyMs + 100) m.clockPast.add(i)
      else m.clockPast.delete(i)
    } else {
      if (remoteState(w, i) === 'far') m.remoteFar.add(i)
      else m.remoteFar.delete(i)
    }
    m.stats.clockSteps++
    m.count('clock-step', back ? 'put right' : String(this.ms))
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `replica ${this.replica}'s wall clock steps ${this.ms} ms (or the one past the margin is put right)`
}

/**
 * SQLite: the gateway restarts with its wall clock — its ledger's — jumped ahead (20 s or 40 s)
 * while it was down, the remote perhaps still holding its requests: it measures nothing before it
 * mutates, settles nothing early on the jumped clock, and refuses every mutation but a claim
 * until its clock is put right (docs/design.md#one-clock).
 */
class RestartJumpCmd implements Cmd {
  constructor (readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    if (m.remoteFar.has(0)) return await new StepCmd(0, 0).run(m, r)
    w.moveReplica(0, this.ms)
    await w.restart(0)
    m.unavailable(0).clear()
    if (remoteState(w, 0) === 'far') m.remoteFar.add(0)
    m.stats.jumpedRestarts++
    m.count('restart-jumped', String(this.ms))
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `restart with the clock ${this.ms} ms ahead`
}

/**
 * The remote's clock runs ahead past the margin (6 s or 10 s) and a replica restarts, so it has
 * no measurement of its own: the holder's intervention, cancel (of the bound task) and claim go
 * through that replica. On SQLite it measures the remote with a lease read and refuses all but the
 * claim, 503 clock_skew; on PostgreSQL it may use the other replica's measurement (taken before the
 * remote moved, no older than 30 s), except for a cancel, which decides on its own fresh read and
 * is never sent. Then the remote is put right (every other clock moves on) and, on PostgreSQL, the
 * ledger's shared measurements age out (31 s pass).
 */
class RemoteAheadCmd implements Cmd {
  constructor (readonly ms: number, readonly campaign: Campaign) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    if (m.clockPast.size > 0 || m.remoteFar.size > 0) return await new StepCmd([...m.clockPast, ...m.remoteFar][0]!, 0).run(m, r)
    w.moveRemote(this.ms)
    const i = w.nextReplica()
    await w.restart(i)
    m.unavailable(i).clear()
    // SQLite: nobody else's measurement to use, so this one measures afresh: far
    if (w.kind === 'sqlite') m.remoteFar.add(i)
    for (const op of ['intervene', 'cancel', 'claim'] as const) {
      if (op === 'cancel' && m.bound.get(this.campaign) === undefined) continue
      const caller = resolveWho(m, w, 'holder', this.campaign, 'c1')
      const id = m.newId(op)
      await sendMutation(m, r, { caller, campaign: this.campaign, op, id, body: bodyFor(op, id, m.order.length), fault: 'none' }, i)
      await checkInvariants(w, m, r.lateCancels)
    }
    // put right: the remote's clock only moves forward, so every other clock does
    await dropOverdue(m, w, w.ledgerNow() + this.ms)
    w.moveRemote(-this.ms)
    m.remoteFar.delete(i)
    if (w.kind === 'postgres') await advance(m, r, 31_000)
    m.stats.remoteAhead++
    m.count('remote-ahead', String(this.ms))
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `the remote runs ${this.ms} ms ahead; a replica restarts and mutates ${this.campaign}; put right`
}

/** what of a campaign an answer must not show: its id, its records' ids, its tasks */
function tracesOf (m: Model, campaign: Campaign): string[] {
  const out: string[] = [campaign]
  for (const r of m.records.values()) {
    if (r.campaign !== campaign) continue
    out.push(r.id)
    if (r.taskId !== undefined) out.push(r.taskId)
  }
  const bound = m.bound.get(campaign)
  if (bound !== undefined) out.push(bound)
  return out
}

/** an answer to a caller shows nothing of a campaign it has no grant to read (docs/design.md#grants) */
function expectNoTrace (m: Model, who: CallerName | 'admin', res: JsonResponse | undefined, what: string): void {
  if (who === 'admin' || res === undefined) return
  for (const k of CAMPAIGNS) {
    if (granted(who, k)) continue
    for (const t of tracesOf(m, k)) expect(res.text.includes(t), `${what}: the answer to ${who} shows ${t} of ${k}: ${res.text.slice(0, 300)}`).toBe(false)
  }
}

/**
 * g1, granted camp-a alone, sends a mutation to either campaign, through REST or the front door:
 * camp-a's answers as any caller's, camp-b's 403 campaign_forbidden (the door's -32010) with
 * nothing sent or written; the invariants check the remote's log for it after every command
 */
class GrantedMutateCmd implements Cmd {
  constructor (readonly campaign: Campaign, readonly op: Op, readonly fault: Fault, readonly viaFront: boolean) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const id = m.newId(this.op)
    const front = this.viaFront ? (this.op === 'cancel' ? { taskId: m.bound.get(this.campaign) } : {}) : undefined
    // a fault only where the mutation may leave: a refused one must not arm one for the next command
    const fault = granted(GRANTED, this.campaign) ? this.fault : 'none'
    await sendMutation(m, r, { caller: GRANTED, campaign: this.campaign, op: this.op, id, body: bodyFor(this.op, id, m.order.length), fault, ...(front !== undefined ? { front } : {}) })
    if (this.viaFront) m.stats.frontCommands++
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => `${GRANTED} ${this.op} ${this.campaign}${this.viaFront ? ' via /a2a/' : ''}${this.fault === 'none' ? '' : ` [${this.fault}]`}`
}

type GrantedRead = 'control' | 'records' | 'record' | 'task' | 'list' | 'front-control' | 'front-task' | 'front-list'

/**
 * g1 reads either campaign: its lease, its records, one record, its bound task, the campaign list
 * (REST and the front door's): camp-a's answer as any caller's, camp-b's a refusal that sent nothing
 * (the list: camp-a alone) — and no answer shows anything of camp-b
 */
class GrantedReadCmd implements Cmd {
  constructor (readonly campaign: Campaign, readonly what: GrantedRead, readonly pick: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const k = this.campaign
    const may = granted(GRANTED, k)
    const calls = w.sim.rpcCalls().length
    const front = async (method: string, params: unknown): Promise<JsonResponse> => await w.post(GRANTED, '/a2a/', { jsonrpc: '2.0', id: m.newId('claim'), method, params })
    const ids = m.order.filter((id) => m.records.get(id)!.campaign === k)
    const ownTask = [...r.frontTasks ?? []].find(([, c]) => c === GRANTED)?.[0]
    let res: JsonResponse
    let cls: string
    switch (this.what) {
      case 'control': res = await w.get(GRANTED, `/v1/campaigns/${k}/control`); cls = codeOf(res); break
      case 'records': res = await w.get(GRANTED, `/v1/campaigns/${k}/requests`); cls = codeOf(res); break
      case 'record': res = await w.get(GRANTED, `/v1/campaigns/${k}/requests/${ids.length > 0 ? ids[this.pick % ids.length]! : 'claim-00000-nothing'}`); cls = codeOf(res); break
      case 'task': res = await w.get(GRANTED, `/v1/tasks/${m.bound.get(k) ?? 'task-none-of-these'}`); cls = codeOf(res); break
      case 'list': res = await w.get(GRANTED, '/v1/campaigns'); cls = codeOf(res); break
      case 'front-control': res = await front('campaign/read_control', { campaign_id: k }); cls = String(res.body.error?.data?.code ?? 'ok'); break
      // its own task where it has one (camp-a: its sends are there alone), else the campaign's bound task
      case 'front-task': res = await front('tasks/get', { id: (may ? ownTask : undefined) ?? m.bound.get(k) ?? 'task-none-of-these' }); cls = String(res.body.error?.data?.code ?? 'ok'); break
      case 'front-list': res = await front('message/send', { configuration: { blocking: true, acceptedOutputModes: ['application/json'] }, message: { role: 'user', kind: 'message', messageId: m.newId('claim'), extensions: ['urn:openoperator:argus-supervisor:v1'], metadata: { 'urn:openoperator:argus-supervisor:v1': { operation: 'campaign.list' } }, parts: [{ kind: 'data', data: { params: {} } }] } }); cls = String(res.body.error?.data?.code ?? 'ok'); break
    }
    m.count(`granted-read:${this.what}`, `${k}: ${cls}`)
    expectNoTrace(m, GRANTED, res, `${this.what} of ${k}`)
    if (this.what === 'list' || this.what === 'front-list') {
      const listed = this.what === 'list' ? res.body?.result?.campaigns : res.body?.result?.parts?.[0]?.data?.campaigns
      if (listed !== undefined) expect((listed as Array<{ campaign_id: string }>).map((c) => c.campaign_id), 'the campaign list shown to g1').toEqual(CAMPAIGNS.filter((c) => granted(GRANTED, c)))
    } else if (this.what === 'task' && m.bound.get(k) === undefined) {
      // no task the gateway can tie to a campaign: an all-campaigns grant's alone, and g1's is not
      expect(cls, `an untied task read by ${GRANTED}`).toBe('403 campaign_forbidden')
      expect(w.sim.rpcCalls().length, `an untied task read by ${GRANTED} sent nothing`).toBe(calls)
    } else if (!may) {
      // refused before anything was sent: the front door's task read answers as for a task that does not exist
      expect(cls, `${this.what} of ${k} by ${GRANTED}: ${res.text.slice(0, 300)}`).toBe(this.what === 'front-task' ? 'not_found' : this.what === 'front-control' ? 'campaign_forbidden' : '403 campaign_forbidden')
      expect(w.sim.rpcCalls().length, `${this.what} of ${k} by ${GRANTED} sent nothing`).toBe(calls)
    } else {
      expect(cls, `${this.what} of ${k} by ${GRANTED}`).not.toMatch(/campaign_forbidden/)
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `${GRANTED} reads ${this.what} of ${this.campaign}`
}

/** campaign ids REST refuses (docs/api.md): the front door refuses them too, -32602, nothing written or sent */
const BAD_CAMPAIGN_IDS = ['camp a', 'camp/a', '../camp-a', 'camp\u200ba', 'c'.repeat(300), '']

class FrontBadIdCmd implements Cmd {
  constructor (readonly bad: number, readonly op: 'claim' | 'intervene' | 'submit' | 'read', readonly who: CallerName) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const campaignId = BAD_CAMPAIGN_IDS[this.bad % BAD_CAMPAIGN_IDS.length]!
    const id = m.newId(this.op === 'read' ? 'claim' : this.op)
    const method = this.op === 'read' ? 'campaign/read_control' : CONTROL_METHOD[this.op]
    const params = this.op === 'submit'
      ? { configuration: { blocking: false }, message: { role: 'user', kind: 'message', messageId: id, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text: 'x' }] } }
      : { campaign_id: campaignId, ...(this.op === 'read' ? {} : { request_id: id }), ...(this.op === 'claim' ? { ttl_seconds: 60 } : {}), ...(this.op === 'intervene' ? { intervention: { n: 1 } } : {}) }
    const calls = w.sim.rpcCalls().length
    const res = await w.post(this.who, '/a2a/', { jsonrpc: '2.0', id, method, params })
    m.count(`front-bad-id:${this.op}`, String(res.body.error?.code))
    expect(res.status).toBe(200)
    expect(res.body.error?.code, `${method} with campaign id ${JSON.stringify(campaignId.slice(0, 20))}: ${res.text}`).toBe(-32602)
    expect(res.body.error?.data?.code).toBe('invalid_request')
    expect(await w.gw.app.ledger.get(id), 'a refused campaign id wrote no record').toBeUndefined()
    expect(w.sim.rpcCalls().length, 'a refused campaign id sent nothing').toBe(calls)
    m.stats.badFrontIds++
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `${this.who} ${this.op} via /a2a/ with bad campaign id #${this.bad % BAD_CAMPAIGN_IDS.length}`
}

/** another identity than the caller's: j1 and j2 share one display name */
const OTHER: Record<CallerName, CallerName> = { c1: 'c2', c2: 'c1', j1: 'j2', j2: 'j1', g1: 'c1' }

/**
 * Retention runs: `window`, the day the world's retention keeps passes and a replica's own
 * retention run prunes what it covers; `direct`, the ledger prunes every resolved record at
 * once. Pruned ids must replay or refuse, never reach the remote again (docs/design.md#request-ids-are-forever).
 */
class PruneCmd implements Cmd {
  constructor (readonly how: 'window' | 'direct') {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    let n: number
    let before: number
    if (this.how === 'window') {
      await advance(m, r, DAY_MS + 1000)
      const replica = w.pickReplica()
      // the window as the replica reads it, a moment before its run
      before = w.replicaNow(replica) - DAY_MS
      n = await w.replicas[replica]!.app.control.prune()
    } else {
      before = w.ledgerNow() + 3_600_000
      n = await w.gw.app.ledger.pruneResolvedBefore(before, 100_000, w.ledgerNow())
    }
    m.stats.pruned += n
    for (const rec of m.records.values()) {
      const stored = await w.gw.app.ledger.get(rec.id)
      expect(stored, `retention removed the record of ${rec.id}: request ids are forever`).toBeDefined()
      if (['applied', 'rejected', 'not_applied'].includes(stored!.state) && stored!.updatedAt < before) {
        expect(stored!.prunedAt, `${rec.id} (${stored!.state}) last written before the window, not pruned`).not.toBeNull()
      }
    }
    m.count('prune', `${this.how}: ${n > 0 ? 'some' : 'none'}`)
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `prune (${this.how})`
}

/** the card changes (an operator's redeploy) and an admin refreshes: -32601 marks are lifted */
class CardChangeCmd implements Cmd {
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const mark = `rev-${m.stats.commands}-${Math.random().toString(36).slice(2, 6)}`
    w.sim.setCard((card) => ({ ...card, description: mark }))
    // one refresh per replica (requests go round the replicas in turn)
    for (let i = 0; i < w.replicas.length; i++) {
      const res = await w.post('admin', '/v1/upstream/refresh')
      expect(res.status).toBe(200)
    }
    m.unavailableOn.clear()
    m.count('card-change', '200')
  }

  toString = (): string => 'the card changes; refresh'
}

class RestartCmd implements Cmd {
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const replica = r.w.nextReplica()
    await r.w.restart(replica)
    // a -32601 mark lives in memory: a restarted gateway rediscovers the same card without it;
    // its clock is as it was, and it measures it at start
    m.unavailable(replica).clear()
    m.count('restart', 'ok')
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => 'restart the gateway'
}

/**
 * The contract's bound on a late arrival: a request the remote still holds when the record's
 * deadline passes never lands (docs/design.md#reconcile-and-acknowledge). The history makes
 * the remote honour it by losing such requests.
 */
async function dropOverdue (m: Model, w: World, until: number, monoUntil = w.monoNow()): Promise<void> {
  const overdue = new Set<string>()
  for (const h of w.sim.held()) {
    const rec = await w.gw.app.ledger.get(String(h.id))
    // SQLite's ledger clock is its replica's wall clock, which may jump: the owner's wait is real
    // time, its monotonic clock's (docs/design.md#one-clock). PostgreSQL's clock is the one clock
    const mine = m.records.get(String(h.id))
    const waited = w.kind === 'postgres' || mine === undefined || mine.sentMono + ownerWaitMs(mine.op) <= monoUntil
    if (rec === undefined || (rec.deadline <= until && waited)) overdue.add(String(h.id))
  }
  if (overdue.size > 0) w.sim.dropHeld((h) => overdue.has(String(h.id)))
}

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
async function until (fn: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (!fn()) {
    if (Date.now() > end) return false
    await sleep(10)
  }
  return true
}

const staticCaller = fc.constantFrom<CallerName>('c1', 'c2')
const anyCaller = fc.constantFrom<CallerName>(...CALLERS)
const who: fc.Arbitrary<Who> = fc.oneof({ weight: 4, arbitrary: fc.constant<Who>('holder') }, { weight: 1, arbitrary: anyCaller })
const campaign = fc.constantFrom<Campaign>(...CAMPAIGNS)
const op = fc.constantFrom<Op>('claim', 'claim', 'renew', 'release', 'submit', 'submit', 'submit', 'intervene', 'intervene', 'cancel', 'cancel')
const fault = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Fault>('none') },
  { weight: 5, arbitrary: fc.constantFrom<Fault>('drop', 'hold', 'hold', 'status-502', 'internal-error', 'unknown-reason', 'both', 'policy', 'unreachable', 'method-not-found') },
  { weight: 1, arbitrary: fc.constantFrom<Fault>('delay', 'hold-restart') }
)
const mutate = fc.tuple(who, campaign, op, fault, staticCaller).map(([c, k, o, f, fb]) => new MutateCmd(c, k, o, f, fb))
/** the front door's: the faults whose answer it gives whole (a cut connection is REST's to test) */
const frontFault = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Fault>('none') },
  { weight: 2, arbitrary: fc.constantFrom<Fault>('drop', 'status-502', 'policy', 'unreachable', 'hold') }
)
const front = fc.tuple(who, campaign, op, frontFault, staticCaller).map(([c, k, o, f, fb]) => new FrontCmd(c, k, o, f, fb))

/** a burst: 2–5 mutations, one campaign mostly; the JWT identities and the holder come often */
const burstWho: fc.Arbitrary<Who> = fc.oneof({ weight: 3, arbitrary: fc.constant<Who>('holder') }, { weight: 2, arbitrary: anyCaller })
const burstOp = fc.constantFrom<Op>('claim', 'renew', 'release', 'submit', 'submit', 'intervene', 'intervene', 'cancel')
const burstFault = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Fault>('none') },
  { weight: 3, arbitrary: fc.constantFrom<Fault>('drop', 'status-502', 'internal-error', 'policy', 'delay') }
)
const shotsOf = fc.tuple(campaign, fc.array(fc.tuple(burstWho, burstOp, fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: campaign })), { minLength: 2, maxLength: 5 }))
  .map(([k, shots]) => shots.map(([w, o, other]): BurstShot => ({ who: w, op: o, campaign: other ?? k })))
function burst (postgres: boolean): fc.Arbitrary<Cmd> {
  const kills = (k: Kill): fc.Arbitrary<Kill> => postgres ? fc.constantFrom<Kill>('none', k, k) : fc.constant<Kill>('none')
  // the holders' sessions mostly; sometimes the waiters' too (they answer 503 ledger_unavailable, nothing sent)
  const waiters = fc.constantFrom(false, false, true)
  return fc.oneof(
    // a fault or none; a lock session killed a moment in
    fc.tuple(shotsOf, burstFault, fc.nat(4), kills('soon'), fc.integer({ min: 0, max: 60 }), waiters)
      .map(([shots, f, at, kill, after, all]) => new BurstCmd(shots, f, at, kill, after, false, all)),
    // one request held by the remote: its lock session killed, the sweeps run, while its owner waits
    fc.tuple(shotsOf, fc.nat(4), kills('held'), fc.constantFrom(true, true, false), waiters)
      .map(([shots, at, kill, sweep, all]) => new BurstCmd(shots, 'hold', at, kill, 0, sweep, all)),
    // the reads between a lock and its insert answer late, and the lock's session dies meanwhile:
    // another replica's mutation of the campaign may start first (and be held by the remote), and
    // the late one must learn it from its insert (409 campaign_busy), never by sending
    fc.tuple(campaign, fc.array(fc.constantFrom<Op>('intervene', 'submit', 'renew'), { minLength: 2, maxLength: 4 }), kills('soon'), fc.integer({ min: 20, max: 300 }), fc.boolean())
      .map(([k, ops, kill, after, hold]) => new BurstCmd(ops.map((o) => ({ who: 'holder', op: o, campaign: k })), 'slow-read', 0, kill, after, false, false, hold))
  )
}

/** the commands, repeated by weight (fc.commands picks among them evenly) */
export function commandArbitrary (o: { restarts: boolean; postgres: boolean }): Array<fc.Arbitrary<Cmd>> {
  const weighted: Array<[number, fc.Arbitrary<Cmd>]> = [
    [8, mutate],
    [2, front],
    [1, fc.tuple(campaign, staticCaller).map(([k, fb]) => new FrontFlowCmd(k, fb))],
    [2, fc.tuple(who, campaign, staticCaller).map(([c, k, fb]) => new MutateCmd(c, k, 'claim', 'none', fb))],
    [3, burst(o.postgres)],
    [2, fc.tuple(fc.nat(), fc.constantFrom('same', 'same', 'other-caller', 'other-params') as fc.Arbitrary<'same' | 'other-caller' | 'other-params'>).map(([p, h]) => new ReuseCmd(p, h))],
    [2, fc.tuple(fc.nat(), fc.boolean(), fc.nat(1)).map(([p, f, v]) => new ReconcileCmd(p, f, v))],
    [1, fc.nat().map((p) => new AcknowledgeCmd(p))],
    [1, fc.constant(new DeliverCmd())],
    [1, campaign.map((k) => new TakeoverCmd(k))],
    [2, fc.constantFrom(1000, 5000, 5000, 20_000, 40_000, 40_000, 70_000, 1000, 5000, 20_000, 700_000).map((ms) => new AdvanceCmd(ms))],
    [1, fc.tuple(fc.constantFrom<'remote' | 'replica'>('remote', 'replica'), fc.nat(1), fc.integer({ min: -1500, max: 1500 })).map(([t, i, ms]) => new SkewCmd(t, i, ms))],
    [1, fc.constantFrom<'window' | 'direct'>('window', 'direct').map((h) => new PruneCmd(h))],
    [1, fc.constant(new CardChangeCmd())],
    // the wall clock steps either way, mid-history, each replica noticing on its own
    [1, fc.tuple(fc.nat(1), fc.constantFrom(-700, 700, -6000, 6000, ...(o.postgres ? [-15_000, 15_000] : []))).map(([i, ms]) => new StepCmd(i, ms))],
    // the remote ahead past the margin, seen by a replica with no measurement of its own
    [1, fc.tuple(fc.constantFrom(6000, 10_000), campaign).map(([ms, k]) => new RemoteAheadCmd(ms, k))],
    [1, fc.tuple(fc.nat(), fc.constantFrom<'claim' | 'intervene' | 'submit' | 'read'>('claim', 'intervene', 'submit', 'read'), anyCaller).map(([b, o, c]) => new FrontBadIdCmd(b, o, c))],
    // the caller granted camp-a alone, on both campaigns (docs/design.md#grants)
    [2, fc.tuple(campaign, op, frontFault, fc.boolean()).map(([k, o, f, viaFront]) => new GrantedMutateCmd(k, o, f, viaFront))],
    [2, fc.tuple(campaign, fc.constantFrom<GrantedRead>('control', 'records', 'record', 'task', 'list', 'front-control', 'front-task', 'front-list'), fc.nat()).map(([k, what, p]) => new GrantedReadCmd(k, what, p))]
  ]
  if (o.postgres) weighted.push([2, fc.tuple(fc.nat(1), fc.constantFrom(60_000, 60_000, -60_000, 15_000, -15_000)).map(([i, ms]) => new ClockJumpCmd(i, ms))])
  if (o.restarts) weighted.push([1, fc.constant(new RestartCmd())])
  if (o.restarts && !o.postgres) weighted.push([1, fc.constantFrom(20_000, 40_000).map((ms) => new RestartJumpCmd(ms))])
  return weighted.flatMap(([n, a]) => Array.from({ length: n }, () => a))
}

/** after a history: every late arrival lands or is lost, and the invariants still hold */
export async function finish (m: Model, r: Real): Promise<void> {
  await dropOverdue(m, r.w, r.w.ledgerNow())
  const before = readTruth(r.w)
  r.w.sim.deliverHeld()
  for (const a of readTruth(r.w).applied) {
    if (!before.appliedIds.has(a.requestId) && a.operation === 'cancel') r.lateCancels.add(a.requestId)
  }
  await checkInvariants(r.w, m, r.lateCancels)
}

export { CONTROLLER_OF }
