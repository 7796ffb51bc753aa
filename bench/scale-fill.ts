// The scale bench's ledgers in their stores (issue 47; bench/scale.ts), filled with
// bench/scale-rows.ts's records after the gateway's own migrations, and kept: a large fill is
// slow, so it is made once and reused. The fill loads mutation_records with its secondary indexes
// (and on PostgreSQL its keys) dropped and builds them after, as sorted builds: the same indexes,
// by the same definitions, read back from the store. A kept ledger is brought to the gateway's
// current schema by the gateway's own migrations before a run (an index a new migration adds is
// built then, once); a migration that changes rows needs GENERATOR_VERSION bumped instead.
// SQLite: one file per size under node_modules/.cache/bench-scale/. PostgreSQL: one schema per
// size, `bench_scale_<size>_<p|u>_g<generator>`, marked complete by its comment only once filled.
// BENCH_SCALE_REFILL=1 fills them again.
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { ambiguousAnswer } from '../src/control/ambiguous-answer.js'
import { migrate as migrateSqlite } from '../src/ledger/sqlite/migrations.js'
import { migrate as migratePostgres } from '../src/ledger/postgres/migrations.js'
import { CALLERS, DAY, GENERATOR_VERSION, SPAN_DAYS, callerName, controllerName, scaleCampaignId, scalePlan, scaleRows, type ScalePlan, type ScaleRow } from './scale-rows.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CACHE = join(ROOT, 'node_modules', '.cache', 'bench-scale')
/** every request id the bench sends starts so; the generator's are UUIDs, so a range of the key finds them */
export const BENCH_ID_PREFIX = 'scale-'

const COLUMNS = ['request_id', 'campaign_id', 'caller', 'identity', 'operation', 'params_hash', 'params', 'controller_epoch', 'owner', 'deadline',
  'created_at', 'state', 'updated_at', 'answer', 'outcome_code', 'task_id', 'reconcile_failures', 'last_reconcile_failure_at', 'resolution', 'pruned_at'] as const satisfies ReadonlyArray<keyof ScaleRow>

export type Store = 'sqlite' | 'postgres'
/** reuse: the kept ledger itself (a run's own writes are removed before the next); copy: a copy of it; fresh: filled for this run */
export type Use = 'reuse' | 'copy' | 'fresh'
export interface LedgerSpec { store: Store; size: number; pruned: boolean; use: Use; pgBase?: string | undefined; runId: string }
export interface ScaleLedger {
  url: string
  /** seconds the fill took, when this run filled it */
  fillS: number | undefined
  /** what was done to ready it: migrations applied, a copy, earlier runs' writes removed */
  note: string
  drop: () => Promise<void>
}

const refill = (): boolean => process.env.BENCH_SCALE_REFILL === '1'
const secs = (t0: number): number => (performance.now() - t0) / 1000

// ---- SQLite -----------------------------------------------------------------------------------

/** an SQLite ledger of `plan.size` records at `path`, migrated by the gateway's own migrations */
export function fillSqlite (path: string, plan: ScalePlan, now: number, pruned = true): void {
  const db = new Database(path)
  try {
    migrateSqlite(db, ambiguousAnswer)
    // the fill's own settings, not the gateway's: it reopens the file in WAL with synchronous=FULL
    db.pragma('journal_mode = MEMORY')
    db.pragma('synchronous = OFF')
    db.pragma('cache_size = -1048576')
    const indexes = db.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'mutation_records' AND sql IS NOT NULL").all()
    for (const i of indexes) db.exec(`DROP INDEX ${i.name}`)
    const insert = db.prepare(`INSERT INTO mutation_records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')})`)
    const many = db.transaction((rows: ScaleRow[]) => { for (const r of rows) insert.run(r) })
    for (const rows of scaleRows(plan, now, 'sqlite', 10_000, pruned)) many(rows)
    for (const i of indexes) db.exec(i.sql)
    fillSqliteSide(db, plan, now)
    db.pragma('journal_mode = DELETE')
  } finally {
    db.close()
  }
}

