// The commands of a generated history (fast-check model-based testing): mutations by two
// controllers on two campaigns with faults mixed in, replays and id reuse, reconcile and
// acknowledge, late arrivals delivered, takeovers by a third controller, clocks that move,
// jump and skew, and gateway restarts. Each command predicts its answer from the model and the
// remote's truth, checks the answer and the ledger, and updates the model.
import * as fc from 'fast-check'
import { expect } from 'vitest'
import type { JsonResponse } from '../helpers/http.js'
import { checkInvariants, readTruth, remoteLeaseOf, type Fault, type Model, type ModelRecord, type ModelState, type Op } from './model.js'
import { CALLERS, CAMPAIGNS, CONTROLLER_OF, TIMING, type CallerName, type Campaign, type World } from './world.js'

/** the real side of a history: the world, plus the cancels the remote took late */
export interface Real { w: World; lateCancels: Set<string>; takeoverEpochs: Map<Campaign, number> }

type Cmd = fc.AsyncCommand<Model, Real>

const PATH: Record<Op, string> = {
  claim: 'control/claim',
  renew: 'control/renew',
  release: 'control/release',
  submit: 'submissions',
  intervene: 'interventions',
  cancel: 'cancel'
}

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
  'method-not-found': '503 capability_unavailable'
}

/**
 * Sends one mutation (new, or the retry of an unsent one) and judges it: the predicted class
 * where the model can know it, and in every case an answer consistent with the ledger record
 * and the remote's truth. Returns the model record, or undefined when the id stayed unused.
 */
async function sendMutation (m: Model, r: Real, a: { caller: CallerName; campaign: Campaign; op: Op; id: string; body: Record<string, unknown>; fault: Fault }): Promise<void> {
  const { w } = r
  const { caller, campaign, op, id, fault } = a
  const blocker = m.blocker(campaign)
  const lease = remoteLeaseOf(w, campaign, caller)
  const view = await w.gw.app.ledger.getLease(campaign)
  const remote = w.sim.control.lease(campaign)
  // the gateway's view agrees with the remote, or is unknown (then read fresh)
  const viewAgrees = view === undefined || !view.known || (remote === null ? view.lease === null : view.lease?.controllerId === remote.controller_id && view.lease.epoch === remote.epoch && view.lease.expiresAt === remote.expires_at)
  const bound = m.bound.get(campaign)
  const clean = Math.abs(w.skewMs()) <= 1000 && viewAgrees
  // the gateway asks the remote first when its view is unknown, and for every cancel
  const readsFirst = op !== 'claim' && (op === 'cancel' || view === undefined || !view.known)
  let predicted: string | undefined
  // capability comes before the ambiguity block; without claim_control the gateway is an observer
  const marks = m.unavailable(w.nextReplica())
  if (marks.has('claim') || marks.has(op)) predicted = '503 capability_unavailable'
  else if (blocker !== undefined) predicted = '409 ambiguity_unresolved'
  else if (readsFirst && fault === 'unreachable') predicted = '503 upstream_unavailable'
  else if (op === 'claim') predicted = clean && (remote === null || lease.mine) ? SENT_CLASS[fault] : undefined
  else if (clean && lease.mine && lease.usableMs > TIMING.leaseSafetyMs + 5000) {
    if (op === 'cancel' && bound === undefined) predicted = '409 no_bound_task'
    else if (op === 'cancel' && m.canceled.has(bound!)) predicted = '409 task_not_cancelable'
    else predicted = SENT_CLASS[fault]
  } else if (readsFirst && Math.abs(w.skewMs()) <= 1000 && !lease.mine) predicted = '409 lease_not_held'

  injectFault(w, op, id, fault)
  if (fault === 'unreachable') await w.fwd.shut()
  let res: JsonResponse | undefined
  try {
    const sending = w.post(caller, `/v1/campaigns/${campaign}/${PATH[op]}`, a.body)
    if (fault === 'hold-restart') {
      // the gateway stops (drain, then close) while the remote holds the request
      let answered = false
      const answer = sending.catch(() => undefined).finally(() => { answered = true })
      const held = await until(() => answered || readTruth(w).heldIds.has(id), 3000)
      const restarted = held && !answered
      const restarting = restarted ? w.restart() : Promise.resolve()
      res = await answer
      await restarting
      if (restarted) m.unavailable(w.lastReplica()).clear()
    } else {
      res = await sending
    }
  } finally {
    if (fault === 'unreachable') await w.fwd.reopen()
    w.sim.clearFaults()
  }
  // a late arrival lands (or is refused) before anything else is judged
  if (fault === 'delay') await until(() => w.sim.control.received().some((x) => x.requestId === id) || !w.sim.rpcCalls().some((c) => c.id === id), 5000)

  const got = res === undefined ? 'cut' : codeOf(res)
  const cls = got === '200' || got === '202' ? 'ok' : got
  m.count(`mutate:${op}`, `${cls}${fault === 'none' ? '' : ` (${fault})`}`)
  if (predicted !== undefined) {
    if (predicted === 'ok' && cls === '504 ambiguous_write') m.stats.ambiguousWithoutFault++ // a slow machine, not a safety matter
    else if (predicted === 'cut') expect(['cut', '503 shutting_down', '504 ambiguous_write'], `${op} ${id}`).toContain(cls)
    else expect(cls, `${op} ${id} under fault ${fault}: ${res?.text ?? 'no answer'}`).toBe(predicted)
  }
  if (cls === '409 ambiguity_unresolved') expect(res!.body.error.requestId).toBe(blocker?.id)

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
    if (cls === '409 no_bound_task') expect(bound).toBeUndefined()
    if (cls === '409 task_not_cancelable') expect(m.canceled.has(bound!)).toBe(true)
    return
  }
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
      if (stored.outcomeCode === 'capability_unavailable') m.unavailable(w.lastReplica()).add(op)
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
  const rec: ModelRecord = prior ?? { id, campaign, caller, op, body: a.body, state, status: res?.status ?? 504, reconcileFailed: false }
  rec.state = state
  rec.status = res?.status ?? 504
  if (prior === undefined) {
    m.records.set(id, rec)
    m.order.push(id)
  }
}

