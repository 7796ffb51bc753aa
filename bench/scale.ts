// npm run bench -- --scale (issue 47's groundwork): the ledger at size. For each size of
// BENCH_SCALE_SIZES (default 10000,100000) and each store — an SQLite file, and PostgreSQL on a
// fresh schema with BENCH_POSTGRES_URL or TEST_POSTGRES_URL (else skipped, saying so) — a ledger
// is filled directly in the store (one transaction per batch: prepared statements on SQLite,
// multi-row INSERT … SELECT FROM unnest on PostgreSQL), after the gateway's own migrations, with
// rows as the gateway writes them (`scaleRows`): callers' bodies, the real params hash, stored
// answers built by the control plane's own renderers, deadlines, retention's pruning of records
// older than 90 days. A filled SQLite file is cached under node_modules/.cache/bench-scale/
// (keyed by size, schema version and this generator's version) and copied for each run, since
// a run writes to it. Then the gateway starts in a process of its own (compiled, as bench/compare.ts
// runs its children; BENCH_SCALE_ROLE=gateway runs this file as that child) against the
// simulator (bench/simulator-child.ts, its own process), and the bench measures: start (fork to
// listening, migrations included), the listings, a record by id, reconcile of an ambiguous
// record, mutations serial and 32 in flight, the ledger's size on disk, and `ledger export`'s
// time and peak RSS (/usr/bin/time). Then a table, and the issue's targets judged: at the largest
// size a mutation's p99 and the listings' p99 within 1.5× of their 10k figures, start under 5 s.
// No network beyond 127.0.0.1 and the PostgreSQL URL given.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { Pool } from 'undici'
import { sha256Hex } from '../src/callers/tokens.js'
import { ambiguousAnswer } from '../src/control/ambiguous-answer.js'
import { paramsHash } from '../src/control/rules.js'
import { requestView } from '../src/control/views.js'
import { GatewayError, type ErrorCode } from '../src/core/errors.js'
import { migrate as migrateSqlite, migrations as sqliteMigrations } from '../src/ledger/sqlite/migrations.js'
import { migrate as migratePostgres, migrations as postgresMigrations } from '../src/ledger/postgres/migrations.js'
import { toRecord, type RecordRow } from '../src/ledger/rows.js'
import type { MutationOperation, Resolution } from '../src/ledger/types.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** bump when the rows generated change: the cached files are keyed by it */
const GENERATOR_VERSION = 1
const DAY = 86_400_000
/** the retention the gateway prunes at by default (docs/design.md#operating-the-ledger) */
const RETENTION_DAYS = 90
/** the records span this many days before the fill */
const SPAN_DAYS = 180
const CALLERS = 1000
const MAX_CAMPAIGNS = 100_000
/** a campaign's share whose last record is ambiguous (it blocks the campaign until resolved) */
const AMBIGUOUS_SHARE = 0.1
const SEED = 47

// ---- the rows -------------------------------------------------------------------------------

/** a deterministic 32-bit hash of (i, k): the request ids are a function of the record's index */
function mix (i: number, k: number): number {
  let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(k + 0x27d4eb2f, 0xc2b2ae35)
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b)
  return (h ^ (h >>> 16)) >>> 0
}
const hex8 = (n: number): string => n.toString(16).padStart(8, '0')

