// The reference model of the control plane (docs/design.md#campaign-control), as small as
// it can be while still predicting every answer class: records and their states, the bound
// task per campaign, which request ids are held by the remote, and which identity holds each
// controller id. The remote's lease and what it applied are not modelled: the simulator's own
// log is the ground truth, read before and after each command. Invariants are checked against
// that truth, never against the gateway's own word.
import { expect } from 'vitest'
import type { AppliedMutation } from '../../src/simulator/index.js'
import type { MutationRecord } from '../../src/ledger/types.js'
import { CAMPAIGNS, CONTROLLER_OF, GRANTED, IDENTITY_OF, TIMING, granted, ownerWaitMs, type CallerName, type Campaign, type World } from './world.js'

export type Op = 'claim' | 'renew' | 'release' | 'submit' | 'intervene' | 'cancel'

/** how the remote mishandles the next mutation of a command */
export type Fault =
  | 'none'
  | 'drop' // applied, answer lost
  | 'hold' // arrives late: applied (or refused) only when delivered
  | 'hold-restart' // held, and the gateway restarts before the answer
  | 'delay' // answered after the mutation timeout (applied late)
  | 'status-502' // a 5xx without a JSON-RPC body, nothing applied
  | 'internal-error' // -32603, nothing applied
  | 'unknown-reason' // an error with an unknown data.reason, nothing applied
  | 'policy' // policy_violation, nothing applied
  | 'both' // a body with result and error, nothing applied
  | 'unreachable' // the connect is refused: nothing leaves
  | 'method-not-found' // -32601: the operation is unavailable until the card changes
  | 'slow-read' // bursts: the next read_control and tasks/get answer late (a lock held longer before its insert)

/** 'pending': only on PostgreSQL, a record whose replica stopped mid-send, until its deadline */
export type ModelState = 'applied' | 'rejected' | 'unsent' | 'ambiguous' | 'not_applied' | 'pending'

export interface ModelRecord {
  id: string
  campaign: Campaign
  caller: CallerName
  op: Op
  body: Record<string, unknown>
  state: ModelState
  /** what a replay answers */
  status: number
  /** set once a reconcile failed (acknowledge needs one) */
  reconcileFailed: boolean
  /** sent through the A2A front door as a tasks/cancel of this task (its params hold the task: REST cannot name them) */
  frontTask?: string
  /** sent through the A2A front door */
  front?: boolean
  /** the task an applied submission made */
  taskId?: string
  /** the replica that last sent it, which start of that replica, and when, on the monotonic clock */
  replica: number
  incarnation: number
  sentMono: number
  /** by when it was certainly sent (its answer was judged), on the monotonic clock */
  sentMonoEnd: number
}

export interface Stats {
  commands: number
  byKind: Record<string, number>
  answers: Record<string, number>
  ambiguousWithoutFault: number
  lateCancels: number
  /** mutations fired at once, and how many */
  bursts: number
  burstShots: number
  /** lock sessions terminated */
  kills: number
  clockSkewRefusals: number
  /** wall-clock steps drawn (each replica notices its own), restarts with a jumped clock, the remote run ahead past the margin */
  clockSteps: number
  jumpedRestarts: number
  remoteAhead: number
  /** requests to the front door with a campaign id REST refuses */
  badFrontIds: number
  campaignBusy: number
  /** records retention pruned, and replays of pruned ids */
  pruned: number
  prunedReplays: number
  /** mutations sent through the A2A front door */
  frontCommands: number
  controllerConflicts: number
  /** sweeps run while a mutation of the campaign was in flight */
  sweepsInFlight: number
  /** the same while a replica's clock was past the margin */
  sweepsInFlightPast: number
}