function fillSqliteSide (db: Database.Database, plan: ScalePlan, now: number): void {
  const gen = db.prepare('INSERT INTO campaign_generations (campaign_id, generation) VALUES (?, ?)')
  const bind = db.prepare('INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at) VALUES (?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (let c = 0; c < plan.campaigns; c++) if (plan.countOf[c]! > 0) gen.run(scaleCampaignId(c), plan.countOf[c])
    for (let n = 0; n < CALLERS; n++) bind.run(controllerName(n), controllerName(n), `static:${callerName(n)}`, callerName(n), now - SPAN_DAYS * DAY)
  })()
}

/** the kept file, filled if missing (or asked), then migrated to the gateway's schema */
function keptSqlite (spec: LedgerSpec): { path: string; fillS: number | undefined; note: string } {
  mkdirSync(CACHE, { recursive: true })
  const name = `ledger-${spec.size}-${spec.pruned ? 'pruned' : 'unpruned'}-g${GENERATOR_VERSION}.db`
  // an older generator's files are never read again, and a large one is gigabytes
  for (const f of readdirSync(CACHE)) if (/^ledger-.*\.db$/.test(f) && !f.endsWith(`-g${GENERATOR_VERSION}.db`)) rmSync(join(CACHE, f), { force: true })
  const path = join(CACHE, name)
  let fillS: number | undefined
  if (!existsSync(path) || refill()) {
    const t0 = performance.now()
    const tmp = `${path}.${spec.runId}.tmp`
    fillSqlite(tmp, scalePlan(spec.size), Date.now(), spec.pruned)
    renameSync(tmp, path)
    fillS = secs(t0)
  }
  const db = new Database(path)
  try {
    const t0 = performance.now()
    const m = migrateSqlite(db, ambiguousAnswer)
    const note = m.from === m.to ? '' : `migrated ${m.from}→${m.to} in ${secs(t0).toFixed(1)} s`
    return { path, fillS, note }
  } finally {
    db.close()
  }
}

async function sqliteLedger (spec: LedgerSpec, dir: string): Promise<ScaleLedger> {
  const kept = keptSqlite(spec)
  const notes = [kept.note]
  let path = kept.path
  if (spec.use === 'reuse') {
    notes.push(forgetBenchRows(kept.path))
  } else {
    path = join(dir, 'ledger.db')
    copyFileSync(kept.path, path)
  }
  return { url: `sqlite:${path}`, fillS: kept.fillS, note: notes.filter((n) => n !== '').join('; '), drop: async () => {} }
}

/** the records earlier runs wrote into a kept file: removed, so runs do not pile up in it */
function forgetBenchRows (path: string): string {
  const db = new Database(path)
  try {
    const n = db.prepare('DELETE FROM mutation_records WHERE request_id >= ? AND request_id < ?').run(BENCH_ID_PREFIX, nextPrefix(BENCH_ID_PREFIX)).changes
    return n === 0 ? '' : `${n} records of earlier runs removed`
  } finally {
    db.close()
  }
}

const nextPrefix = (p: string): string => p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1)

// ---- PostgreSQL -------------------------------------------------------------------------------

export const schemaUrl = (base: string, schema: string): string => {
  const u = new URL(base)
  u.searchParams.set('options', `-c search_path=${schema}`)
  return u.toString()
}

async function admin<T> (base: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: base })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

/**
 * mutation_records without its secondary indexes and keys while `load` runs, then each built
 * again from its own definition (the foreign keys that name the table too): a sorted build, where
 * a row at a time into ten indexes would be most of a large fill's time
 */
