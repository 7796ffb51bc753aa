// The SQLite ledger's records (docs/design.md#ledger): better-sqlite3 is synchronous and one
// process owns the file, so the checks that serialise a campaign and the write they guard run in
// one transaction with nothing interleaved (docs/design.md#serialisation); every write is queued
// on the group commit and resolves once on disk.
import type Database from 'better-sqlite3'
import { bindState } from '../bind-state.js'
import { toJson, toLease, toRecord } from '../rows.js'
import type { CampaignTicket, InsertResult, MutationRecord, NewMutationRecord, Outcome, RecordPosition, RecordState, RecordStore, Resolution, StoredAnswer, UnresolvedState } from '../types.js'
import type { SqliteState } from './state.js'

type Pending = Array<{ request_id: string; campaign_id: string }>

/** the store's state with the records' own transactions, compiled once per file */
interface RecordsState extends SqliteState {
  /** the checks that serialise a campaign, then the write, in one transaction */
  serialised: Database.Transaction<(ticket: CampaignTicket, fence: boolean, write: () => boolean) => InsertResult>
  makeAmbiguous: Database.Transaction<(rows: Pending, now: number) => string[]>
}

function checkThenWrite (st: SqliteState, ticket: CampaignTicket, fence: boolean, write: () => boolean): InsertResult {
  const generation = st.s.generation.get(ticket.campaignId)?.generation ?? 0
  if (generation !== ticket.generation) return 'moved'
  const open = st.s.openState.get(ticket.campaignId)?.state
  if (open === 'pending' || (open === 'ambiguous' && !fence)) return 'blocked'
  if (!write()) return 'exists'
  st.s.bumpGeneration.run(ticket.campaignId)
  return 'inserted'
}

function turnAmbiguous (st: SqliteState, rows: Pending, now: number): string[] {
  const ids: string[] = []
  for (const r of rows) {
    const answer = toJson(st.ambiguousAnswer(r.campaign_id, r.request_id))
    if (st.s.makeAmbiguous.run({ requestId: r.request_id, answer, at: now }).changes === 1) ids.push(r.request_id)
  }
  return ids
}

/** after a won outcome or resolution write: its task, if an applied submission's, for its front-door sender */
function named (st: SqliteState, requestId: string, won: boolean): boolean {
  if (won) st.s.nameFrontTask.run({ requestId })
  return won
}

async function ticket (st: SqliteState, campaignId: string, o: { requestId?: string; lease?: boolean } = {}): Promise<CampaignTicket> {
  const generation = st.s.generation.get(campaignId)?.generation ?? 0
  const row = st.s.firstUnresolved.get(campaignId)
  const t: CampaignTicket = { campaignId, generation, blocker: row === undefined ? undefined : toRecord(row) }
  if (o.requestId !== undefined) {
    const own = st.s.get.get(o.requestId)
    t.record = own === undefined ? undefined : toRecord(own)
  }
  if (o.lease === true) {
    const lease = st.s.getLease.get(campaignId)
    t.lease = lease === undefined ? null : toLease(lease)
  }
  return t
}

async function insertPending (st: RecordsState, r: NewMutationRecord, t: CampaignTicket, o: { fence?: boolean } = {}): Promise<InsertResult> {
  if (st.s.exists.get(r.requestId) !== undefined) return 'exists'
  const { waitMs, ...rest } = r
  const params = toJson(r.params)
  return await st.write(() => st.serialised(t, o.fence === true, () => {
    if (st.s.exists.get(r.requestId) !== undefined) return false
    st.s.insertPending.run({ ...rest, deadline: st.clock() + waitMs, params })
    return true
  }))
}