/** a UUID-shaped request id, as clients send (version 4's layout) */
export function scaleRequestId (i: number): string {
  const a = hex8(mix(i, 1)); const b = hex8(mix(i, 2)); const c = hex8(mix(i, 3)); const d = hex8(mix(i, 4))
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${(8 + (mix(i, 5) & 3)).toString(16)}${c.slice(1, 4)}-${c.slice(4)}${d}`
}
export const scaleCampaignId = (c: number): string => `scale-c${String(c).padStart(6, '0')}`
const callerName = (n: number): string => `caller-${String(n).padStart(4, '0')}`

/** mulberry32 */
function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** which campaign each record belongs to, and what each campaign's last record is */
export interface ScalePlan {
  size: number
  campaigns: number
  campaignOf: Uint32Array
  /** per campaign: the index of its last record (-1: none) */
  lastOf: Int32Array
  /** per campaign: how many records (its generation: each was inserted pending once) */
  countOf: Uint32Array
  /** campaigns whose last record is ambiguous, and the few whose last is pending */
  ambiguous: Set<number>
  pending: Set<number>
}

export function scalePlan (size: number): ScalePlan {
  const campaigns = Math.max(1, Math.min(MAX_CAMPAIGNS, Math.ceil(size / 10)))
  const rnd = prng(SEED)
  const campaignOf = new Uint32Array(size)
  const lastOf = new Int32Array(campaigns).fill(-1)
  const countOf = new Uint32Array(campaigns)
  for (let i = 0; i < size; i++) {
    // skewed: a few campaigns are busy, most see a few mutations
    const u = rnd()
    const c = u < 0.2 ? Math.floor(rnd() * Math.max(1, campaigns / 100)) : Math.floor(rnd() * campaigns)
    campaignOf[i] = c
    lastOf[c] = i
    countOf[c]!++
  }
  const ambiguous = new Set<number>()
  const pending = new Set<number>()
  const pendingWanted = Math.max(1, Math.round(campaigns / 1000))
  for (let c = 0; c < campaigns; c++) {
    if (lastOf[c] === -1) continue
    const u = rnd()
    if (pending.size < pendingWanted && u < 0.002) pending.add(c)
    else if (u < AMBIGUOUS_SHARE) ambiguous.add(c)
  }
  return { size, campaigns, campaignOf, lastOf, countOf, ambiguous, pending }
}

/**
 * one mutation_records row, every column the stores write: the row the stores read
 * (src/ledger/rows.ts) with what the generator always fills in, and the reconcile failure's time
 */
export type ScaleRow = RecordRow & { identity: string; operation: MutationOperation; last_reconcile_failure_at: number | null }

/** JSON text as PostgreSQL's jsonb prints an object of scalars: keys by length then bytes, ", " and ": " */
function jsonbText (o: Record<string, unknown>): string {
  const keys = Object.keys(o).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(o[k])}`).join(', ')}}`
}

const REJECTIONS: ErrorCode[] = ['stale_epoch', 'lease_held_by_other', 'lease_expired', 'policy_rejected', 'upstream_unavailable']

/**
 * The rows of a ledger of `plan.size` records ending at `now`, oldest first, in batches. `store`
 * decides only how a pruned resolution's text reads (SQLite's json_set keeps the text compact,
 * PostgreSQL's jsonb concatenation prints it its own way), as each store's prune writes it.
 */
export function * scaleRows (plan: ScalePlan, now: number, store: 'sqlite' | 'postgres', batch = 5000): Generator<ScaleRow[]> {
  const rnd = prng(SEED + 1)
  const start = now - SPAN_DAYS * DAY
  const step = (SPAN_DAYS * DAY - 3_600_000) / Math.max(1, plan.size)
  const pruneBefore = now - RETENTION_DAYS * DAY
  const owners = Array.from({ length: 8 }, (_, k) => `gw-${hex8(mix(k, 99))}${hex8(mix(k, 98))}`)
  let rows: ScaleRow[] = []
  for (let i = 0; i < plan.size; i++) {
    const c = plan.campaignOf[i]!
    const campaignId = scaleCampaignId(c)
    const requestId = scaleRequestId(i)
    const who = rnd() < 0.9 ? c % CALLERS : Math.floor(rnd() * CALLERS)
    const caller = callerName(who)
    const last = plan.lastOf[c] === i
    const isPending = last && plan.pending.has(c)
    const isAmbiguous = last && plan.ambiguous.has(c)
    let createdAt = Math.round(start + i * step)
    if (isPending) createdAt = now - 2000 - Math.floor(rnd() * 8000)
    const u = rnd()
    const operation: MutationOperation = u < 0.75 ? 'intervene' : u < 0.83 ? 'claim' : u < 0.91 ? 'renew' : u < 0.95 ? 'release' : 'submit'
    const epoch = 1 + Math.floor(rnd() * 20)
    const body: Record<string, unknown> = { requestId }
    if (operation === 'intervene') body.intervention = { action: 'adjust', knob: 'lr_scale', value: Math.round(rnd() * 100) / 100, seq: i }
    else if (operation === 'claim' || operation === 'renew') body.ttlSeconds = 300
    else if (operation === 'submit') body.parts = [{ kind: 'text', text: `resume from checkpoint ${i % 97}` }]
    const waitMs = 45_000 + (operation === 'renew' ? 15_000 : 0)
    const deadline = createdAt + waitMs
    const row: ScaleRow = {
      request_id: requestId,
      campaign_id: campaignId,
      caller,
      identity: `static:${caller}`,
      operation,
      params_hash: paramsHash(operation, campaignId, body),
      params: JSON.stringify(body),
      controller_epoch: operation === 'claim' ? null : epoch,
      owner: owners[Math.min(owners.length - 1, Math.floor((i / plan.size) * owners.length))]!,
      deadline,
      created_at: createdAt,
      state: 'applied',
      updated_at: createdAt + 20 + Math.floor(rnd() * 400),
      answer: null,
      outcome_code: null,
      task_id: null,
      reconcile_failures: 0,
      last_reconcile_failure_at: null,
      resolution: null,
      pruned_at: null
    }
    const v = rnd()
    if (isPending) {
      row.state = 'pending'
      row.updated_at = createdAt
    } else if (isAmbiguous) {
      row.state = 'ambiguous'
      row.outcome_code = 'ambiguous_write'
      row.answer = JSON.stringify(ambiguousAnswer(campaignId, requestId))
      row.updated_at = createdAt + 12_000
      if (rnd() < 0.1) { row.reconcile_failures = 1; row.last_reconcile_failure_at = createdAt + 600_000 }
    } else if (v < 0.06) {
      const e = new GatewayError(REJECTIONS[Math.floor(rnd() * REJECTIONS.length)]!, { requestId })
      row.state = 'rejected'
      row.outcome_code = e.code
      row.answer = JSON.stringify({ httpStatus: e.statusCode, body: e.toBody() })
    } else if (v < 0.12) {
      // an ambiguous record, resolved later by reconcile or an admin's acknowledgement
      const to = rnd() < 0.67 ? 'applied' : 'not_applied'
      const at = createdAt + 60_000 + Math.floor(rnd() * 3_600_000)
      const ack = rnd() < 0.2
      const res: Resolution = { kind: ack ? 'acknowledge' : 'reconcile', by: ack ? 'admin-ops' : caller, at, note: ack ? 'checked with the trainer' : null, resolution: ack ? (to === 'applied' ? 'assume_applied' : 'assume_not_applied') : null }
      row.state = to
      row.outcome_code = 'ambiguous_write'
      row.updated_at = at
      row.task_id = to === 'applied' && operation === 'submit' ? `task-${hex8(mix(i, 7))}` : null
      if (ack) { row.reconcile_failures = 1; row.last_reconcile_failure_at = at - 30_000 }
      row.resolution = JSON.stringify(res)
      row.answer = JSON.stringify({ httpStatus: 200, body: requestView(toRecord(row), null) })
    } else {
      const expiresAt = Math.floor((createdAt + 300_000) / 1000)
      const lease = { controllerId: `ctl-${String(who).padStart(4, '0')}`, epoch, expiresAt }
      if (operation === 'submit') {
        row.task_id = `task-${hex8(mix(i, 7))}`
        row.answer = JSON.stringify({ httpStatus: 202, body: { requestId, taskId: row.task_id, state: 'submitted' } })
      } else {
        const out = operation === 'intervene' ? { accepted: true } : operation === 'release' ? { released: true } : { lease }
        row.answer = JSON.stringify({ httpStatus: 200, body: { requestId, campaignId, ...out } })
      }
    }
    // retention (docs/design.md#request-ids-are-forever): the record stays, what was sent and answered goes
    if (row.updated_at < pruneBefore && (row.state === 'applied' || row.state === 'rejected' || row.state === 'not_applied')) {
      row.pruned_at = row.updated_at + RETENTION_DAYS * DAY + Math.floor(rnd() * 3_600_000)
      row.params = 'null'
      row.answer = null
      if (row.resolution !== null) {
        const r = { ...(JSON.parse(row.resolution) as Record<string, unknown>), note: null }
        row.resolution = store === 'sqlite' ? JSON.stringify(r) : jsonbText(r)
      }
    }
    rows.push(row)
    if (rows.length === batch) { yield rows; rows = [] }
  }
  if (rows.length > 0) yield rows
}

const COLUMNS = ['request_id', 'campaign_id', 'caller', 'identity', 'operation', 'params_hash', 'params', 'controller_epoch', 'owner', 'deadline',
  'created_at', 'state', 'updated_at', 'answer', 'outcome_code', 'task_id', 'reconcile_failures', 'last_reconcile_failure_at', 'resolution', 'pruned_at'] as const
const PG_TYPES: Record<(typeof COLUMNS)[number], string> = {
  request_id: 'text',
  campaign_id: 'text',
  caller: 'text',
  identity: 'text',
  operation: 'text',
  params_hash: 'text',
  params: 'text',
  controller_epoch: 'bigint',
  owner: 'text',
  deadline: 'bigint',
  created_at: 'bigint',
  state: 'text',
  updated_at: 'bigint',
  answer: 'text',
  outcome_code: 'text',
  task_id: 'text',
  reconcile_failures: 'integer',
  last_reconcile_failure_at: 'bigint',
  resolution: 'text',
  pruned_at: 'bigint'
}

/** an SQLite ledger of `plan.size` records at `path`, migrated by the gateway's own migrations */
export function fillSqlite (path: string, plan: ScalePlan, now: number): void {
  const db = new Database(path)
  try {
    migrateSqlite(db, ambiguousAnswer)
    // the fill's own settings, not the gateway's: it reopens the file in WAL with synchronous=FULL
    db.pragma('journal_mode = MEMORY')
    db.pragma('synchronous = OFF')
    db.pragma('cache_size = -262144')
    const insert = db.prepare(`INSERT INTO mutation_records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')})`)
    const many = db.transaction((rows: ScaleRow[]) => { for (const r of rows) insert.run(r) })
    for (const rows of scaleRows(plan, now, 'sqlite', 10_000)) many(rows)
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
    for (let n = 0; n < CALLERS; n++) {
      const id = `ctl-${String(n).padStart(4, '0')}`
      bind.run(id, id, `static:${callerName(n)}`, callerName(n), now - SPAN_DAYS * DAY)
    }
  })()
}