export const newStats = (): Stats => ({
  commands: 0,
  byKind: {},
  answers: {},
  ambiguousWithoutFault: 0,
  lateCancels: 0,
  bursts: 0,
  burstShots: 0,
  kills: 0,
  clockSkewRefusals: 0,
  clockSteps: 0,
  jumpedRestarts: 0,
  remoteAhead: 0,
  badFrontIds: 0,
  campaignBusy: 0,
  pruned: 0,
  prunedReplays: 0,
  frontCommands: 0,
  controllerConflicts: 0,
  sweepsInFlight: 0,
  sweepsInFlightPast: 0
})

export class Model {
  readonly records = new Map<string, ModelRecord>()
  readonly order: string[] = []
  /** the task a cancel may target, per campaign (undefined: none) */
  readonly bound = new Map<Campaign, string | undefined>()
  /** tasks the remote has cancelled */
  readonly canceled = new Set<string>()
  /** per replica (a mark lives in its memory): operations that answered -32601 since the card last changed */
  readonly unavailableOn = new Map<number, Set<Op>>()
  unavailable (replica: number): Set<Op> {
    let s = this.unavailableOn.get(replica)
    if (s === undefined) this.unavailableOn.set(replica, s = new Set())
    return s
  }

  /** replicas whose clock is past the safety margin, as they measured it: they refuse every mutation */
  readonly clockPast = new Set<number>()
  /** SQLite: the replica whose wall clock (and so its ledger's) stepped far from the remote's: it refuses every mutation but a claim */
  readonly remoteFar = new Set<number>()
  /** which caller first used each controller id (docs/design.md#controller-bindings) */
  readonly bindings = new Map<string, CallerName>()
  /**
   * when the owner of a sent mutation stopped waiting, where its pipeline never said (a replica
   * stopped mid-send): the first check that found its record no longer pending
   */
  readonly ownerGone = new Map<string, number>()

  private seq = 0
  readonly stats: Stats = newStats()

  newId (op: Op): string {
    return `${op}-${String(++this.seq).padStart(5, '0')}-${Math.random().toString(36).slice(2, 8)}`
  }

  /** the oldest unresolved record of the campaign: it blocks every mutation there */
  blocker (campaign: Campaign): ModelRecord | undefined {
    for (const id of this.order) {
      const r = this.records.get(id)!
      if (r.campaign === campaign && (r.state === 'ambiguous' || r.state === 'pending')) return r
    }
    return undefined
  }

  count (kind: string, answer: string): void {
    if (answer.startsWith('503 clock_skew')) this.stats.clockSkewRefusals++
    if (answer.startsWith('409 campaign_busy')) this.stats.campaignBusy++
    if (answer.startsWith('403 controller_conflict')) this.stats.controllerConflicts++
    this.stats.commands++
    this.stats.byKind[kind] = (this.stats.byKind[kind] ?? 0) + 1
    const key = `${kind} → ${answer}`
    this.stats.answers[key] = (this.stats.answers[key] ?? 0) + 1
  }
}

/** what the remote has done, read at one moment */
export interface Truth {
  applied: AppliedMutation[]
  appliedIds: Set<string>
  /** mutation request ids as they arrived on the wire (faulted and held ones included) */
  wireIds: string[]
  /** the same, with the moment each arrived at the remote's front end (the real clock) */
  arrivals: Array<{ id: string; at: number }>
  heldIds: Set<string>
}

export function readTruth (w: World): Truth {
  const applied = w.sim.control.applied()
  const arrivals: Array<{ id: string; at: number }> = []
  const mutations = new Set(Object.values(w.methods))
  for (const r of w.sim.received) {
    if (r.method !== 'POST' || r.path.split('?')[0] !== '/a2a/') continue
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the remote's log holds what the client sent
    const c = r.json as any
    if (typeof c !== 'object' || c === null || !mutations.has(c.method)) continue
    // an Argus read is a message/send too; a submission carries argus_supervisor metadata
    if (c.method === w.methods.submit && c.params?.message?.metadata?.argus_supervisor === undefined) continue
    arrivals.push({ id: String(c.id), at: r.at })
  }
  return {
    applied,
    appliedIds: new Set(applied.map((a) => a.requestId)),
    wireIds: arrivals.map((a) => a.id),
    arrivals,
    heldIds: new Set(w.sim.held().map((h) => String(h.id)))
  }
}

