// The PostgreSQL ledger (docs/design.md#ledger): the Ledger interface on a `pg` pool, for
// several replicas sharing one database. Request-id uniqueness is the primary key (`INSERT …
// ON CONFLICT DO NOTHING`); every outcome and resolution write is compare-and-set in SQL. The
// per-campaign lock is the in-process mutex first (so one replica's waiters queue fairly and
// hold one connection at most), then a session advisory lock on a connection of its own,
// waited for within the same bound. Pending records are never expired wholesale here: another
// replica may still be waiting for one (only the periodic sweep, past each deadline).
import pg from 'pg'
import type { Logger } from 'pino'
import { createCampaignLocks } from '../campaign-locks.js'
import { FRONT_SEND_COLUMNS, RECORD_COLUMNS, controllerKey, toBinding, toBoundTask, toFrontSend, toJson, toLease, toRecord, type BindingRow, type BoundTaskRow, type FrontSendRow, type LeaseRow, type RecordRow } from '../rows.js'
import type { AmbiguousAnswer, CampaignTicket, InsertResult, Ledger } from '../types.js'
import { migrate, LedgerSchemaError } from './migrations.js'
import { redactUrl } from '../../http/redact-url.js'

export interface PostgresLedgerOptions {
  /** postgres://… (a password in it is never printed) */
  url: string
  /** what a record this store turns ambiguous answers (the control plane's rendering) */
  ambiguousAnswer: AmbiguousAnswer
  logger?: Logger
  /** the query pool's size (default 10) */
  maxConnections?: number
  /** campaign locks held at once, each on a connection of its own (default 20) */
  maxLocks?: number
  /**
   * added to the server's clock wherever the ledger reads it (tests: the histories move time for
   * the database as for everything else); default none
   */
  clockShiftMs?: (() => number) | undefined
  /** a held campaign lock's session died (a metric): noticed, never trusted */
  onLockSessionLost?: (() => void) | undefined
}

/** the first key of the campaign locks' advisory keys (pg_advisory_lock(int4, int4)) */
const LOCK_NAMESPACE = 726_011
const TRY_LOCK = 'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok'
const UNLOCK = 'SELECT pg_advisory_unlock($1, hashtext($2))'
const ENSURE_GENERATION = 'INSERT INTO campaign_generations (campaign_id, generation) VALUES ($1, 0) ON CONFLICT (campaign_id) DO NOTHING'
/** the server's clock in ms since the epoch, shifted by the parameter it names (docs/design.md#one-clock) */
const nowMs = (param: string): string => `((extract(epoch from clock_timestamp()) * 1000)::bigint + ${param}::bigint)`

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
const LEASE_COLUMNS = 'campaign_id, known, controller_id, epoch, expires_at, max_epoch_seen, updated_at'
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
 * One statement: the binding in force, or the one made now — or, when another replica made one
 * meanwhile, that one (a no-op update returns it), so a DELETE between an insert and a read cannot
 * leave nothing to answer with. Every mutation binds its controller id, and nearly always finds it
 * bound: a read then, with nothing to commit (the upsert wrote a row version and flushed the WAL
 * on every mutation).
 */
const BIND_CONTROLLER = `WITH found AS (
    SELECT controller_id, identity, caller, bound_at FROM controller_bindings WHERE controller_key = $1
  ), made AS (
    INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at)
    SELECT $1, $2, $3, $4, $5::bigint WHERE NOT EXISTS (SELECT 1 FROM found)
    ON CONFLICT (controller_key) DO UPDATE SET controller_key = controller_bindings.controller_key
    RETURNING controller_id, identity, caller, bound_at
  )
  SELECT controller_id, identity, caller, bound_at FROM found UNION ALL SELECT controller_id, identity, caller, bound_at FROM made`

/** a store call that waits longer than this is a failure (ledger_unavailable), not a hang */
const STATEMENT_TIMEOUT_MS = 5000
const CONNECT_TIMEOUT_MS = 3000

// BIGINT columns come back as numbers: every one holds ms since the epoch, an epoch or a
// sequence, all far below 2^53. pg asks for a parser per column of every result: one function
const bigintAsNumber = (v: string): number => Number(v)
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? bigintAsNumber : pg.types.getTypeParser(oid, format as 'text')
}