/** a PostgreSQL ledger of `plan.size` records on `url`'s schema (its search_path), migrated by the gateway */
export async function fillPostgres (url: string, plan: ScalePlan, now: number, batch = 5000): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migratePostgres(pool, ambiguousAnswer)
    const c = await pool.connect()
    try {
      const text = `INSERT INTO mutation_records (${COLUMNS.join(', ')})
        SELECT * FROM unnest(${COLUMNS.map((col, k) => `$${k + 1}::${PG_TYPES[col]}[]`).join(', ')})`
      for (const rows of scaleRows(plan, now, 'postgres', batch)) {
        await c.query('BEGIN')
        await c.query(text, COLUMNS.map((col) => rows.map((r) => r[col])))
        await c.query('COMMIT')
      }
      const gens = [...plan.countOf.keys()].filter((k) => plan.countOf[k]! > 0)
      await c.query('INSERT INTO campaign_generations (campaign_id, generation) SELECT * FROM unnest($1::text[], $2::bigint[])',
        [gens.map(scaleCampaignId), gens.map((k) => plan.countOf[k])])
      const ids = Array.from({ length: CALLERS }, (_, n) => `ctl-${String(n).padStart(4, '0')}`)
      await c.query('INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at) SELECT *, $5::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])',
        [ids, ids, ids.map((_, n) => `static:${callerName(n)}`), ids.map((_, n) => callerName(n)), now - SPAN_DAYS * DAY])
      // what autovacuum's analyze would have done by the time a ledger is this big
      await c.query('ANALYZE')
    } finally {
      c.release()
    }
  } finally {
    await pool.end()
  }
}

