// npm run bench (second part): campaign-control mutations per second through the gateway, with
// the SQLite ledger on a real file in a temp directory (WAL, synchronous=FULL: the ledger's
// defaults, read back and printed) — or, with BENCH_LEDGER=postgres and BENCH_POSTGRES_URL (or
// TEST_POSTGRES_URL), the PostgreSQL ledger on a fresh schema, with BENCH_REPLICAS=2 two
// gateways on it sharing the load round-robin (run.ts runs each variant in a process of its own). The simulator ('campaign-control' profile) runs in a child
// process (bench/simulator-child.ts); the gateway starts as the bin starts it
// (startGatewayServer) in this process, on 127.0.0.1 port 0, and the load generator (undici,
// one unique request id per request, which autocannon cannot give without per-request state)
// shares this process with it. Steps: claim CAMPAIGNS campaigns, a short warm-up, a concurrent
// phase of BENCH_SECONDS with CONCURRENCY interventions in flight spread round-robin over the
// campaigns (one campaign's mutations are serialised by design), then a short serial phase
// (one in flight: the durable commit per write dominates). Afterwards it checks, from the
// remote's side, that every request id arrived exactly once and that the applied
// interventions are exactly the 200s, and from the ledger's side that they are recorded
// applied. Bounded by a watchdog; closes everything and exits on its own (exit code 1 when a
// check fails). No network beyond 127.0.0.1.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import pg from 'pg'
import { loadConfig } from '../src/config/index.js'
import { sqliteCommitStatsOf, sqliteDatabaseOf } from '../src/ledger/index.js'
import { createLogger } from '../src/core/logger.js'
import { sha256Hex } from '../src/callers/tokens.js'
import { startGatewayServer } from '../src/server.js'
import type { ChildMessage, ChildRequest } from './simulator-child.js'
import { gcTotals } from './child-ipc.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
if (!Number.isFinite(seconds) || seconds <= 0) throw new Error('BENCH_SECONDS must be a positive number')
const CAMPAIGNS = 64
const CONCURRENCY = 32
const WARMUP_SECONDS = Math.min(1, seconds / 4)
const SERIAL_SECONDS = Math.min(2, seconds)
const CONTROLLER_ID = 'bench-ctl'
const LEDGER = process.env.BENCH_LEDGER === 'postgres' ? 'postgres' : 'sqlite'
const REPLICAS = LEDGER === 'postgres' ? Math.max(1, Math.min(2, Number(process.env.BENCH_REPLICAS ?? 1))) : 1
const PG_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL
if (LEDGER === 'postgres' && PG_URL === undefined) throw new Error('BENCH_LEDGER=postgres needs BENCH_POSTGRES_URL (or TEST_POSTGRES_URL)')

// a hung upstream or socket must not hang `npm run bench`: everything is bounded
const watchdog = setTimeout(() => {
  console.error('bench/mutations: over its time budget, aborting')
  child.kill('SIGKILL')
  process.exit(1)
}, (WARMUP_SECONDS + seconds + SERIAL_SECONDS) * 1000 + 60_000)
watchdog.unref()

const secret = randomBytes(24).toString('base64url')
const token = randomBytes(18).toString('base64url')
const runId = randomBytes(4).toString('hex')
const dir = mkdtempSync(join(tmpdir(), 'oo-gw-bench-'))
const ledgerPath = join(dir, 'ledger.db')

// PostgreSQL: a schema of this run's own, dropped at the end
const schema = `oogw_bench_${runId}`
let ledgerUrl = `sqlite:${ledgerPath}`
if (LEDGER === 'postgres') {
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  const u = new URL(PG_URL!)
  u.searchParams.set('options', `-c search_path=${schema}`)
  ledgerUrl = u.toString()
}
async function pgQuery<R extends pg.QueryResultRow> (text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: ledgerUrl })
  await c.connect()
  try { return (await c.query<R>(text)).rows } finally { await c.end() }
}

// what one durable write costs on this disk, for reading the figures: 4 KiB write + fsync, 200 times
const fsyncMs: number[] = []
{
  const probe = join(dir, 'fsync-probe')
  const fd = openSync(probe, 'w')
  const block = Buffer.alloc(4096, 1)
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now()
    writeSync(fd, block, 0, block.length, (i % 16) * 4096)
    fsyncSync(fd)
    fsyncMs.push(performance.now() - t0)
  }
  closeSync(fd)
  rmSync(probe)
  fsyncMs.sort((a, b) => a - b)
}

