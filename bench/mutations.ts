// npm run bench -- --mutations: campaign-control mutations per second through the gateway, with
// the SQLite ledger on a real file in a temp directory (WAL, synchronous=FULL: the ledger's
// defaults, read back and printed) — or, with BENCH_LEDGER=postgres and BENCH_POSTGRES_URL (or
// TEST_POSTGRES_URL), the PostgreSQL ledger on a fresh schema, with BENCH_REPLICAS=2 two
// gateways on it sharing the load round-robin (run.ts runs each variant in a process of its own).
// The simulator ('campaign-control' profile) runs in a child process (bench/simulator-child.ts);
// each gateway replica in a process of its own as the comparison runs its gateway
// (bench/gateway-child.ts: compiled, `npm start`'s node flags, the default log level, its log in a
// file), so its CPU, heap allocated and collections are its own, apart from the load generator's
// (this process: undici, one unique request id per request, which autocannon cannot give without
// per-request state). Steps: claim CAMPAIGNS campaigns, a short warm-up, a concurrent phase of
// BENCH_SECONDS with CONCURRENCY interventions in flight spread round-robin over the campaigns
// (one campaign's mutations are serialised by design), then a short serial phase (one in flight:
// the durable commit per write dominates). Afterwards it checks, from the remote's side, that
// every request id arrived exactly once and that the applied interventions are exactly the 200s,
// and from the ledger's side that they are recorded applied. Bounded by a watchdog; closes
// everything and exits on its own (exit code 1 when a check fails). BENCH_PROFILE_DIR (set by
// `npm run bench -- --profile` with BENCH_PROFILE_ROW=mutation) profiles the gateway. No network
// beyond 127.0.0.1.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import pg from 'pg'
import Database from 'better-sqlite3'
import { sha256Hex } from '../src/callers/tokens.js'
import type { ChildMessage, ChildRequest } from './simulator-child.js'
import { startChild, type Child, type ChildStats } from './child-ipc.js'
import { deployedNodeFlags } from './compare.js'

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
}, (WARMUP_SECONDS + seconds + SERIAL_SECONDS) * 1000 + 180_000)
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

// ---- the gateway, as the bin starts it, each replica in a process of its own ------------------
// compiled and started with `npm start`'s node flags (bench/child-ipc.ts), at the default log level
// with its log in a file: its CPU and heap are its own, apart from the load generator's (this process)
const gatewayEnv = {
  OPENOPERATOR_URL: simUrl,
  SPYNEL_AGENT_ZERO_API_KEY: secret,
  GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read', 'control'], controllerId: CONTROLLER_ID }]),
  GATEWAY_CONTROL_ENABLED: 'true',
  GATEWAY_LEDGER_URL: ledgerUrl,
  GATEWAY_RATE_LIMIT_CONTROL: '10000000',
  GATEWAY_RATE_LIMIT_READ: '10000000',
  GATEWAY_MAX_REQUESTS_PER_SOCKET: '0',
  HOST: '127.0.0.1',
  PORT: '0',
  METRICS_PORT: '0',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  NODE_ENV: 'development'
}
const logPaths = Array.from({ length: REPLICAS }, (_, i) => join(dir, `gateway-${i}.log`))
const gateways: Child[] = []
for (const log of logPaths) {
  const fd = openSync(log, 'w')
  gateways.push(await startChild('./gateway-child.ts', { BENCH_GATEWAY_ENV: JSON.stringify(gatewayEnv) }, { stdout: fd, execArgv: [...deployedNodeFlags(), ...process.env.BENCH_GATEWAY_NODE_OPTIONS?.split(' ').filter((f) => f !== '') ?? []] }))
  closeSync(fd)
}
// the gateway holds the SQLite file exclusively (docs/design.md#ledger): its settings come over IPC, the rows are counted after it closed
const { synchronous = -1, wal = 0 } = (await gateways[0]!.stats()).calls
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
  /** event-loop utilisation of this process (the load generator) over the phase */
  elu: EventLoopUtilization | undefined
  /** CPU time of this process (the load generator) over the phase, ms */
  cpuMs: number
  /** the gateways' own, summed over the replicas: CPU ms, V8 heap bytes allocated (GCProfiler: the growth between collections), collections, log bytes */
  gateway: { cpuMs: number; allocated: number; scavenges: number; markCompacts: number; gcMs: number; logBytes: number }
  /** SQLite: the durable commits over the phase and the writes they held (the group commit) */
  commits: { batches: number; writes: number } | undefined
}

/** the gateways' counters now, summed, with their log files' sizes */
async function gatewayTotals (): Promise<{ stats: ChildStats[]; logBytes: number }> {
  const stats = await Promise.all(gateways.map(async (g) => await g.stats()))
  return { stats, logBytes: logPaths.reduce((n, f) => n + statSync(f).size, 0) }
}

function gatewayDelta (a: Awaited<ReturnType<typeof gatewayTotals>>, b: Awaited<ReturnType<typeof gatewayTotals>>): Phase['gateway'] {
  const sum = (f: (s: ChildStats) => number): number => b.stats.reduce((n, s, i) => n + f(s) - f(a.stats[i]!), 0)
  return { cpuMs: sum((s) => s.cpuUs) / 1000, allocated: sum((s) => s.gc.allocatedBytes), scavenges: sum((s) => s.gc.scavenges), markCompacts: sum((s) => s.gc.markCompacts), gcMs: sum((s) => s.gc.gcMs), logBytes: b.logBytes - a.logBytes }
}