/**
 * Every statement is prepared once per session, by name (pg's `{ name, text }`): the server parses
 * and plans it once, and the client stops sending its text — the insert's is over a kilobyte. The
 * texts are this module's constants, so the names stay few. Result columns are always listed, never
 * a table's `*`: a prepared statement whose result shape changed under it (a newer replica's
 * migration adding a column) would fail on that session until it closed.
 */
const statementNames = new Map<string, string>()
function prepared (text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `oogw_${statementNames.size}`
    statementNames.set(text, name)
  }
  return { name, text, values }
}

/** the session died under the statement (not a refusal by the server, not a timeout) */
function connectionLost (err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown }
  if (typeof e.code === 'string' && (e.code.startsWith('08') || ['57P01', '57P02', '57P03', 'ECONNRESET', 'EPIPE'].includes(e.code))) return true
  return e.code === undefined && typeof e.message === 'string' && /Connection terminated|connection ended|Client has encountered a connection error/i.test(e.message)
}

/** a connection within `ms`, or undefined; one that arrives late goes straight back */
async function connectWithin (pool: pg.Pool, ms: number): Promise<pg.PoolClient | undefined> {
  if (ms <= 0) return undefined
  let timer: NodeJS.Timeout | undefined
  let late = false
  const connecting = pool.connect()
  const gaveUp = new Promise<undefined>((resolve) => { timer = setTimeout(() => { late = true; resolve(undefined) }, ms) })
  const client = await Promise.race([connecting, gaveUp])
  clearTimeout(timer)
  if (client === undefined && late) connecting.then((c) => { c.release() }, () => undefined)
  return client
}