/** `holder`: whichever of the two controllers holds the remote lease now (else `fallback`) */
type Who = CallerName | 'holder'

class MutateCmd implements Cmd {
  constructor (readonly who: Who, readonly campaign: Campaign, readonly op: Op, readonly fault: Fault, readonly fallback: CallerName = 'c1') {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const holder = r.w.sim.control.lease(this.campaign)?.controller_id
    const caller = this.who !== 'holder' ? this.who : CALLERS.find((c) => CONTROLLER_OF[c] === holder) ?? this.fallback
    const id = m.newId(this.op)
    await sendMutation(m, r, { caller, campaign: this.campaign, op: this.op, id, body: bodyFor(this.op, id, m.order.length), fault: this.fault })
    await checkInvariants(r.w, m, r.lateCancels)
  }

  toString = (): string => `${this.who} ${this.op} ${this.campaign}${this.fault === 'none' ? '' : ` [${this.fault}]`}`
}

/** the same request id again: as sent, by another caller, or with other params */
class ReuseCmd implements Cmd {
  constructor (readonly pick: number, readonly how: 'same' | 'other-caller' | 'other-params') {}
  check = (m: Model): boolean => m.order.length > 0
  async run (m: Model, r: Real): Promise<void> {
    const rec = m.records.get(m.order[this.pick % m.order.length]!)!
    const { w } = r
    const path = `/v1/campaigns/${rec.campaign}/${PATH[rec.op]}`
    if (rec.state === 'pending' && this.how === 'same') {
      const res = await w.post(rec.caller, path, rec.body)
      m.count('reuse:same', codeOf(res))
      expect(codeOf(res)).toBe('409 request_in_flight')
    } else if (this.how === 'same' && rec.state === 'unsent') {
      // nothing of it ever left: it runs again as new
      await sendMutation(m, r, { caller: rec.caller, campaign: rec.campaign, op: rec.op, id: rec.id, body: rec.body, fault: 'none' })
    } else {
      const wire = readTruth(w).wireIds.length
      const caller = this.how === 'other-caller' ? (rec.caller === 'c1' ? 'c2' : 'c1') : rec.caller
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
      const res = await w.post(caller, path, body)
      m.count(`reuse:${this.how}`, codeOf(res))
      if (this.how === 'other-caller') expect(codeOf(res)).toBe('409 idempotency_key_conflict')
      else if (this.how === 'other-params') expect(codeOf(res)).toBe(rec.op === 'release' || rec.op === 'cancel' ? '400 invalid_request' : '422 idempotency_key_mismatch')
      else {
        // a replay: the stored answer, nothing sent
        expect(res.status, `${rec.id} replayed`).toBe(rec.status)
        expect(res.headers['idempotent-replayed']).toBe('true')
      }
      expect(readTruth(w).wireIds.length, 'a reuse sent nothing').toBe(wire)
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `reuse #${this.pick} ${this.how}`
}

class ReconcileCmd implements Cmd {
  constructor (readonly pick: number, readonly failing: boolean) {}
  check = (m: Model): boolean => m.order.length > 0
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const rec = pickAmbiguousFirst(m, this.pick)
    const t = readTruth(w)
    const applied = t.appliedIds.has(rec.id)
    const stored = (await w.gw.app.ledger.get(rec.id))!
    const left = stored.deadline - w.gwNow()
    if (this.failing) w.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
    const res = await w.post(rec.caller, `/v1/campaigns/${rec.campaign}/requests/${rec.id}/reconcile`)
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
    } else if (Math.abs(left) < 1000) {
      expect(['409 reconcile_too_early', '200']).toContain(codeOf(res))
      if (res.status === 200) settle(m, rec, 'not_applied', null)
    } else if (left > 0) {
      expect(codeOf(res), `reconcile ${rec.id} ${left} ms before its deadline`).toBe('409 reconcile_too_early')
      // seconds to the deadline, counted by the gateway a moment after `left` was
      const retryAfter = Number(res.headers['retry-after'])
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil(left / 1000))
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil(left / 1000) - 1)
    } else {
      expect(codeOf(res), `reconcile ${rec.id} after its deadline`).toBe('200')
      expect(res.body.state).toBe('not_applied')
      settle(m, rec, 'not_applied', null)
    }
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `reconcile #${this.pick}${this.failing ? ' [request_status fails]' : ''}`
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
    const left = stored.deadline - w.gwNow()
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
      const safe = rec.op === 'claim' ? left <= 0 : rec.op === 'cancel' ? higher && left <= 0 : higher
      if (Math.abs(left) < 1000 && (rec.op === 'cancel' || rec.op === 'claim')) {
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

/** time passes on both clocks (a jump when large); held requests past their deadline are lost */
class AdvanceCmd implements Cmd {
  constructor (readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    await dropOverdue(w, w.gwNow() + this.ms)
    w.advance(this.ms)
    // the replicas' sweeps run as their timers would: pending records past their deadline
    await w.sweep()
    for (const rec of m.records.values()) {
      if (rec.state === 'pending' && (await w.gw.app.ledger.get(rec.id))?.state === 'ambiguous') {
        expect((await w.gw.app.ledger.get(rec.id))!.deadline).toBeLessThan(w.gwNow())
        rec.state = 'ambiguous'
      }
    }
    m.count('advance', String(this.ms))
    await checkInvariants(w, m, r.lateCancels)
  }

  toString = (): string => `advance ${this.ms} ms`
}

/** one clock moves alone, within the safety margin's half */
class SkewCmd implements Cmd {
  constructor (readonly ms: number) {}
  check = (): boolean => true
  async run (m: Model, r: Real): Promise<void> {
    const { w } = r
    const target = Math.max(-1000, Math.min(1000, w.skewMs() + this.ms))
    const move = target - w.skewMs()
    if (move > 0) await dropOverdue(w, w.gwNow() + move)
    w.skew(move)
    m.count('skew', String(move))
  }

  toString = (): string => `skew ${this.ms} ms`
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
    // a -32601 mark lives in memory: a restarted gateway rediscovers the same card without it
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
async function dropOverdue (w: World, until: number): Promise<void> {
  const overdue = new Set<string>()
  for (const h of w.sim.held()) {
    const rec = await w.gw.app.ledger.get(String(h.id))
    if (rec === undefined || rec.deadline <= until) overdue.add(String(h.id))
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

const caller = fc.constantFrom<CallerName>(...CALLERS)
const who: fc.Arbitrary<Who> = fc.oneof({ weight: 4, arbitrary: fc.constant<Who>('holder') }, { weight: 1, arbitrary: caller })
const campaign = fc.constantFrom<Campaign>(...CAMPAIGNS)
const op = fc.constantFrom<Op>('claim', 'claim', 'renew', 'release', 'submit', 'submit', 'submit', 'intervene', 'intervene', 'cancel', 'cancel')
const fault = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Fault>('none') },
  { weight: 5, arbitrary: fc.constantFrom<Fault>('drop', 'hold', 'hold', 'status-502', 'internal-error', 'unknown-reason', 'both', 'policy', 'unreachable', 'method-not-found') },
  { weight: 1, arbitrary: fc.constantFrom<Fault>('delay', 'hold-restart') }
)
const mutate = fc.tuple(who, campaign, op, fault, caller).map(([c, k, o, f, fb]) => new MutateCmd(c, k, o, f, fb))

/** the commands, repeated by weight (fc.commands picks among them evenly) */
export function commandArbitrary (o: { restarts: boolean }): Array<fc.Arbitrary<Cmd>> {
  const weighted: Array<[number, fc.Arbitrary<Cmd>]> = [
    [8, mutate],
    [2, fc.tuple(who, campaign, caller).map(([c, k, fb]) => new MutateCmd(c, k, 'claim', 'none', fb))],
    [2, fc.tuple(fc.nat(), fc.constantFrom('same', 'same', 'other-caller', 'other-params') as fc.Arbitrary<'same' | 'other-caller' | 'other-params'>).map(([p, h]) => new ReuseCmd(p, h))],
    [2, fc.tuple(fc.nat(), fc.boolean()).map(([p, f]) => new ReconcileCmd(p, f))],
    [1, fc.nat().map((p) => new AcknowledgeCmd(p))],
    [1, fc.constant(new DeliverCmd())],
    [1, campaign.map((k) => new TakeoverCmd(k))],
    [2, fc.constantFrom(1000, 5000, 5000, 20_000, 40_000, 40_000, 70_000, 1000, 5000, 20_000, 700_000).map((ms) => new AdvanceCmd(ms))],
    [1, fc.integer({ min: -1500, max: 1500 }).map((ms) => new SkewCmd(ms))],
    [1, fc.constant(new CardChangeCmd())]
  ]
  if (o.restarts) weighted.push([1, fc.constant(new RestartCmd())])
  return weighted.flatMap(([n, a]) => Array.from({ length: n }, () => a))
}

/** after a history: every late arrival lands or is lost, and the invariants still hold */
export async function finish (m: Model, r: Real): Promise<void> {
  await dropOverdue(r.w, r.w.gwNow())
  const before = readTruth(r.w)
  r.w.sim.deliverHeld()
  for (const a of readTruth(r.w).applied) {
    if (!before.appliedIds.has(a.requestId) && a.operation === 'cancel') r.lateCancels.add(a.requestId)
  }
  await checkInvariants(r.w, m, r.lateCancels)
}

export { CONTROLLER_OF }