// ---- the simulator, in its own process -------------------------------------------------------
const child = fork(fileURLToPath(new URL('./simulator-child.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx'],
  env: { ...process.env, BENCH_SIM_SECRET: secret },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc']
})
const childExited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))

function nextMessage<T extends ChildMessage['type']> (type: T, timeoutMs = 15_000): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { cleanup(); reject(new Error(`simulator child: no '${type}' within ${timeoutMs} ms`)) }, timeoutMs)
    const onMessage = (m: ChildMessage): void => {
      if (m.type !== type) return
      cleanup()
      resolve(m as Extract<ChildMessage, { type: T }>)
    }
    const onExit = (code: number | null): void => { cleanup(); reject(new Error(`simulator child exited (${String(code)}) before '${type}'`)) }
    const cleanup = (): void => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}
const ask = (m: ChildRequest): void => { child.send(m) }

const { url: simUrl } = await nextMessage('ready')

// ---- the gateway, as the bin starts it --------------------------------------------------------
const config = loadConfig({
  OPENOPERATOR_URL: simUrl,
  SPYNEL_AGENT_ZERO_API_KEY: secret,
  GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read', 'control'], controllerId: CONTROLLER_ID }]),
  GATEWAY_CONTROL_ENABLED: 'true',
  GATEWAY_LEDGER_URL: ledgerUrl,
  GATEWAY_RATE_LIMIT_CONTROL: '10000000',
  GATEWAY_RATE_LIMIT_READ: '10000000',
  HOST: '127.0.0.1',
  PORT: '0',
  METRICS_PORT: '0',
  LOG_LEVEL: 'warn'
})
const logger = createLogger({ level: 'warn', secrets: new Set([secret, token]) })
const gateways = await Promise.all(Array.from({ length: REPLICAS }, async () => await startGatewayServer(config, { logger })))
const gw = gateways[0]!
const db = sqliteDatabaseOf(gw.app.ledger)
if (LEDGER === 'sqlite' && db === undefined) throw new Error('the ledger is not the SQLite ledger')
const journalMode = db === undefined ? '-' : String(db.pragma('journal_mode', { simple: true }))
const synchronous = db === undefined ? -1 : Number(db.pragma('synchronous', { simple: true }))
const SYNC_NAMES = ['OFF', 'NORMAL', 'FULL', 'EXTRA']

const pools = gateways.map((g) => new Pool(g.url, { connections: Math.ceil(CONCURRENCY / REPLICAS), pipelining: 1 }))
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
let turn = 0

/** round robin over the replicas, as an ingress would */
async function post (path: string, body: unknown): Promise<{ status: number; text: string }> {
  const pool = pools[turn++ % pools.length]!
  const res = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body) })
  return { status: res.statusCode, text: await res.body.text() }
}

// ---- claims ----------------------------------------------------------------------------------
const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) => `bench-${runId}-c${String(i).padStart(3, '0')}`)
const claimIds: string[] = []
{
  let next = 0
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < campaigns.length) {
      const c = campaigns[next++]!
      const requestId = `${runId}-claim-${c}`
      claimIds.push(requestId)
      const r = await post(`/v1/campaigns/${c}/control/claim`, { requestId, ttlSeconds: 3600 })
      if (r.status !== 200) throw new Error(`claim of ${c} answered ${r.status}: ${r.text.slice(0, 300)}`)
    }
  }))
}

// ---- the intervention phases -----------------------------------------------------------------
interface Phase {
  name: string
  concurrency: number
  elapsedMs: number
  ok: number
  byStatus: Map<number, number>
  errors: number
  latencies: number[]
  sampleFailure: string | undefined
  /** event-loop utilisation of this process (gateway + load generator) over the phase */
  elu: EventLoopUtilization | undefined
  /** CPU time of this process over the phase, ms */
  cpuMs: number
  /** V8 heap bytes this process allocated over the phase (GCProfiler: the growth between collections), and its collections */
  heap: { allocated: number; scavenges: number; markCompacts: number }
  /** SQLite: the durable commits over the phase and the writes they held (the group commit) */
  commits: { batches: number; writes: number } | undefined
}

let seq = 0
const okIds = new Set<string>()
const sentIds: string[] = []