// ---- the gateway child ----------------------------------------------------------------------

if (process.env.BENCH_SCALE_ROLE === 'gateway') {
  const { loadConfig } = await import('../src/config/index.js')
  const { startGatewayServer } = await import('../src/server.js')
  const { serveParent } = await import('./child-ipc.js')
  const gw = await startGatewayServer(loadConfig(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>))
  serveParent(gw.url, async () => { await gw.close() })
}

// ---- the bench ------------------------------------------------------------------------------

interface Figures {
  store: string
  size: number
  fillS: number
  startMs: number
  campaignList: number[]
  unresolvedList: number[]
  byId: number[]
  reconcile: number[]
  reconcileStatuses: string
  serial: Phase
  concurrent: Phase
  bytes: number
  exportS: number | undefined
  exportRssKb: number | undefined
  exportNote: string
}
interface Phase { rate: number; latencies: number[]; ok: number; other: string }

const pct = (xs: number[], q: number): number | undefined => {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
}
const ms = (v: number | undefined): string => v === undefined ? '-' : v < 10 ? v.toFixed(2) : v.toFixed(1)
const sleep = async (t: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, t)) }

export async function scale (): Promise<void> {
  const sizes = (process.env.BENCH_SCALE_SIZES ?? '10000,100000').split(',').map((s) => Number(s.trim().replace(/_/g, '')))
  if (sizes.some((n) => !Number.isInteger(n) || n < 100)) throw new Error('BENCH_SCALE_SIZES: comma-separated record counts, each at least 100')
  const pgBase = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL
  const stores: Array<'sqlite' | 'postgres'> = ['sqlite']
  if (pgBase !== undefined) stores.push('postgres')
  else console.log('scale on PostgreSQL skipped: set BENCH_POSTGRES_URL (or TEST_POSTGRES_URL)')
  const { buildChildren } = await import('./child-ipc.js')
  buildChildren()
  const all: Figures[] = []
  for (const size of sizes) {
    for (const store of stores) {
      const f = await measure(store, size, pgBase)
      all.push(f)
      console.log(`${store} ${size}: done (${JSON.stringify({ startMs: Math.round(f.startMs), exportS: f.exportS })})`)
    }
  }
  report(all, sizes)
}

