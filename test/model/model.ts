// The reference model of the control plane (docs/design.md#campaign-control), as small as
// it can be while still predicting every answer class: records and their states, the bound
// task per campaign, and which request ids are held by the remote. The remote's lease and
// what it applied are not modelled: the simulator's own log is the ground truth, read before
// and after each command. Invariants are checked against that truth, never against the
// gateway's own word.
import { expect } from 'vitest'
import type { AppliedMutation } from '../../src/simulator/index.js'
import type { MutationRecord } from '../../src/ledger/types.js'
import { CONTROLLER_OF, type CallerName, type Campaign, type World } from './world.js'

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
}

export interface Stats { commands: number; byKind: Record<string, number>; answers: Record<string, number>; ambiguousWithoutFault: number; lateCancels: number }

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

  private seq = 0
  readonly stats: Stats = { commands: 0, byKind: {}, answers: {}, ambiguousWithoutFault: 0, lateCancels: 0 }

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
  heldIds: Set<string>
}

export function readTruth (w: World): Truth {
  const applied = w.sim.control.applied()
  const wireIds: string[] = []
  const mutations = new Set(Object.values(w.methods))
  for (const c of w.sim.rpcCalls()) {
    if (!mutations.has(c.method)) continue
    // an Argus read is a message/send too; a submission carries argus_supervisor metadata
    if (c.method === w.methods.submit && c.params?.message?.metadata?.argus_supervisor === undefined) continue
    wireIds.push(String(c.id))
  }
  return {
    applied,
    appliedIds: new Set(applied.map((a) => a.requestId)),
    wireIds,
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
 * - no mutation applied under an epoch that was not current (a cancel delivered late by the
 *   remote is counted apart: the gateway cannot recall a request it already sent);
 * - the ledger agrees with the model, and neither contradicts what the remote applied.
 */
export async function checkInvariants (w: World, m: Model, lateCancelIds: Set<string>): Promise<void> {
  const t = readTruth(w)
  const seen = new Set<string>()
  for (const id of t.wireIds) {
    expect(seen.has(id), `request id ${id} reached the remote twice`).toBe(false)
    seen.add(id)
  }
  for (const id of seen) {
    expect(await w.gw.app.ledger.get(id), `request id ${id} reached the remote with no ledger record`).toBeDefined()
  }
  for (const a of t.applied) {
    if (a.operation === 'claim_control') continue
    if (a.operation === 'cancel' && lateCancelIds.has(a.requestId)) continue
    expect(a.leaseLive && a.epoch === a.currentEpoch, `${a.operation} ${a.requestId} applied under epoch ${String(a.epoch)} while the current one was ${a.currentEpoch} (lease live: ${String(a.leaseLive)})`).toBe(true)
  }
  for (const r of m.records.values()) {
    const stored = await w.gw.app.ledger.get(r.id)
    // a replica's own sweep timer may have run first: a pending record past its deadline
    if (r.state === 'pending' && stored?.state === 'ambiguous' && stored.deadline < w.gwNow()) r.state = 'ambiguous'
    expect(stored?.state, `ledger state of ${r.id} (${r.op})`).toBe(LEDGER_STATE[r.state])
    const applied = t.appliedIds.has(r.id)
    if (r.state === 'applied') expect(applied, `${r.id} is applied in the ledger but not at the remote`).toBe(true)
    if (r.state === 'rejected' || r.state === 'unsent' || r.state === 'not_applied') {
      expect(applied, `${r.id} is ${r.state} in the ledger but the remote applied it`).toBe(false)
    }
  }
  for (const id of t.appliedIds) {
    const r = m.records.get(id)
    expect(r, `the remote applied ${id}, which the model never saw`).toBeDefined()
    expect(['applied', 'ambiguous', 'pending'], `the remote applied ${id}; the ledger says ${r!.state}`).toContain(r!.state)
  }
}

/** the lease a caller's request would carry, as the remote holds it now */
export function remoteLeaseOf (w: World, campaign: Campaign, caller: CallerName): { mine: boolean; usableMs: number } {
  const lease = w.sim.control.lease(campaign)
  if (lease === null) return { mine: false, usableMs: -1 }
  return { mine: lease.controller_id === CONTROLLER_OF[caller], usableMs: lease.expires_at * 1000 - w.gwNow() }
}