export async function createPostgresLedger (opts: PostgresLedgerOptions): Promise<Ledger> {
  const poolOptions = {
    connectionString: opts.url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS + 1000,
    idleTimeoutMillis: 30_000,
    types
  }
  // two pools: a held campaign lock keeps its session for the whole mutation, so locks drawn
  // from the query pool could take every connection and starve the queries the holders need
  const pool = new pg.Pool({ ...poolOptions, max: opts.maxConnections ?? 10 })
  const lockPool = new pg.Pool({ ...poolOptions, max: opts.maxLocks ?? 20 })
  // an idle connection the server closed (a restart, pg_terminate_backend): the pool drops it and
  // connects anew on demand; the error must not crash the process
  const onIdleError = (err: Error & { code?: string }): void => { opts.logger?.warn({ code: err.code }, 'ledger connection lost; the pool reconnects on demand') }
  pool.on('error', onIdleError)
  lockPool.on('error', onIdleError)
  let migrated
  try {
    migrated = await migrate(pool, opts.ambiguousAnswer)
  } catch (err) {
    await pool.end().catch(() => undefined)
    await lockPool.end().catch(() => undefined)
    if (err instanceof LedgerSchemaError) throw err
    // the driver's own message, never the URL as given: it may carry a password
    const code = (err as { code?: string }).code
    throw new Error(`the PostgreSQL ledger at ${redactUrl(opts.url)} could not be opened${code !== undefined ? ` (${code})` : ''}`, { cause: err })
  }
  opts.logger?.info({ schemaVersion: migrated.to, migratedFrom: migrated.from }, 'ledger opened')

  /**
   * One statement on the pool, tried once more when the connection it drew was already dead (a
   * restarted server, a terminated backend: the pool does not test an idle connection before it
   * hands it out). Every statement sent this way is safe to repeat: a read, an upsert, or a
   * compare-and-set whose repeat after a lost commit finds the state moved and says it lost —
   * the safe side (an outcome write that "lost" answers ambiguous).
   */
  const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(prepared(text, values))
    } catch (err) {
      if (!connectionLost(err)) throw err
      opts.logger?.warn({ code: (err as { code?: string }).code }, 'ledger connection lost mid-statement; trying once more on another')
      return await pool.query<R>(prepared(text, values))
    }
  }
  const one = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R | undefined> => (await q<R>(text, values)).rows[0]

  const locks = createCampaignLocks()
  let closed = false
  const shift = (): number => Math.round(opts.clockShiftMs?.() ?? 0)
  // a held lock's session died (a failover, pg_terminate_backend, a pooler's idle timeout): the
  // server released the lock. Counted and logged; nothing relied on it (docs/design.md#serialisation)
  /** one handler per held lock: a dying session may report more than one error */
  const heldErrorHandler = (): ((err: Error & { code?: string }) => void) => {
    let lost = false
    return (err) => {
      if (lost) return
      lost = true
      onHeldError(err)
    }
  }
  const onHeldError = (err: Error & { code?: string }): void => {
    opts.onLockSessionLost?.()
    opts.logger?.warn({ code: err.code }, 'ledger lock session lost; the server released its lock, and the insert checks still serialise the campaign')
  }

  /**
   * An insert or retry under the campaign's checks (`serialisedStatement`). One statement is one
   * transaction: it commits whole or not at all, so a connection lost under it is tried once more
   * like any other (`q`). A repeat after a lost commit finds the request id used and answers
   * 'exists' — the safe side: nothing is sent, and the pending record is swept ambiguous.
   */
  async function serialised (ticket: CampaignTicket, fence: boolean, requestId: string, text: string, values: unknown[]): Promise<InsertResult> {
    // a campaign whose generation was never written: the row to lock must exist first (a
    // generation of 0 reads the same as none, and no other write of it can be lost)
    if (ticket.generation === 0) await q(ENSURE_GENERATION, [ticket.campaignId])
    try {
      return (await one<{ result: InsertResult }>(text, [ticket.campaignId, ticket.generation, fence, requestId, ...values]))!.result
    } catch (err) {
      // the unique index on pending records refused a second one: the campaign is busy
      if ((err as { code?: string }).code === '23505' && (err as { constraint?: string }).constraint === 'mutation_records_one_pending') return 'blocked'
      throw err
    }
  }

  /** compare-and-set from pending, one row at a time: each gets its own replayable answer */
  async function makeAmbiguous (rows: Array<{ request_id: string; campaign_id: string }>, now: number): Promise<string[]> {
    const ids: string[] = []
    for (const r of rows) {
      const res = await q(`UPDATE mutation_records SET state = 'ambiguous', outcome_code = 'ambiguous_write', answer = $2, updated_at = $3
        WHERE request_id = $1 AND state = 'pending'`, [r.request_id, toJson(opts.ambiguousAnswer(r.campaign_id, r.request_id)), now])
      if (res.rowCount === 1) ids.push(r.request_id)
    }
    return ids
  }

  const ledger: Ledger = {
    kind: 'postgres',
    singleWriter: false,
    now: async () => (await one<{ now: number }>(`SELECT ${nowMs('$1')} AS now`, [shift()]))!.now,
    ticket: async (campaignId, o = {}) => {
      const row = (await one<RecordRow & { generation: number | null; own_record: RecordRow | null; lease_view: LeaseRow | null }>(TICKET, [campaignId, o.requestId ?? null, o.lease === true]))!
      const ticket: CampaignTicket = { campaignId, generation: row.generation ?? 0, blocker: row.request_id === null ? undefined : toRecord(row) }
      if (o.requestId !== undefined) ticket.record = row.own_record === null ? undefined : toRecord(row.own_record)
      if (o.lease === true) ticket.lease = row.lease_view === null ? null : toLease(row.lease_view)
      return ticket
    },
    insertPending: async (r, ticket, o = {}) => await serialised(ticket, o.fence === true, r.requestId, INSERT_PENDING,
      [r.caller, r.operation, r.paramsHash, toJson(r.params), r.controllerEpoch, r.owner, r.waitMs, r.createdAt, shift(), r.identity]),
    retryUnsent: async (requestId, r, ticket) => await serialised(ticket, false, requestId, RETRY_UNSENT,
      [r.owner, r.waitMs, r.controllerEpoch, r.at, shift(), toJson(r.params)]),
    get: async (requestId) => {
      const row = await one<RecordRow>(RECORD_BY_ID, [requestId])
      return row === undefined ? undefined : toRecord(row)
    },
    listByCampaign: async (campaignId, o = {}) => {
      const rows = (await q<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
        WHERE campaign_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY created_at DESC, seq DESC LIMIT $3`,
      [campaignId, o.state ?? null, o.limit ?? null])).rows
      return rows.map(toRecord)
    },
    firstUnresolved: async (campaignId) => {
      const row = await one<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
        WHERE campaign_id = $1 AND state IN ('pending', 'ambiguous') ORDER BY created_at, seq LIMIT 1`, [campaignId])
      return row === undefined ? undefined : toRecord(row)
    },
    listUnresolved: async (o) => (await q<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE state IN ('pending', 'ambiguous') AND ($1::text IS NULL OR state = $1)
        AND (created_at > $2 OR (created_at = $2 AND request_id COLLATE "C" > $3))
      ORDER BY created_at, request_id COLLATE "C" LIMIT $4`,
    [o.state ?? null, o.after?.createdAt ?? Number.MIN_SAFE_INTEGER, o.after?.requestId ?? '', o.limit])).rows.map(toRecord),
    recordOutcome: async (requestId, o) =>
      (await one<{ n: number }>(RECORD_OUTCOME, [requestId, o.state, toJson(o.answer), o.outcomeCode, o.taskId, o.at]))?.n === 1,
    resolve: async (requestId, to, r, taskId, answer) =>
      (await one<{ n: number }>(RESOLVE, [requestId, to, toJson(answer), toJson(r), taskId, r.at]))?.n === 1,
    noteReconcileFailure: async (requestId, at) => {
      await q('UPDATE mutation_records SET reconcile_failures = reconcile_failures + 1, last_reconcile_failure_at = $2 WHERE request_id = $1', [requestId, at])
    },
    // judged on the server's clock, so no replica's clock can turn another's record early
    expirePending: async (at) => await makeAmbiguous((await q<{ request_id: string; campaign_id: string }>(
      `SELECT request_id, campaign_id FROM mutation_records WHERE state = 'pending' AND deadline < ${nowMs('$1')} ORDER BY created_at, seq`, [shift()])).rows, at),
    expireAllPending: async (at) => await makeAmbiguous((await q<{ request_id: string; campaign_id: string }>(
      'SELECT request_id, campaign_id FROM mutation_records WHERE state = \'pending\' ORDER BY created_at, seq')).rows, at),
    countAmbiguous: async () => (await one<{ n: number }>('SELECT count(*)::int AS n FROM mutation_records WHERE state = \'ambiguous\''))?.n ?? 0,

    getLease: async (campaignId) => {
      const row = await one<LeaseRow>(`SELECT ${LEASE_COLUMNS} FROM campaign_leases WHERE campaign_id = $1`, [campaignId])
      return row === undefined ? undefined : toLease(row)
    },
    putLease: async (campaignId, lease, at) => {
      await q(`INSERT INTO campaign_leases (campaign_id, known, controller_id, epoch, expires_at, max_epoch_seen, updated_at)
        VALUES ($1, true, $2, $3::bigint, $4::bigint, coalesce($3::bigint, 0), $5)
        ON CONFLICT (campaign_id) DO UPDATE SET known = true, controller_id = excluded.controller_id,
          epoch = excluded.epoch, expires_at = excluded.expires_at,
          max_epoch_seen = greatest(campaign_leases.max_epoch_seen, excluded.max_epoch_seen), updated_at = excluded.updated_at`,
      [campaignId, lease?.controllerId ?? null, lease?.epoch ?? null, lease?.expiresAt ?? null, at])
    },
    // the lease last seen stays (meaningful only when known); maxEpochSeen never moves down
    markLeaseUnknown: async (campaignId, at) => {
      await q(`INSERT INTO campaign_leases (campaign_id, known, updated_at) VALUES ($1, false, $2)
        ON CONFLICT (campaign_id) DO UPDATE SET known = false, updated_at = excluded.updated_at`, [campaignId, at])
    },
    forgetAllLeases: async (at) => { await q('UPDATE campaign_leases SET known = false, updated_at = $1 WHERE known', [at]) },

    getBoundTask: async (campaignId) => {
      const row = await one<BoundTaskRow>('SELECT campaign_id, task_id, request_id, bound_at FROM bound_tasks WHERE campaign_id = $1', [campaignId])
      return row === undefined ? undefined : toBoundTask(row)
    },
    setBoundTask: async (b) => {
      await q(`INSERT INTO bound_tasks (campaign_id, task_id, request_id, bound_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (campaign_id) DO UPDATE SET task_id = excluded.task_id, request_id = excluded.request_id, bound_at = excluded.bound_at`,
      [b.campaignId, b.taskId, b.requestId, b.boundAt])
    },
    clearBoundTask: async (campaignId) => { await q('DELETE FROM bound_tasks WHERE campaign_id = $1', [campaignId]) },

    exportRecords: async (o) => (await q<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE created_at >= $1 AND ($2::text IS NULL OR campaign_id = $2)
        AND (created_at > $3 OR (created_at = $3 AND request_id > $4))
      ORDER BY created_at, request_id LIMIT $5`,
    [o.since ?? 0, o.campaignId ?? null, o.after?.createdAt ?? -1, o.after?.requestId ?? '', o.limit])).rows.map(toRecord),
    // one small batch per call, so retention never holds a long lock on the request path's rows;
    // the record stays (docs/design.md#request-ids-are-forever)
    pruneResolvedBefore: async (before, limit, at) => (await q(`UPDATE mutation_records
      SET params = 'null', answer = NULL, resolution = (resolution::jsonb || '{"note": null}'::jsonb)::text, pruned_at = $3
      WHERE request_id IN (SELECT request_id FROM mutation_records
        WHERE pruned_at IS NULL AND state IN ('applied', 'rejected', 'not_applied') AND updated_at < $1
        LIMIT $2)`, [before, limit, at])).rowCount ?? 0,
    countRecords: async () => (await one<{ n: number }>('SELECT count(*)::int AS n FROM mutation_records'))?.n ?? 0,
    putRemoteClock: async (instanceId, m) => {
      await q(`INSERT INTO remote_clock (instance_id, lo_ms, hi_ms, measured_at) VALUES ($1, $2::bigint, $3::bigint, ${nowMs('$4')})
        ON CONFLICT (instance_id) DO UPDATE SET lo_ms = excluded.lo_ms, hi_ms = excluded.hi_ms, measured_at = excluded.measured_at`, [instanceId, Math.floor(m.lo), Math.ceil(m.hi), shift()])
    },
    freshRemoteClock: async (maxAgeMs) => {
      const row = await one<{ lo: string; hi: string; age: string }>(`SELECT lo_ms AS lo, hi_ms AS hi, ${nowMs('$1')} - measured_at AS age FROM remote_clock
        WHERE measured_at >= ${nowMs('$1')} - $2::bigint ORDER BY measured_at DESC LIMIT 1`, [shift(), maxAgeMs])
      return row === undefined ? undefined : { lo: Number(row.lo), hi: Number(row.hi), ageMs: Math.max(0, Number(row.age)) }
    },

    bindController: async (b) => toBinding((await one<BindingRow>(BIND_CONTROLLER, [controllerKey(b.controllerId), b.controllerId, b.identity, b.caller, b.boundAt]))!),
    listControllerBindings: async () => (await q<BindingRow>('SELECT controller_id, identity, caller, bound_at FROM controller_bindings ORDER BY controller_key COLLATE "C"')).rows.map(toBinding),
    removeControllerBinding: async (controllerId) => {
      const row = await one<BindingRow>('DELETE FROM controller_bindings WHERE controller_key = $1 RETURNING controller_id, identity, caller, bound_at', [controllerKey(controllerId)])
      return row === undefined ? undefined : toBinding(row)
    },
    // ASCII case folding, as SQLite's lower(); the ids are compared, and sorted, byte for byte
    liveLeasesOf: async (controllerId, nowMs) => (await q<{ campaign_id: string }>(`SELECT campaign_id FROM campaign_leases
      WHERE lower(controller_id COLLATE "C") = $1 AND expires_at * 1000 > $2::float8 ORDER BY campaign_id COLLATE "C"`,
    [controllerKey(controllerId), nowMs])).rows.map((r) => r.campaign_id),

    getFrontSend: async (identity, messageId) => {
      const row = await one<FrontSendRow>(`SELECT ${FRONT_SEND_COLUMNS} FROM front_sends WHERE identity = $1 AND message_id = $2`, [identity, messageId])
      return row === undefined ? undefined : toFrontSend(row)
    },
    // one statement: the send inserted now, or the one in force (a no-op update returns it)
    putFrontSend: async (f) => toFrontSend((await one<FrontSendRow>(`INSERT INTO front_sends (${FRONT_SEND_COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (identity, message_id) DO UPDATE SET identity = front_sends.identity
      RETURNING ${FRONT_SEND_COLUMNS}`, [f.identity, f.messageId, f.caller, f.contentHash, f.kind, f.campaignId, f.taskId,
      f.answer === null || f.answer === undefined ? null : toJson(f.answer), f.createdAt]))!),
    settleFrontSend: async (identity, messageId, r) => {
      await q(`UPDATE front_sends SET task_id = coalesce($3, task_id), answer = coalesce($4, answer)
        WHERE identity = $1 AND message_id = $2`, [identity, messageId, r.taskId ?? null, r.answer === undefined ? null : toJson(r.answer)])
    },
    frontTaskOf: async (identity, taskId) => {
      const row = await one<FrontSendRow>(`SELECT ${FRONT_SEND_COLUMNS} FROM front_sends
        WHERE task_id = $1 AND identity = $2 ORDER BY created_at LIMIT 1`, [taskId, identity])
      return row === undefined ? undefined : toFrontSend(row)
    },
    campaignsOfTask: async (taskId) => (await q<{ campaign_id: string }>('SELECT campaign_id FROM mutation_records WHERE task_id = $1 GROUP BY campaign_id ORDER BY campaign_id COLLATE "C"', [taskId])).rows.map((r) => r.campaign_id),
    // one small batch per call, as for the records
    pruneFrontReadsBefore: async (before, limit) => (await q(`DELETE FROM front_sends WHERE (identity, message_id) IN (
      SELECT identity, message_id FROM front_sends WHERE kind = 'read' AND created_at < $1 LIMIT $2)`, [before, limit])).rowCount ?? 0,

    lockCampaign: async (campaignId, waitMs) => {
      const started = Date.now()
      const local = await locks.lock(campaignId, waitMs)
      if (local === undefined) return undefined
      let client: pg.PoolClient | undefined
      let timeoutSet = false
      const onHeldError = heldErrorHandler()
      try {
        // every lock connection busy: wait for one within the same bound, else the campaign is busy
        client = await connectWithin(lockPool, waitMs - (Date.now() - started))
        if (client === undefined) {
          await local()
          return undefined
        }
        // a held lock's session may die (a restart, pg_terminate_backend): the server then
        // releases the lock; the client's error must not crash the process
        client.on('error', onHeldError)
        // a free lock is taken in one round trip; the server queues a try behind any waiter, so it
        // never jumps another replica's turn. Only a held one is waited for, under lock_timeout
        // (0 would mean no bound at all), set for that wait and reset at release
        if ((await client.query<{ ok: boolean }>(prepared(TRY_LOCK, [LOCK_NAMESPACE, campaignId]))).rows[0]?.ok !== true) {
          const left = Math.max(1, waitMs - (Date.now() - started))
          timeoutSet = true
          await client.query(`SET lock_timeout = ${left}`)
          await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_NAMESPACE, campaignId])
        }
      } catch (err) {
        const timedOut = (err as { code?: string }).code === '55P03'
        client?.off('error', onHeldError)
        client?.release(!timedOut)
        await local()
        if (timedOut) return undefined
        throw err
      }
      const held = client
      let released = false
      return async () => {
        if (released) return
        released = true
        try {
          await held.query(prepared(UNLOCK, [LOCK_NAMESPACE, campaignId]))
          if (timeoutSet) await held.query('RESET lock_timeout')
          held.off('error', onHeldError)
          held.release()
        } catch {
          // the session is gone, and the server released its locks with it
          held.off('error', onHeldError)
          held.release(true)
        } finally {
          await local()
        }
      }
    },
    ping: async () => {
      try {
        return (await one<{ ok: number }>('SELECT 1 AS ok'))?.ok === 1
      } catch {
        return false
      }
    },
    close: async () => {
      if (closed) return
      closed = true
      await pool.end()
      await lockPool.end()
      opts.logger?.info('ledger closed')
    }
  }
  return ledger
}