const LEDGER_STATE: Record<ModelState, MutationRecord['state']> = {
  applied: 'applied',
  rejected: 'rejected',
  unsent: 'rejected',
  ambiguous: 'ambiguous',
  not_applied: 'not_applied',
  pending: 'pending'
}

/**
 * The invariants, after every command:
 * - no request id reached the remote twice;
 * - nothing reached the remote without a ledger record;
 * - at most one mutation of a campaign in flight at the remote at any time (see inFlightOnce);
 * - at most one unresolved (pending or ambiguous) record per campaign in the ledger;
 * - no mutation applied under an epoch that was not current (a cancel delivered late by the
 *   remote is counted apart: the gateway cannot recall a request it already sent);
 * - the ledger agrees with the model, and neither contradicts what the remote applied: the
 *   ledger never says rejected or not_applied for something the remote applied;
 * - a pending record turned ambiguous only past its deadline on the ledger's clock;
 * - each controller id is bound to the caller the model says first used it;
 * - grants (docs/design.md#grants): no mutation of a campaign reached the remote under the
 *   controller id of a caller without a grant to it (the remote's own log), and the ledger holds no
 *   record of one.
 */
export async function checkInvariants (w: World, m: Model, lateCancelIds: Set<string>): Promise<void> {
  const t = readTruth(w)
  const seen = new Set<string>()
  for (const id of t.wireIds) {
    expect(seen.has(id), `request id ${id} reached the remote twice`).toBe(false)
    seen.add(id)
  }
  const records = new Map<string, MutationRecord>()
  for (const id of seen) {
    const stored = await w.gw.app.ledger.get(id)
    expect(stored, `request id ${id} reached the remote with no ledger record`).toBeDefined()
    records.set(id, stored!)
  }
  inFlightOnce(w, m, t, records)
  const unresolved = await w.gw.app.ledger.listUnresolved({ limit: 1000 })
  for (const campaign of new Set(unresolved.map((r) => r.campaignId))) {
    const open = unresolved.filter((r) => r.campaignId === campaign)
    expect(open.length, `${campaign} has ${open.length} unresolved records at once: ${open.map((r) => `${r.requestId} ${r.state}`).join(', ')}`).toBe(1)
  }
  for (const a of t.applied) {
    if (a.operation === 'claim_control') continue
    if (a.operation === 'cancel' && lateCancelIds.has(a.requestId)) continue
    expect(a.leaseLive && a.epoch === a.currentEpoch, `${a.operation} ${a.requestId} applied under epoch ${String(a.epoch)} while the current one was ${a.currentEpoch} (lease live: ${String(a.leaseLive)})`).toBe(true)
  }
  for (const r of m.records.values()) {
    const stored = await w.gw.app.ledger.get(r.id)
    // a replica's own sweep timer may have run first: a pending record past its deadline, on the ledger's clock
    if (r.state === 'pending' && stored?.state === 'ambiguous') {
      expect(stored.deadline, `${r.id} turned ambiguous before its deadline on the ledger's clock`).toBeLessThan(w.ledgerNow())
      r.state = 'ambiguous'
    }
    expect(stored?.state, `ledger state of ${r.id} (${r.op})`).toBe(LEDGER_STATE[r.state])
    const applied = t.appliedIds.has(r.id)
    if (r.state === 'applied') expect(applied, `${r.id} is applied in the ledger but not at the remote`).toBe(true)
    if (r.state === 'rejected' || r.state === 'unsent' || r.state === 'not_applied') {
      expect(applied, `${r.id} is ${r.state} in the ledger but the remote applied it`).toBe(false)
    }
    // retention never prunes an unresolved record, and what stays replays (docs/design.md#request-ids-are-forever)
    if (stored?.prunedAt !== null) expect(['applied', 'rejected', 'not_applied'], `${r.id} pruned while ${stored!.state}`).toContain(stored!.state)
  }
  for (const id of t.appliedIds) {
    const r = m.records.get(id)
    expect(r, `the remote applied ${id}, which the model never saw`).toBeDefined()
    expect(['applied', 'ambiguous', 'pending'], `the remote applied ${id}; the ledger says ${r!.state}`).toContain(r!.state)
  }
  // bound to an identity, never a name: j1 and j2 share one (docs/design.md#controller-bindings)
  const bound = new Map((await w.gw.app.ledger.listControllerBindings()).map((b) => [b.controllerId, b.identity]))
  for (const [controllerId, caller] of m.bindings) expect(bound.get(controllerId), `the binding of ${controllerId}`).toBe(IDENTITY_OF[caller])
  expect(bound.size, `controller bindings ${[...bound.keys()].join(', ')}`).toBe(m.bindings.size)
  for (const sent of controlledOnWire(w)) {
    if (sent.controllerId !== CONTROLLER_OF[GRANTED]) continue
    expect(granted(GRANTED, sent.campaignId as Campaign), `${sent.method} ${sent.id} of ${sent.campaignId} reached the remote for ${GRANTED}, which has no grant to it`).toBe(true)
  }
  for (const k of CAMPAIGNS) {
    if (granted(GRANTED, k)) continue
    const mine = (await w.gw.app.ledger.listByCampaign(k, { limit: 10_000 })).filter((r) => r.identity === IDENTITY_OF[GRANTED])
    expect(mine.map((r) => r.requestId), `records of ${k} written for ${GRANTED}`).toEqual([])
  }
}