async function runPhase (name: string, concurrency: number, durationSeconds: number): Promise<Phase> {
  const p: Phase = { name, concurrency, elapsedMs: 0, ok: 0, byStatus: new Map(), errors: 0, latencies: [], sampleFailure: undefined, elu: undefined, cpuMs: 0, heap: { allocated: 0, scavenges: 0, markCompacts: 0 }, commits: undefined }
  const commits0 = sqliteCommitStatsOf(gw.app.ledger)
  const gc = gcTotals()
  const elu0 = performance.eventLoopUtilization()
  const cpu0 = process.cpuUsage()
  const start = performance.now()
  const end = start + durationSeconds * 1000
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const n = seq++
      const campaign = campaigns[n % CAMPAIGNS]!
      const requestId = `${runId}-iv-${n}`
      sentIds.push(requestId)
      const t0 = performance.now()
      try {
        const r = await post(`/v1/campaigns/${campaign}/interventions`, { requestId, intervention: { action: 'adjust', knob: 'lr_scale', value: 0.9, seq: n } })
        p.latencies.push(performance.now() - t0)
        if (r.status === 200) {
          p.ok++
          okIds.add(requestId)
        } else {
          p.byStatus.set(r.status, (p.byStatus.get(r.status) ?? 0) + 1)
          p.sampleFailure ??= `${r.status} ${r.text.slice(0, 300)}`
        }
      } catch (err) {
        p.errors++
        p.sampleFailure ??= `error ${err instanceof Error ? err.message : String(err)}`
      }
    }
  }))
  p.elapsedMs = performance.now() - start
  p.elu = performance.eventLoopUtilization(elu0)
  const cpu = process.cpuUsage(cpu0)
  p.cpuMs = (cpu.user + cpu.system) / 1000
  const g = gc()
  p.heap = { allocated: g.allocatedBytes, scavenges: g.scavenges, markCompacts: g.markCompacts }
  const commits1 = sqliteCommitStatsOf(gw.app.ledger)
  if (commits0 !== undefined && commits1 !== undefined) p.commits = { batches: commits1.batches - commits0.batches, writes: commits1.writes - commits0.writes }
  return p
}

const warmup = await runPhase('warm-up', CONCURRENCY, WARMUP_SECONDS)
const concurrent = await runPhase('concurrent', CONCURRENCY, seconds)
const serial = await runPhase('serial', 1, SERIAL_SECONDS)
const phases = [warmup, concurrent, serial]

// ---- checks ----------------------------------------------------------------------------------
const problems: string[] = []
ask({ type: 'stats', campaigns })
const stats = await nextMessage('stats')
const counts = new Map(stats.requestCounts)
for (const [id, n] of counts) if (n !== 1) problems.push(`request id ${id} reached the remote ${n} times`)
for (const id of [...claimIds, ...okIds]) if (counts.get(id) !== 1) problems.push(`request id ${id} answered 200 but reached the remote ${counts.get(id) ?? 0} times`)
const appliedIds = stats.interventions.flatMap(([, ids]) => ids)
const totalOk = phases.reduce((s, p) => s + p.ok, 0)
if (appliedIds.length !== totalOk) problems.push(`the remote applied ${appliedIds.length} interventions, the gateway answered ${totalOk} 200s`)
for (const id of appliedIds) if (!okIds.has(id)) problems.push(`intervention ${id} applied by the remote without a 200`)
const ROWS_SQL = "SELECT state, count(*)::int AS n FROM mutation_records WHERE operation = 'intervene' GROUP BY state"
const ledgerRows = db !== undefined
  ? db.prepare(ROWS_SQL.replace('::int', '')).all() as Array<{ state: string; n: number }>
  : await pgQuery<{ state: string; n: number }>(ROWS_SQL)
const ledgerApplied = ledgerRows.find((r) => r.state === 'applied')?.n ?? 0
if (ledgerApplied !== totalOk) problems.push(`the ledger records ${ledgerApplied} interventions applied, the gateway answered ${totalOk} 200s`)

const size = (path: string): number => { try { return statSync(path).size } catch { return 0 } }
const dbBytes = db !== undefined ? size(ledgerPath) : Number((await pgQuery<{ n: string }>("SELECT pg_total_relation_size('mutation_records') AS n"))[0]!.n)
const walBytes = size(`${ledgerPath}-wal`)
const mem = process.memoryUsage()

// ---- close everything ------------------------------------------------------------------------
for (const p of pools) await p.close()
for (const g of gateways) await g.close()
if (LEDGER === 'postgres') {
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`DROP SCHEMA ${schema} CASCADE`)
  await admin.end()
}
const dbBytesClosed = size(ledgerPath)
const walBytesClosed = size(`${ledgerPath}-wal`)
ask({ type: 'close' })
await Promise.race([childExited, new Promise((resolve) => setTimeout(resolve, 5000).unref())])
if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
rmSync(dir, { recursive: true, force: true })

