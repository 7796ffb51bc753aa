// The PostgreSQL ledger's sessions (docs/design.md#ledger): its two pools, every statement sent
// prepared by name and tried once more on a connection found dead, the server's clock as SQL, and
// the state each of this store's role files works on. Opening them migrates the schema first.
import pg from 'pg'
import type { Logger } from 'pino'
import { createCampaignLocks, type CampaignLocks } from '../campaign-locks.js'
import type { AmbiguousAnswer } from '../types.js'
import { migrate, LedgerSchemaError } from './migrations.js'
import { redactUrl } from '../../core/redact-url.js'

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

/** what every role of this store works on */
export interface PgState {
  opts: PostgresLedgerOptions
  /** the queries' pool */
  pool: pg.Pool
  /**
   * the campaign locks' pool: a held campaign lock keeps its session for the whole mutation, so
   * locks drawn from the query pool could take every connection and starve the queries the holders need
   */
  lockPool: pg.Pool
  /** the in-process mutex each campaign lock takes first */
  locks: CampaignLocks
  closed: boolean
}

/** the server's clock in ms since the epoch, shifted by the parameter it names (docs/design.md#one-clock) */
export const nowMs = (param: string): string => `((extract(epoch from clock_timestamp()) * 1000)::bigint + ${param}::bigint)`

/** the shift the tests give the server's clock, the parameter `nowMs` names */
export const shift = (st: PgState): number => Math.round(st.opts.clockShiftMs?.() ?? 0)

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
 * texts are this store's constants, so the names stay few. Result columns are always listed, never
 * a table's `*`: a prepared statement whose result shape changed under it (a newer replica's
 * migration adding a column) would fail on that session until it closed.
 */
const statementNames = new Map<string, string>()
export function prepared (text: string, values: unknown[]): pg.QueryConfig {
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

/**
 * One statement on the pool, tried once more when the connection it drew was already dead (a
 * restarted server, a terminated backend: the pool does not test an idle connection before it
 * hands it out). Every statement sent this way is safe to repeat: a read, an upsert, or a
 * compare-and-set whose repeat after a lost commit finds the state moved and says it lost —
 * the safe side (an outcome write that "lost" answers ambiguous).
 */
export async function q<R extends pg.QueryResultRow> (st: PgState, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  try {
    return await st.pool.query<R>(prepared(text, values))
  } catch (err) {
    if (!connectionLost(err)) throw err
    st.opts.logger?.warn({ code: (err as { code?: string }).code }, 'ledger connection lost mid-statement; trying once more on another')
    return await st.pool.query<R>(prepared(text, values))
  }
}

/** the first row of one statement (`q`), if any */
export async function one<R extends pg.QueryResultRow> (st: PgState, text: string, values: unknown[] = []): Promise<R | undefined> {
  return (await q<R>(st, text, values)).rows[0]
}

/** both pools, the schema migrated; throws what the server said, never the URL as given */
export async function openSession (opts: PostgresLedgerOptions): Promise<PgState> {
  const poolOptions = {
    connectionString: opts.url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS + 1000,
    idleTimeoutMillis: 30_000,
    types
  }
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
  return { opts, pool, lockPool, locks: createCampaignLocks(), closed: false }
}

export async function ping (st: PgState): Promise<boolean> {
  try {
    return (await one<{ ok: number }>(st, 'SELECT 1 AS ok'))?.ok === 1
  } catch {
    return false
  }
}

export async function close (st: PgState): Promise<void> {
  if (st.closed) return
  st.closed = true
  await st.pool.end()
  await st.lockPool.end()
  st.opts.logger?.info('ledger closed')
}