async function withoutIndexes (c: pg.PoolClient, load: () => Promise<void>): Promise<void> {
  const indexes = (await c.query<{ name: string; def: string }>(`SELECT indexname AS name, indexdef AS def FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename = 'mutation_records'
      AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'mutation_records'::regclass)`)).rows
  const keys = (await c.query<{ tbl: string; name: string; def: string }>(`SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def
    FROM pg_constraint WHERE (conrelid = 'mutation_records'::regclass AND contype IN ('p', 'u'))
      OR (confrelid = 'mutation_records'::regclass AND contype = 'f')
    ORDER BY contype = 'f' DESC`)).rows
  for (const k of keys) await c.query(`ALTER TABLE ${k.tbl} DROP CONSTRAINT ${k.name}`)
  for (const i of indexes) await c.query(`DROP INDEX ${i.name}`)
  await load()
  await c.query("SET maintenance_work_mem = '1GB'")
  for (const k of [...keys].reverse()) await c.query(`ALTER TABLE ${k.tbl} ADD CONSTRAINT ${k.name} ${k.def}`)
  for (const i of indexes) await c.query(i.def)
}

/** a PostgreSQL ledger of `plan.size` records on `url`'s schema (its search_path), migrated by the gateway */
export async function fillPostgres (url: string, plan: ScalePlan, now: number, o: { pruned?: boolean; batch?: number } = {}): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migratePostgres(pool, ambiguousAnswer)
    const c = await pool.connect()
    try {
      // JSON, parsed by the server: node-postgres's array literals cost the fill three times the CPU
      const text = `INSERT INTO mutation_records (${COLUMNS.join(', ')})
        SELECT ${COLUMNS.join(', ')} FROM json_populate_recordset(NULL::mutation_records, $1::json)`
      await withoutIndexes(c, async () => {
        // the next batch is generated while the server stores the last
        let inflight: Promise<unknown> = Promise.resolve()
        for (const rows of scaleRows(plan, now, 'postgres', o.batch ?? 5000, o.pruned ?? true)) {
          const json = JSON.stringify(rows)
          await inflight
          inflight = c.query(text, [json])
        }
        await inflight
      })
      await fillPostgresSide(c, plan, now)
      // what autovacuum would have done by the time a ledger is this big: statistics, hint bits, the visibility map
      await c.query('VACUUM (ANALYZE) mutation_records')
      await c.query('ANALYZE')
    } finally {
      c.release()
    }
  } finally {
    await pool.end()
  }
}

async function fillPostgresSide (c: pg.PoolClient, plan: ScalePlan, now: number): Promise<void> {
  const gens = [...plan.countOf.keys()].filter((k) => plan.countOf[k]! > 0)
  await c.query('INSERT INTO campaign_generations (campaign_id, generation) SELECT * FROM unnest($1::text[], $2::bigint[])',
    [gens.map(scaleCampaignId), gens.map((k) => plan.countOf[k])])
  const ids = Array.from({ length: CALLERS }, (_, n) => controllerName(n))
  await c.query('INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at) SELECT *, $5::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])',
    [ids, ids, ids.map((_, n) => `static:${callerName(n)}`), ids.map((_, n) => callerName(n)), now - SPAN_DAYS * DAY])
}

const FILLED = 'bench-scale filled'