async function retryUnsent (st: RecordsState, requestId: string, r: { owner: string; waitMs: number; controllerEpoch: number | null; params: unknown; at: number }, t: CampaignTicket): Promise<InsertResult> {
  const params = toJson(r.params)
  return await st.write(() => st.serialised(t, false, () =>
    st.s.retryUnsent.run({ requestId, owner: r.owner, deadline: st.clock() + r.waitMs, controllerEpoch: r.controllerEpoch, params, at: r.at }).changes === 1))
}

async function get (st: SqliteState, requestId: string): Promise<MutationRecord | undefined> {
  const row = st.s.get.get(requestId)
  return row === undefined ? undefined : toRecord(row)
}

async function listByCampaign (st: SqliteState, campaignId: string, o: { state?: RecordState; limit?: number } = {}): Promise<MutationRecord[]> {
  const limit = o.limit ?? -1 // SQLite: a negative limit is no limit
  const rows = o.state === undefined ? st.s.listByCampaign.all(campaignId, limit) : st.s.listByCampaignState.all(campaignId, o.state, limit)
  return rows.map(toRecord)
}

async function firstUnresolved (st: SqliteState, campaignId: string): Promise<MutationRecord | undefined> {
  const row = st.s.firstUnresolved.get(campaignId)
  return row === undefined ? undefined : toRecord(row)
}

async function listUnresolved (st: SqliteState, o: { state?: UnresolvedState; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  return st.s.listUnresolved.all({
    state: o.state ?? null, afterAt: o.after?.createdAt ?? Number.MIN_SAFE_INTEGER, afterId: o.after?.requestId ?? '', limit: o.limit
  }).map(toRecord)
}

// the outcome and the task it names for its front-door sender, in one savepoint of the batch
async function recordOutcome (st: SqliteState, requestId: string, o: Outcome): Promise<boolean> {
  const row = { requestId, state: o.state, answer: toJson(o.answer), outcomeCode: o.outcomeCode, taskId: o.taskId, at: o.at }
  return await st.write(() => named(st, requestId, st.s.recordOutcome.run(row).changes === 1))
}

// outcome_code stays 'ambiguous_write': it says how the send ended, the answer what replays
async function resolve (st: SqliteState, requestId: string, to: 'applied' | 'not_applied', r: Resolution, taskId: string | null, answer: StoredAnswer): Promise<boolean> {
  const row = { requestId, to, answer: toJson(answer), resolution: toJson(r), taskId, at: r.at }
  return await st.write(() => named(st, requestId, st.s.resolve.run(row).changes === 1))
}

async function noteReconcileFailure (st: SqliteState, requestId: string, at: number): Promise<void> {
  await st.write(() => st.s.noteReconcileFailure.run(at, requestId))
}

// the rows are read in the batch: what is pending when it runs, not when it was queued
async function expirePending (st: RecordsState, at: number): Promise<string[]> {
  return await st.write(() => st.makeAmbiguous(st.s.pendingBefore.all(st.clock()), at))
}

async function expireAllPending (st: RecordsState, at: number): Promise<string[]> {
  return await st.write(() => st.makeAmbiguous(st.s.allPending.all(), at))
}

async function countAmbiguous (st: SqliteState): Promise<number> {
  return st.s.countAmbiguous.get()?.n ?? 0
}

async function campaignsOfTask (st: SqliteState, taskId: string): Promise<string[]> {
  return st.s.campaignsOfTask.all(taskId).map((r) => r.campaign_id)
}

export function recordStore (base: SqliteState): RecordStore {
  const st: RecordsState = {
    ...base,
    serialised: base.db.transaction((t: CampaignTicket, fence: boolean, write: () => boolean) => checkThenWrite(base, t, fence, write)),
    makeAmbiguous: base.db.transaction((rows: Pending, now: number) => turnAmbiguous(base, rows, now))
  }
  return bindState(st, {
    ticket, insertPending, retryUnsent, get, listByCampaign, firstUnresolved, listUnresolved, recordOutcome, resolve, noteReconcileFailure, expirePending, expireAllPending, countAmbiguous, campaignsOfTask
  })
}