/**
 * Every mutation on the wire with the controller id it carries and the campaign it names, read from
 * the remote's log: wherever the request puts them (the extension's params, a submission's or a
 * cancel's argus_supervisor metadata), as an object holding a string controller_id
 */
function controlledOnWire (w: World): Array<{ id: string; method: string; controllerId: string; campaignId: string }> {
  const mutations = new Set(Object.values(w.methods))
  const out: Array<{ id: string; method: string; controllerId: string; campaignId: string }> = []
  for (const r of w.sim.received) {
    if (r.method !== 'POST' || r.path.split('?')[0] !== '/a2a/') continue
    const c = r.json as { id?: unknown; method?: unknown; params?: unknown } | null
    if (typeof c !== 'object' || c === null || typeof c.method !== 'string' || !mutations.has(c.method)) continue
    const stack: unknown[] = [c.params]
    while (stack.length > 0) {
      const v = stack.pop()
      if (typeof v !== 'object' || v === null) continue
      const o = v as Record<string, unknown>
      if (typeof o.controller_id === 'string') out.push({ id: String(c.id), method: c.method, controllerId: o.controller_id, campaignId: String(o.campaign_id) })
      for (const x of Object.values(o)) stack.push(x)
    }
  }
  return out
}

/**
 * At most one mutation of a campaign in flight at the remote at any time: a mutation is in
 * flight from its arrival at the remote (the remote's own log, on the real clock) until its
 * owner stopped waiting for it (its pipeline's `before-outcome` step: the answer came, or the
 * wait ended); no other mutation of the campaign may arrive in between. A replica stopped
 * mid-send never says: its mutation is in flight while its record stays pending. A request that
 * arrived after its owner stopped waiting is a late arrival: the deadline and epoch rules judge
 * it (the remote holds it for no owner), so it opens no window here.
 *
 * The windows are as wide as the gateway's own view makes them, never narrower than the
 * remote's: a send precedes its arrival, and the owner stops waiting only after the answer
 * left the remote. Every arrival must match a `before-send` step, so no send escapes the marks.
 */
