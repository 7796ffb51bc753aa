// The PostgreSQL ledger's records (docs/design.md#ledger): request-id uniqueness is the primary
// key (`INSERT … ON CONFLICT DO NOTHING`); every outcome and resolution write is compare-and-set in
// SQL. Pending records are never expired wholesale here: another replica may still be waiting for
// one (only the periodic sweep, past each deadline).
import { bindState } from '../bind-state.js'
import { RECORD_COLUMNS, toJson, toLease, toRecord, type LeaseRow, type RecordRow } from '../rows.js'
import type { CampaignTicket, InsertResult, MutationRecord, NewMutationRecord, Outcome, RecordPosition, RecordState, RecordStore, Resolution, StoredAnswer, UnresolvedState } from '../types.js'
import { LEASE_COLUMNS } from './leases.js'
import { nowMs, one, q, shift, type PgState } from './session.js'

const ENSURE_GENERATION = 'INSERT INTO campaign_generations (campaign_id, generation) VALUES ($1, 0) ON CONFLICT (campaign_id) DO NOTHING'

/**
 * The checks that serialise a campaign, then `write`, as one statement (docs/design.md#serialisation):
 * it holds the campaign's generation row FOR UPDATE, so every other insert of the campaign waits
 * for it; a waiter then reads the row's newest version (READ COMMITTED) and finds the generation
 * moved. Its other reads see the statement's snapshot, taken before that wait — enough, because
 * whatever makes a record pending also moves the generation, and a record seen still pending or
 * ambiguous only refuses. The unique index on pending records is the store's last word: a second
 * pending record of a campaign cannot be written at all. `write` is a data-modifying CTE that
 * writes only while `refused` (the checks' verdict, null: none) is null; its own parameters start
 * at $5 ($1 campaign, $2 the ticket's generation, $3 fence, $4 request id).
 */
const serialisedStatement = (existsFirst: boolean, write: string): string => `WITH gen AS (
    SELECT generation FROM campaign_generations WHERE campaign_id = $1 FOR UPDATE
  ), open AS (
    SELECT state FROM mutation_records WHERE campaign_id = $1 AND state IN ('pending', 'ambiguous') ORDER BY state = 'pending' DESC LIMIT 1
  ), verdict AS (
    SELECT CASE
      WHEN ${existsFirst ? 'EXISTS (SELECT 1 FROM mutation_records WHERE request_id = $4)' : 'false'} THEN 'exists'
      WHEN (SELECT generation FROM gen) IS DISTINCT FROM $2::bigint THEN 'moved'
      WHEN (SELECT state FROM open) = 'pending' OR ((SELECT state FROM open) = 'ambiguous' AND NOT $3::boolean) THEN 'blocked'
    END AS refused
  ), written AS (${write}
  ), bumped AS (
    UPDATE campaign_generations SET generation = generation + 1 WHERE campaign_id = $1 AND EXISTS (SELECT 1 FROM written)
  )
  SELECT coalesce((SELECT refused FROM verdict), CASE WHEN EXISTS (SELECT 1 FROM written) THEN 'inserted' ELSE 'exists' END) AS result`

// the hot path's statements, built once: a text built per call is also hashed per call to find its name
// the deadline on the server's clock, read in the insert itself (docs/design.md#one-clock)
const INSERT_PENDING = serialisedStatement(true, `INSERT INTO mutation_records
    (request_id, campaign_id, caller, identity, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
    SELECT $4, $1, $5, $14, $6, $7, $8, $9::bigint, $10, ${nowMs('$13')} + $11::bigint, $12::bigint, 'pending', $12::bigint
    WHERE (SELECT refused FROM verdict) IS NULL
    ON CONFLICT (request_id) DO NOTHING RETURNING 1`)
// only a record that provably never left (upstream_unavailable is written for nothing sent alone)
const RETRY_UNSENT = serialisedStatement(false, `UPDATE mutation_records
    SET state = 'pending', owner = $5, deadline = ${nowMs('$9')} + $6::bigint, controller_epoch = $7::bigint, params = $10, answer = NULL, outcome_code = NULL,
      pruned_at = NULL, updated_at = $8::bigint
    WHERE request_id = $4 AND state = 'rejected' AND outcome_code = 'upstream_unavailable' AND (SELECT refused FROM verdict) IS NULL
    RETURNING 1`)
const RECORD_BY_ID = `SELECT ${RECORD_COLUMNS} FROM mutation_records WHERE request_id = $1`
/**
 * An outcome or resolution write ($1 the request id; `write` an UPDATE of the record that returns
 * its row when it won) and, in the same statement, the task of an applied submission named on its
 * sender's front-door send (docs/design.md#front-door): the record's own identity, campaign and
 * task, found by the send's key. One statement is one transaction, so the two commit together.
 */