/** the kept schema, filled if missing, incomplete (no mark) or asked, then migrated to the gateway's schema */
async function keptPostgres (spec: LedgerSpec, base: string): Promise<{ schema: string; fillS: number | undefined; note: string }> {
  const schema = `bench_scale_${spec.size}_${spec.pruned ? 'p' : 'u'}_g${GENERATOR_VERSION}`
  const mark = await admin(base, async (c) => (await c.query<{ d: string | null }>("SELECT obj_description(oid, 'pg_namespace') AS d FROM pg_namespace WHERE nspname = $1", [schema])).rows[0]?.d)
  let fillS: number | undefined
  if (mark?.startsWith(FILLED) !== true || refill()) {
    await admin(base, async (c) => { await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`); await c.query(`CREATE SCHEMA ${schema}`) })
    const t0 = performance.now()
    await fillPostgres(schemaUrl(base, schema), scalePlan(spec.size), Date.now(), { pruned: spec.pruned })
    fillS = secs(t0)
    await admin(base, async (c) => await c.query(`COMMENT ON SCHEMA ${schema} IS '${FILLED} in ${fillS!.toFixed(0)} s'`))
  }
  return { schema, fillS, note: await migrateSchema(schemaUrl(base, schema)) }
}

async function migrateSchema (url: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    const t0 = performance.now()
    const m = await migratePostgres(pool, ambiguousAnswer)
    return m.from === m.to ? '' : `migrated ${m.from}→${m.to} in ${secs(t0).toFixed(1)} s`
  } finally {
    await pool.end()
  }
}

/** `to`, a new schema: the gateway's tables by its migrations, then every row of `from`'s, indexes built after */
async function copySchema (base: string, from: string, to: string): Promise<void> {
  await admin(base, async (c) => await c.query(`CREATE SCHEMA ${to}`))
  await migrateSchema(schemaUrl(base, to))
  const pool = new pg.Pool({ connectionString: schemaUrl(base, to), max: 1 })
  const c = await pool.connect()
  try {
    const tables = (await c.query<{ t: string; cols: string }>(`SELECT table_name AS t, string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS cols
      FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'ledger_schema' GROUP BY table_name
      ORDER BY table_name = 'mutation_records' DESC`, [from])).rows
    await withoutIndexes(c, async () => {
      for (const { t, cols } of tables) await c.query(`INSERT INTO ${to}.${t} (${cols}) SELECT ${cols} FROM ${from}.${t}`)
    })
    await c.query(`SELECT setval(pg_get_serial_sequence('${to}.mutation_records', 'seq'), (SELECT max(seq) FROM ${to}.mutation_records))`)
    await c.query('VACUUM (ANALYZE) mutation_records')
    await c.query('ANALYZE')
  } finally {
    c.release()
    await pool.end()
  }
}

async function postgresLedger (spec: LedgerSpec, base: string): Promise<ScaleLedger> {
  const own = `oogw_scale_${spec.runId}`
  const dropOwn = async (): Promise<void> => { await admin(base, async (c) => await c.query(`DROP SCHEMA IF EXISTS ${own} CASCADE`)) }
  if (spec.use === 'fresh') {
    await admin(base, async (c) => await c.query(`CREATE SCHEMA ${own}`))
    const t0 = performance.now()
    await fillPostgres(schemaUrl(base, own), scalePlan(spec.size), Date.now(), { pruned: spec.pruned })
    return { url: schemaUrl(base, own), fillS: secs(t0), note: '', drop: dropOwn }
  }
  const kept = await keptPostgres(spec, base)
  if (spec.use === 'copy') {
    const t0 = performance.now()
    await copySchema(base, kept.schema, own)
    return { url: schemaUrl(base, own), fillS: kept.fillS, note: [kept.note, `copied in ${secs(t0).toFixed(1)} s`].filter((n) => n !== '').join('; '), drop: dropOwn }
  }
  const url = schemaUrl(base, kept.schema)
  const removed = await admin(url, async (c) => (await c.query('DELETE FROM mutation_records WHERE request_id >= $1 AND request_id < $2', [BENCH_ID_PREFIX, nextPrefix(BENCH_ID_PREFIX)])).rowCount ?? 0)
  const note = [kept.note, removed === 0 ? '' : `${removed} records of earlier runs removed`].filter((n) => n !== '').join('; ')
  return { url, fillS: kept.fillS, note, drop: async () => {} }
}

/**
 * rows of a statement on a ledger the gateway is not running on (SQLite allows one owner), in
 * PostgreSQL's parameter style ($1 …), which SQLite is given as named parameters
 */
export async function ledgerRows<T> (url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length))
    try {
      return db.prepare<[Record<string, unknown>], T>(sql.replace(/\$(\d+)/g, '@p$1')).all(Object.fromEntries(params.map((v, k) => [`p${k + 1}`, v])))
    } finally {
      db.close()
    }
  }
  return await admin(url, async (c) => (await c.query(sql, params)).rows as T[])
}

/** the ledger a run measures, ready for the gateway: `dir` is the run's own directory */
export async function scaleLedger (spec: LedgerSpec, dir: string): Promise<ScaleLedger> {
  if (spec.store === 'sqlite') return await sqliteLedger(spec, dir)
  if (spec.pgBase === undefined) throw new Error('PostgreSQL: no URL')
  return await postgresLedger(spec, spec.pgBase)
}