function inFlightOnce (w: World, m: Model, t: Truth, records: Map<string, MutationRecord>): void {
  const sends = new Map<string, number[]>()
  const outcomes = new Map<string, number[]>()
  for (const k of w.marks) {
    const to = k.step === 'before-send' ? sends : k.step === 'before-outcome' ? outcomes : undefined
    if (to === undefined) continue
    let list = to.get(k.id)
    if (list === undefined) to.set(k.id, list = [])
    list.push(k.t)
  }
  const now = Date.now()
  const byCampaign = new Map<string, Array<{ id: string; at: number }>>()
  for (const a of t.arrivals) {
    const campaign = records.get(a.id)!.campaignId
    let list = byCampaign.get(campaign)
    if (list === undefined) byCampaign.set(campaign, list = [])
    list.push(a)
  }
  for (const [campaign, list] of byCampaign) {
    list.sort((x, y) => x.at - y.at)
    let busyUntil = -Infinity
    let busyId = ''
    for (const a of list) {
      expect(a.at >= busyUntil, `${a.id} of ${campaign} reached the remote while ${busyId}, which arrived earlier, was still awaited by its owner (${a.at} < ${busyUntil})`).toBe(true)
      const sent = (sends.get(a.id) ?? []).filter((s) => s <= a.at).at(-1)
      expect(sent, `${a.id} reached the remote with no send step before it`).toBeDefined()
      let end = (outcomes.get(a.id) ?? []).find((e) => e >= sent!)
      if (end === undefined && records.get(a.id)!.state !== 'pending') {
        if (!m.ownerGone.has(a.id)) m.ownerGone.set(a.id, now)
        end = m.ownerGone.get(a.id)
      }
      if (end === undefined) {
        busyUntil = Infinity
        busyId = a.id
      } else if (end >= a.at && end > busyUntil) {
        busyUntil = end
        busyId = a.id
      }
    }
  }
}

/**
 * How far the remote's clock is from a replica's (docs/design.md#one-clock), as the replica
 * measures it once it looks: 'near' never past the margin (a measurement understates, never
 * invents), 'far' past it whatever the measurement's width (up to two seconds and the round
 * trip), 'grey' between. A claim depends on no lease: it is judged on the ledger's offset alone.
 */
export function remoteState (w: World, replica: number): 'near' | 'far' | 'grey' {
  const off = Math.abs(w.offsets(replica).remote)
  if (off <= TIMING.leaseSafetyMs - 100) return 'near'
  if (off > TIMING.leaseSafetyMs + 2500) return 'far'
  return 'grey'
}

/**
 * ms until the record's deadline may be judged past through `replica` (docs/design.md#one-clock):
 * on the ledger's clock, and on the monotonic clock since the record's send when that replica's
 * current start sent it, else since that replica's start
 */
export function deadlineLeftMs (w: World, rec: ModelRecord, deadline: number, replica: number): { lo: number; hi: number } {
  const own = rec.replica === replica && rec.incarnation === w.incarnation(replica)
  const started = w.startedAt(replica)
  // the gateway takes its moment between these two: the send's (its pending write) or its start's
  const [from, to] = own ? [rec.sentMono, rec.sentMonoEnd] : [started.from, started.to]
  const ledger = deadline - w.ledgerNow()
  const wait = ownerWaitMs(rec.op) - w.monoNow()
  return { lo: Math.max(ledger, from + wait), hi: Math.max(ledger, to + wait) }
}

/** the lease a caller's request would carry, as the remote holds it now, by the clock of the replica it goes to */
export function remoteLeaseOf (w: World, campaign: Campaign, caller: CallerName, replica: number): { mine: boolean; usableMs: number } {
  const lease = w.sim.control.lease(campaign)
  if (lease === null) return { mine: false, usableMs: -1 }
  return { mine: lease.controller_id === CONTROLLER_OF[caller], usableMs: lease.expires_at * 1000 - w.replicaNow(replica) }
}