const namingFrontTask = (write: string): string => `WITH won AS (${write}
    RETURNING identity, campaign_id, operation, state, task_id
  ), named AS (
    UPDATE front_sends SET task_id = won.task_id FROM won
    WHERE won.operation = 'submit' AND won.state = 'applied' AND won.task_id IS NOT NULL
      AND front_sends.identity = won.identity AND front_sends.message_id = $1 AND front_sends.kind = 'submit'
      AND front_sends.campaign_id = won.campaign_id AND front_sends.task_id IS NULL
  )
  SELECT count(*)::int AS n FROM won`
const RECORD_OUTCOME = namingFrontTask(`UPDATE mutation_records
    SET state = $2, answer = $3, outcome_code = $4, task_id = $5, updated_at = $6
    WHERE request_id = $1 AND state = 'pending'`)
// outcome_code stays 'ambiguous_write': it says how the send ended, the answer what replays
const RESOLVE = namingFrontTask(`UPDATE mutation_records
    SET state = $2, answer = $3, resolution = $4, task_id = coalesce($5, task_id), updated_at = $6
    WHERE request_id = $1 AND state = 'ambiguous'`)
// one statement, so one snapshot: the generation and the oldest unresolved record as of one
// moment — and, when asked ($2 a request id, $3 true), that id's record and the lease view, each
// as JSON (its columns as the row has them: BIGINT a number, JSON kept as its text)
const TICKET = `SELECT (SELECT generation FROM campaign_generations WHERE campaign_id = $1) AS generation,
    (SELECT to_json(x) FROM (SELECT ${RECORD_COLUMNS} FROM mutation_records WHERE request_id = $2::text) AS x) AS own_record,
    (SELECT to_json(l) FROM (SELECT ${LEASE_COLUMNS} FROM campaign_leases WHERE campaign_id = $1 AND $3::boolean) AS l) AS lease_view,
    r.*
  FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE campaign_id = $1 AND state IN ('pending', 'ambiguous') ORDER BY created_at, seq LIMIT 1) AS r ON true`

/**
 * An insert or retry under the campaign's checks (`serialisedStatement`). One statement is one
 * transaction: it commits whole or not at all, so a connection lost under it is tried once more
 * like any other (`q`). A repeat after a lost commit finds the request id used and answers
 * 'exists' — the safe side: nothing is sent, and the pending record is swept ambiguous.
 */
async function serialised (st: PgState, ticket: CampaignTicket, fence: boolean, requestId: string, text: string, values: unknown[]): Promise<InsertResult> {
  // a campaign whose generation was never written: the row to lock must exist first (a
  // generation of 0 reads the same as none, and no other write of it can be lost)
  if (ticket.generation === 0) await q(st, ENSURE_GENERATION, [ticket.campaignId])
  try {
    return (await one<{ result: InsertResult }>(st, text, [ticket.campaignId, ticket.generation, fence, requestId, ...values]))!.result
  } catch (err) {
    // the unique index on pending records refused a second one: the campaign is busy
    if ((err as { code?: string }).code === '23505' && (err as { constraint?: string }).constraint === 'mutation_records_one_pending') return 'blocked'
    throw err
  }
}

/** compare-and-set from pending, one row at a time: each gets its own replayable answer */
async function makeAmbiguous (st: PgState, rows: Array<{ request_id: string; campaign_id: string }>, now: number): Promise<string[]> {
  const ids: string[] = []
  for (const r of rows) {
    const res = await q(st, `UPDATE mutation_records SET state = 'ambiguous', outcome_code = 'ambiguous_write', answer = $2, updated_at = $3
      WHERE request_id = $1 AND state = 'pending'`, [r.request_id, toJson(st.opts.ambiguousAnswer(r.campaign_id, r.request_id)), now])
    if (res.rowCount === 1) ids.push(r.request_id)
  }
  return ids
}

async function ticket (st: PgState, campaignId: string, o: { requestId?: string; lease?: boolean } = {}): Promise<CampaignTicket> {
  const row = (await one<RecordRow & { generation: number | null; own_record: RecordRow | null; lease_view: LeaseRow | null }>(st, TICKET, [campaignId, o.requestId ?? null, o.lease === true]))!
  const t: CampaignTicket = { campaignId, generation: row.generation ?? 0, blocker: row.request_id === null ? undefined : toRecord(row) }
  if (o.requestId !== undefined) t.record = row.own_record === null ? undefined : toRecord(row.own_record)
  if (o.lease === true) t.lease = row.lease_view === null ? null : toLease(row.lease_view)
  return t
}

async function insertPending (st: PgState, r: NewMutationRecord, t: CampaignTicket, o: { fence?: boolean } = {}): Promise<InsertResult> {
  return await serialised(st, t, o.fence === true, r.requestId, INSERT_PENDING,
    [r.caller, r.operation, r.paramsHash, toJson(r.params), r.controllerEpoch, r.owner, r.waitMs, r.createdAt, shift(st), r.identity])
}