// ---- report ----------------------------------------------------------------------------------
const MiB = 2 ** 20
const fmtMs = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(1)).padStart(6)
const pct = (sorted: number[], q: number): number | undefined => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
const line = (p: Phase): string => {
  const sorted = [...p.latencies].sort((a, b) => a - b)
  const rate = p.ok / (p.elapsedMs / 1000)
  const other = [...p.byStatus].map(([s, n]) => `${s}:${n}`).join(' ') || '0'
  return `${p.name.padEnd(10)} ${String(p.concurrency).padStart(2)} in flight  ${(p.elapsedMs / 1000).toFixed(1).padStart(4)} s  ${rate.toFixed(0).padStart(6)} mutations/s  ` +
    `p50 ${fmtMs(pct(sorted, 0.5))} ms  p99 ${fmtMs(pct(sorted, 0.99))} ms  max ${fmtMs(sorted.at(-1))} ms  200 ${p.ok}  non-200 ${other}  errors ${p.errors}  ` +
    `event loop ${((p.elu?.utilization ?? 0) * 100).toFixed(0)}% busy, CPU ${((p.cpuMs / p.elapsedMs) * 100).toFixed(0)}%, ` +
    `${(p.cpuMs * 1000 / Math.max(1, p.ok + p.errors)).toFixed(0)} µs and ${(p.heap.allocated / 1024 / Math.max(1, p.ok + p.errors)).toFixed(0)} KB heap per mutation (gateway and generator), ${p.heap.scavenges} scavenges ${p.heap.markCompacts} mark-compacts` +
    (p.commits === undefined ? '' : `, ${p.commits.batches} commits holding ${p.commits.writes} writes (${(p.commits.writes / Math.max(1, p.commits.batches)).toFixed(1)} a commit)`)
}

console.log(`\nnode ${process.version}, mutations (POST /v1/campaigns/:c/interventions), ${CAMPAIGNS} campaigns claimed, unique request id per request`)
console.log('simulator in its own process (child_process.fork); gateway and load generator (undici) in this process')
console.log(`host: ${availableParallelism()} CPUs, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} at the end (other work on the host skews the figures)`)
console.log(LEDGER === 'sqlite'
  ? `ledger: SQLite file ${ledgerPath} (temp, removed), journal_mode=${journalMode}, synchronous=${SYNC_NAMES[synchronous] ?? synchronous}`
  : `ledger: PostgreSQL, schema ${schema} (dropped), ${REPLICAS} gateway replica(s) in this process, requests round-robin`)
console.log(`disk: 4 KiB write + fsync in the same directory p50 ${fmtMs(pct(fsyncMs, 0.5)).trim()} ms, p99 ${fmtMs(pct(fsyncMs, 0.99)).trim()} ms (200 samples)\n`)
for (const p of phases) console.log(line(p))
for (const p of phases) if (p.sampleFailure !== undefined) console.log(`  ${p.name}: first failure: ${p.sampleFailure}`)
console.log(`\nchecks: ${counts.size} request ids at the remote (${claimIds.length} claims + ${sentIds.length} interventions sent), ` +
  `${appliedIds.length} interventions applied, ${totalOk} 200s, ledger intervene rows ${ledgerRows.map((r) => `${r.state}:${r.n}`).join(' ')}: ` +
  (problems.length === 0 ? 'OK (every id exactly once, applied == 200s)' : `FAILED (${problems.length})`))
for (const p of problems.slice(0, 10)) console.log(`  ${p}`)
console.log(LEDGER === 'sqlite'
  ? `ledger file ${(dbBytes / MiB).toFixed(2)} MiB + WAL ${(walBytes / MiB).toFixed(2)} MiB while open; ` +
    `${(dbBytesClosed / MiB).toFixed(2)} MiB + WAL ${(walBytesClosed / MiB).toFixed(2)} MiB after close (checkpointed)`
  : `ledger table mutation_records ${(dbBytes / MiB).toFixed(2)} MiB with its indexes`)
console.log(`RSS gateway+load process ${(mem.rss / MiB).toFixed(0)} MiB (heap used ${(mem.heapUsed / MiB).toFixed(0)} MiB), simulator process ${(stats.rssBytes / MiB).toFixed(0)} MiB`)
if (problems.length > 0) process.exitCode = 1