let seq = 0
const okIds = new Set<string>()
const sentIds: string[] = []

async function runPhase (name: string, concurrency: number, durationSeconds: number): Promise<Phase> {
  const p: Phase = { name, concurrency, elapsedMs: 0, ok: 0, byStatus: new Map(), errors: 0, latencies: [], sampleFailure: undefined, elu: undefined, cpuMs: 0, gateway: { cpuMs: 0, allocated: 0, scavenges: 0, markCompacts: 0, gcMs: 0, logBytes: 0 }, commits: undefined }
  const gw0 = await gatewayTotals()
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
  const gw1 = await gatewayTotals()
  p.gateway = gatewayDelta(gw0, gw1)
  const c0 = gw0.stats[0]!.calls
  const c1 = gw1.stats[0]!.calls
  if (c0.commits !== undefined && c1.commits !== undefined) p.commits = { batches: c1.commits - c0.commits, writes: (c1.commitWrites ?? 0) - (c0.commitWrites ?? 0) }
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
const size = (path: string): number => { try { return statSync(path).size } catch { return 0 } }
const dbBytes = LEDGER === 'sqlite' ? size(ledgerPath) : Number((await pgQuery<{ n: string }>("SELECT pg_total_relation_size('mutation_records') AS n"))[0]!.n)
const walBytes = size(`${ledgerPath}-wal`)
const mem = process.memoryUsage()
const gatewayRss = (await gatewayTotals()).stats.map((st) => st.peakRss)

// ---- close everything ------------------------------------------------------------------------
for (const p of pools) await p.close()
for (const g of gateways) await g.close()
const ROWS_SQL = "SELECT state, count(*)::int AS n FROM mutation_records WHERE operation = 'intervene' GROUP BY state"
const ledgerRows = LEDGER === 'sqlite'
  ? (() => {
      const db = new Database(ledgerPath, { readonly: true, fileMustExist: true })
      try { return db.prepare(ROWS_SQL.replace('::int', '')).all() as Array<{ state: string; n: number }> } finally { db.close() }
    })()
  : await pgQuery<{ state: string; n: number }>(ROWS_SQL)
const ledgerApplied = ledgerRows.find((r) => r.state === 'applied')?.n ?? 0
if (ledgerApplied !== totalOk) problems.push(`the ledger records ${ledgerApplied} interventions applied, the gateway answered ${totalOk} 200s`)
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
  const n = Math.max(1, p.ok + p.errors + [...p.byStatus.values()].reduce((a, b) => a + b, 0))
  return `${p.name.padEnd(10)} ${String(p.concurrency).padStart(2)} in flight  ${(p.elapsedMs / 1000).toFixed(1).padStart(4)} s  ${rate.toFixed(0).padStart(6)} mutations/s  ` +
    `p50 ${fmtMs(pct(sorted, 0.5))} ms  p99 ${fmtMs(pct(sorted, 0.99))} ms  max ${fmtMs(sorted.at(-1))} ms  200 ${p.ok}  non-200 ${other}  errors ${p.errors}  ` +
    `\n${''.padEnd(14)}gateway${REPLICAS > 1 ? `s (${REPLICAS})` : ''}: CPU ${((p.gateway.cpuMs / p.elapsedMs) * 100).toFixed(0)}%, ` +
    `**${(p.gateway.cpuMs * 1000 / n).toFixed(0)} µs CPU and ${(p.gateway.allocated / 1024 / n).toFixed(1)} KB heap per mutation**, ${p.gateway.scavenges} scavenges ${p.gateway.markCompacts} mark-compacts (${(p.gateway.gcMs * 1000 / n).toFixed(0)} µs GC a mutation), log ${(p.gateway.logBytes / n).toFixed(0)} B a mutation` +
    `; generator: CPU ${((p.cpuMs / p.elapsedMs) * 100).toFixed(0)}% (${(p.cpuMs * 1000 / n).toFixed(0)} µs a mutation), event loop ${((p.elu?.utilization ?? 0) * 100).toFixed(0)}% busy` +
    (p.commits === undefined ? '' : `, ${p.commits.batches} commits holding ${p.commits.writes} writes (${(p.commits.writes / Math.max(1, p.commits.batches)).toFixed(1)} a commit)`)
}

console.log(`\nnode ${process.version}, mutations (POST /v1/campaigns/:c/interventions), ${CAMPAIGNS} campaigns claimed, unique request id per request`)
console.log(`simulator in its own process; ${REPLICAS} gateway replica(s), each in a process of its own (compiled, npm start's node flags, log level ${gatewayEnv.LOG_LEVEL}, log to a file); load generator (undici) in this process`)
console.log(`host: ${availableParallelism()} CPUs, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} at the end (other work on the host skews the figures)`)
console.log(LEDGER === 'sqlite'
  ? `ledger: SQLite file ${ledgerPath} (temp, removed), journal_mode=${wal === 1 ? 'wal' : 'not wal'}, synchronous=${SYNC_NAMES[synchronous] ?? synchronous}`
  : `ledger: PostgreSQL, schema ${schema} (dropped), ${REPLICAS} gateway replica(s), requests round-robin`)
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
console.log(`peak RSS gateway${gatewayRss.length > 1 ? 's' : ''} ${gatewayRss.map((r) => `${(r / MiB).toFixed(0)} MiB`).join(', ')}; load process ${(mem.rss / MiB).toFixed(0)} MiB; simulator process ${(stats.rssBytes / MiB).toFixed(0)} MiB`)
if (problems.length > 0) process.exitCode = 1