async function retryUnsent (st: PgState, requestId: string, r: { owner: string; waitMs: number; controllerEpoch: number | null; params: unknown; at: number }, t: CampaignTicket): Promise<InsertResult> {
  return await serialised(st, t, false, requestId, RETRY_UNSENT, [r.owner, r.waitMs, r.controllerEpoch, r.at, shift(st), toJson(r.params)])
}

async function get (st: PgState, requestId: string): Promise<MutationRecord | undefined> {
  const row = await one<RecordRow>(st, RECORD_BY_ID, [requestId])
  return row === undefined ? undefined : toRecord(row)
}

async function listByCampaign (st: PgState, campaignId: string, o: { state?: RecordState; limit?: number } = {}): Promise<MutationRecord[]> {
  const rows = (await q<RecordRow>(st, `SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE campaign_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY created_at DESC, seq DESC LIMIT $3`,
  [campaignId, o.state ?? null, o.limit ?? null])).rows
  return rows.map(toRecord)
}

async function firstUnresolved (st: PgState, campaignId: string): Promise<MutationRecord | undefined> {
  const row = await one<RecordRow>(st, `SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE campaign_id = $1 AND state IN ('pending', 'ambiguous') ORDER BY created_at, seq LIMIT 1`, [campaignId])
  return row === undefined ? undefined : toRecord(row)
}

// the position as a row value, the index's condition: a page seeks to it, where `created_at > $2 OR
// (created_at = $2 AND …)` read the index from its start on every page (docs/design.md#ledger)
async function listUnresolved (st: PgState, o: { state?: UnresolvedState; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  return (await q<RecordRow>(st, `SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE state IN ('pending', 'ambiguous') AND ($1::text IS NULL OR state = $1)
      AND (created_at, request_id COLLATE "C") > ($2, $3)
    ORDER BY created_at, request_id COLLATE "C" LIMIT $4`,
  [o.state ?? null, o.after?.createdAt ?? Number.MIN_SAFE_INTEGER, o.after?.requestId ?? '', o.limit])).rows.map(toRecord)
}

async function recordOutcome (st: PgState, requestId: string, o: Outcome): Promise<boolean> {
  return (await one<{ n: number }>(st, RECORD_OUTCOME, [requestId, o.state, toJson(o.answer), o.outcomeCode, o.taskId, o.at]))?.n === 1
}

async function resolve (st: PgState, requestId: string, to: 'applied' | 'not_applied', r: Resolution, taskId: string | null, answer: StoredAnswer): Promise<boolean> {
  return (await one<{ n: number }>(st, RESOLVE, [requestId, to, toJson(answer), toJson(r), taskId, r.at]))?.n === 1
}

async function noteReconcileFailure (st: PgState, requestId: string, at: number): Promise<void> {
  await q(st, 'UPDATE mutation_records SET reconcile_failures = reconcile_failures + 1, last_reconcile_failure_at = $2 WHERE request_id = $1', [requestId, at])
}

// judged on the server's clock, so no replica's clock can turn another's record early
async function expirePending (st: PgState, at: number): Promise<string[]> {
  return await makeAmbiguous(st, (await q<{ request_id: string; campaign_id: string }>(st,
    `SELECT request_id, campaign_id FROM mutation_records WHERE state = 'pending' AND deadline < ${nowMs('$1')} ORDER BY created_at, seq`, [shift(st)])).rows, at)
}

async function expireAllPending (st: PgState, at: number): Promise<string[]> {
  return await makeAmbiguous(st, (await q<{ request_id: string; campaign_id: string }>(st,
    'SELECT request_id, campaign_id FROM mutation_records WHERE state = \'pending\' ORDER BY created_at, seq')).rows, at)
}

async function countAmbiguous (st: PgState): Promise<number> {
  return (await one<{ n: number }>(st, 'SELECT count(*)::int AS n FROM mutation_records WHERE state = \'ambiguous\''))?.n ?? 0
}

async function campaignsOfTask (st: PgState, taskId: string): Promise<string[]> {
  return (await q<{ campaign_id: string }>(st, 'SELECT campaign_id FROM mutation_records WHERE task_id = $1 GROUP BY campaign_id ORDER BY campaign_id COLLATE "C"', [taskId])).rows.map((r) => r.campaign_id)
}

export const recordStore = (st: PgState): RecordStore => bindState(st, {
  ticket, insertPending, retryUnsent, get, listByCampaign, firstUnresolved, listUnresolved, recordOutcome, resolve, noteReconcileFailure, expirePending, expireAllPending, countAmbiguous, campaignsOfTask
})