async function measure (store: 'sqlite' | 'postgres', size: number, pgBase: string | undefined): Promise<Figures> {
  const { startChild } = await import('./child-ipc.js')
  const plan = scalePlan(size)
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-scale-'))
  const runId = randomBytes(4).toString('hex')
  const schema = `oogw_scale_${runId}`
  let ledgerUrl: string
  let fillS = 0
  const t0 = performance.now()
  if (store === 'sqlite') {
    const cacheDir = join(ROOT, 'node_modules', '.cache', 'bench-scale')
    mkdirSync(cacheDir, { recursive: true })
    const cached = join(cacheDir, `ledger-${size}-v${sqliteMigrations.length}-g${GENERATOR_VERSION}.db`)
    if (!existsSync(cached)) {
      const tmp = `${cached}.${runId}.tmp`
      fillSqlite(tmp, plan, Date.now())
      renameSync(tmp, cached)
      fillS = (performance.now() - t0) / 1000
      console.log(`sqlite ${size}: filled in ${fillS.toFixed(1)} s (cached: ${cached})`)
    } else {
      console.log(`sqlite ${size}: cached file ${cached}`)
    }
    copyFileSync(cached, join(dir, 'ledger.db'))
    ledgerUrl = `sqlite:${join(dir, 'ledger.db')}`
  } else {
    const admin = new pg.Client({ connectionString: pgBase })
    await admin.connect()
    await admin.query(`CREATE SCHEMA ${schema}`)
    await admin.end()
    const u = new URL(pgBase!)
    u.searchParams.set('options', `-c search_path=${schema}`)
    ledgerUrl = u.toString()
    await fillPostgres(ledgerUrl, plan, Date.now())
    fillS = (performance.now() - t0) / 1000
    console.log(`postgres ${size}: filled in ${fillS.toFixed(1)} s (schema ${schema}, ${postgresMigrations.length} migrations)`)
  }

  const secret = randomBytes(24).toString('base64url')
  const token = randomBytes(18).toString('base64url')
  const sim = await startChild('simulator-child.ts', { BENCH_SIM_SECRET: secret })
  const env = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'bench-ctl' }]),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: ledgerUrl,
    GATEWAY_RATE_LIMIT_CONTROL: '10000000',
    GATEWAY_RATE_LIMIT_READ: '10000000',
    // short owner waits, so reconcile may settle not_applied soon after the start (docs/design.md#one-clock)
    UPSTREAM_CONNECT_TIMEOUT_MS: '1000',
    UPSTREAM_MUTATION_TIMEOUT_MS: '2000',
    UPSTREAM_READ_TIMEOUT_MS: '2000',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn'
  }
  const forked = performance.now()
  const gw = await startChild('scale.ts', { BENCH_SCALE_ROLE: 'gateway', BENCH_GATEWAY_ENV: JSON.stringify(env) }, { stdout: 'ignore' })
  const startMs = performance.now() - forked
  const startedAt = performance.now()
  const pool = new Pool(gw.url, { connections: 32, pipelining: 1 })
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string; ms: number }> => {
    const t = performance.now()
    const res = await pool.request({ path, method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const text = await res.body.text()
    return { status: res.statusCode, text, ms: performance.now() - t }
  }
  const samples = Number(process.env.BENCH_SCALE_SAMPLES ?? 300)
  const rnd = prng(SEED + 2)
  const timed = async (n: number, next: () => Promise<{ status: number; text: string; ms: number }>, what: string): Promise<number[]> => {
    const out: number[] = []
    for (let k = 0; k < n; k++) {
      const r = await next()
      if (r.status !== 200) throw new Error(`${what} answered ${r.status}: ${r.text.slice(0, 300)}`)
      out.push(r.ms)
    }
    return out
  }
  // warm-up: the JIT and the store's caches, a little of each
  for (let k = 0; k < 50; k++) await call('GET', `/v1/campaigns/${scaleCampaignId(Math.floor(rnd() * plan.campaigns))}/requests`)
  const campaignList = await timed(samples, async () => await call('GET', `/v1/campaigns/${scaleCampaignId(Math.floor(rnd() * plan.campaigns))}/requests`), 'campaign listing')
  let cursor: string | null = null
  const unresolvedList = await timed(samples, async () => {
    const r = await call('GET', `/v1/requests${cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`}`)
    if (r.status === 200) cursor = (JSON.parse(r.text) as { nextCursor: string | null }).nextCursor
    return r
  }, 'unresolved listing')
  const byId = await timed(samples, async () => {
    const i = Math.floor(rnd() * size)
    return await call('GET', `/v1/campaigns/${scaleCampaignId(plan.campaignOf[i]!)}/requests/${scaleRequestId(i)}`)
  }, 'record by id')

  // mutations on campaigns with nothing unresolved, claimed first
  const free: number[] = []
  for (let c = 0; c < plan.campaigns && free.length < 64; c++) if (plan.lastOf[c] !== -1 && !plan.ambiguous.has(c) && !plan.pending.has(c)) free.push(c)
  for (const c of free) {
    const r = await call('POST', `/v1/campaigns/${scaleCampaignId(c)}/control/claim`, { requestId: `scale-${runId}-claim-${c}`, ttlSeconds: 3600 })
    if (r.status !== 200) throw new Error(`claim answered ${r.status}: ${r.text.slice(0, 300)}`)
  }
  let seq = 0
  const phase = async (concurrency: number, seconds: number): Promise<Phase> => {
    const latencies: number[] = []
    const other = new Map<number, number>()
    let ok = 0
    const t = performance.now()
    const end = t + seconds * 1000
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const n = seq++
        const r = await call('POST', `/v1/campaigns/${scaleCampaignId(free[n % free.length]!)}/interventions`, { requestId: `scale-${runId}-iv-${n}`, intervention: { action: 'adjust', knob: 'lr_scale', value: 0.9, seq: n } })
        latencies.push(r.ms)
        if (r.status === 200) ok++
        else other.set(r.status, (other.get(r.status) ?? 0) + 1)
      }
    }))
    return { rate: ok / ((performance.now() - t) / 1000), latencies, ok, other: [...other].map(([s, k]) => `${s}:${k}`).join(' ') }
  }
  const seconds = Number(process.env.BENCH_SECONDS ?? 4)
  await phase(32, 1)
  const concurrent = await phase(32, seconds)
  const serial = await phase(1, Math.min(2, seconds))

  // reconcile: each owner's wait since the start must pass first (at most 35 s with the timeouts above)
  const waitLeft = 36_000 - (performance.now() - startedAt)
  if (waitLeft > 0) await sleep(waitLeft)
  const targets = [...plan.ambiguous].slice(0, Math.min(100, samples))
  const statuses = new Map<number, number>()
  const reconcile: number[] = []
  for (const c of targets) {
    const r = await call('POST', `/v1/campaigns/${scaleCampaignId(c)}/requests/${scaleRequestId(plan.lastOf[c]!)}/reconcile`, {})
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    reconcile.push(r.ms)
  }
  await pool.close()
  await gw.close()
  await sim.close()

  // the ledger on disk, as the gateway left it
  let bytes: number
  if (store === 'sqlite') {
    const size = (p: string): number => { try { return statSync(p).size } catch { return 0 } }
    bytes = size(join(dir, 'ledger.db')) + size(join(dir, 'ledger.db-wal'))
  } else {
    const c = new pg.Client({ connectionString: ledgerUrl })
    await c.connect()
    bytes = Number((await c.query<{ n: string }>("SELECT pg_total_relation_size('mutation_records') AS n")).rows[0]!.n)
    await c.end()
  }
  const exp = await ledgerExport(ledgerUrl, size)
  if (store === 'postgres') {
    const admin = new pg.Client({ connectionString: pgBase })
    await admin.connect()
    await admin.query(`DROP SCHEMA ${schema} CASCADE`)
    await admin.end()
  }
  rmSync(dir, { recursive: true, force: true })
  return {
    store,
    size,
    fillS,
    startMs,
    campaignList,
    unresolvedList,
    byId,
    reconcile,
    reconcileStatuses: [...statuses].map(([s, k]) => `${s}:${k}`).join(' '),
    serial,
    concurrent,
    bytes,
    exportS: exp.seconds,
    exportRssKb: exp.rssKb,
    exportNote: exp.note
  }
}

/** `ledger export` as an operator runs it (the compiled bin), its output discarded, under /usr/bin/time */
async function ledgerExport (ledgerUrl: string, size: number): Promise<{ seconds: number | undefined; rssKb: number | undefined; note: string }> {
  const { BUILD } = await import('./child-ipc.js')
  const limitS = Number(process.env.BENCH_SCALE_EXPORT_TIMEOUT_S ?? 300)
  const proc = spawn('/usr/bin/time', ['-f', 'TIME %e %M', process.execPath, join(BUILD, 'src', 'cli', 'index.js'), 'ledger', 'export'], {
    env: { ...process.env, GATEWAY_LEDGER_URL: ledgerUrl }, stdio: ['ignore', 'ignore', 'pipe'], detached: true
  })
  let err = ''
  proc.stderr.on('data', (d: Buffer) => { err += d.toString() })
  let killed = false
  const timer = setTimeout(() => { killed = true; try { process.kill(-proc.pid!, 'SIGKILL') } catch {} }, limitS * 1000)
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve))
  clearTimeout(timer)
  if (killed) return { seconds: undefined, rssKb: undefined, note: `killed after ${limitS} s` }
  const m = /TIME ([\d.]+) (\d+)/.exec(err)
  const n = /exported (\d+) records\n/.exec(err) // the last line; the progress lines end in '…'
  const note = code !== 0 ? `exit ${String(code)}: ${err.slice(0, 200)}` : n === null ? 'no count' : Number(n[1]) >= size ? '' : `only ${n[1]} records`
  return { seconds: m === null ? undefined : Number(m[1]), rssKb: m === null ? undefined : Number(m[2]), note }
}

function report (all: Figures[], sizes: number[]): void {
  const MiB = 2 ** 20
  console.log(`\nnode ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} at the end (other work on the host skews the figures)`)
  console.log('latencies in ms, p50/p99, one request in flight but the 32-in-flight mutations; listings at their default limit (100)\n')
  const head = ['store', 'records', 'fill s', 'start ms', 'campaign list', 'unresolved list', 'record by id', 'reconcile', 'mut/s serial', 'serial p50/p99', 'mut/s 32', '32 p50/p99', 'MiB per 1M', 'export s', 'export RSS MiB']
  const rows = all.map((f) => [
    f.store, String(f.size), f.fillS === 0 ? 'cached' : f.fillS.toFixed(1), f.startMs.toFixed(0),
    `${ms(pct(f.campaignList, 0.5))}/${ms(pct(f.campaignList, 0.99))}`,
    `${ms(pct(f.unresolvedList, 0.5))}/${ms(pct(f.unresolvedList, 0.99))}`,
    `${ms(pct(f.byId, 0.5))}/${ms(pct(f.byId, 0.99))}`,
    `${ms(pct(f.reconcile, 0.5))}/${ms(pct(f.reconcile, 0.99))} (${f.reconcileStatuses})`,
    f.serial.rate.toFixed(0), `${ms(pct(f.serial.latencies, 0.5))}/${ms(pct(f.serial.latencies, 0.99))}`,
    f.concurrent.rate.toFixed(0) + (f.concurrent.other === '' ? '' : ` (${f.concurrent.other})`), `${ms(pct(f.concurrent.latencies, 0.5))}/${ms(pct(f.concurrent.latencies, 0.99))}`,
    (f.bytes / MiB / f.size * 1e6).toFixed(0),
    f.exportS === undefined ? f.exportNote : f.exportS.toFixed(1) + (f.exportNote === '' ? '' : ` (${f.exportNote})`),
    f.exportRssKb === undefined ? '-' : (f.exportRssKb / 1024).toFixed(0)
  ])
  console.log(`| ${head.join(' | ')} |`)
  console.log(`|${head.map(() => '---').join('|')}|`)
  for (const r of rows) console.log(`| ${r.join(' | ')} |`)

  console.log('\ntargets (issue 47): at the largest size, p99 within 1.5× of the 10k figure; start under 5 s')
  const largest = Math.max(...sizes)
  for (const store of new Set(all.map((f) => f.store))) {
    const base = all.find((f) => f.store === store && f.size === 10_000)
    const top = all.find((f) => f.store === store && f.size === largest)
    for (const f of all.filter((x) => x.store === store)) console.log(`  ${store} ${f.size}: start ${f.startMs.toFixed(0)} ms: ${f.startMs < 5000 ? 'met' : 'MISSED'}`)
    if (base === undefined || top === undefined || top === base) { console.log(`  ${store}: no 10k row and a larger one to compare`); continue }
    const judge = (name: string, a: number[], b: number[]): void => {
      const p0 = pct(a, 0.99)!; const p1 = pct(b, 0.99)!
      console.log(`  ${store} ${name} p99: ${ms(p0)} ms at 10k, ${ms(p1)} ms at ${largest}: ${(p1 / p0).toFixed(2)}×, ${p1 <= 1.5 * p0 ? 'met' : 'MISSED'}`)
    }
    judge('mutation (serial)', base.serial.latencies, top.serial.latencies)
    judge('mutation (32 in flight)', base.concurrent.latencies, top.concurrent.latencies)
    judge('campaign listing', base.campaignList, top.campaignList)
    judge('unresolved listing', base.unresolvedList, top.unresolvedList)
    judge('record by id', base.byId, top.byId)
  }
}
