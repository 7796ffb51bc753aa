// npm run bench -- --scale-active (issue 47, "cost at scale"): the gateway's memory and its metrics'
// cardinality with many campaigns and many callers active. The gateway runs as `npm start` runs it
// (its node flags, plus --expose-gc so that heap figures can be read after a full collection), in a
// process of its own (compiled, as bench/compare.ts runs its children; BENCH_SCALE_ACTIVE_ROLE=gateway
// runs this file as that child), against the simulator's 'campaign-control' profile
// (bench/simulator-child.ts, its own process), on a fresh SQLite ledger, with its static callers in
// a GATEWAY_CALLERS_FILE (1,000 callers' JSON would pass the 128 KiB a single environment variable
// may hold). Three parts:
// 1. active load at two sizes, each in a fresh gateway: (10 callers, 1k campaigns), then
//    (BENCH_SCALE_ACTIVE_CALLERS = 1,000 callers, BENCH_SCALE_ACTIVE_CAMPAIGNS = 100k campaigns).
//    A tenth of the campaigns is claimed, then a mixed, shuffled phase (BENCH_SCALE_ACTIVE_ROUNDS
//    times, default once): every campaign's requests list read, another tenth's lease read
//    (GET …/control, a fresh read_control), one intervention on each claimed campaign; every caller
//    takes its share, BENCH_SCALE_ACTIVE_CONCURRENCY (16) requests in flight. The gateway's RSS (by
//    kind, every 5 s), peak RSS, heap after a full collection, the sizes of its in-memory rate-limit
//    stores and of its ledger, the remote's count of each mutation id (each exactly once), and the
//    series of `/metrics` by family, which must not depend on how many campaigns or callers there
//    are (docs/design.md#metrics: labels are route templates and enums, never ids).
// 2. the rate limiter's memory with 1,000 callers, in process: heap after a full collection once
//    10 callers have made a read and a control request each, then once all 1,000 have, in a gateway
//    running V8's interpreter alone (compiled code grows with requests, not callers).
// 3. the same on Redis (BENCH_REDIS_URL or TEST_REDIS_URL, on the database BENCH_SCALE_ACTIVE_REDIS_DB,
//    default 11, which must be empty): the rate-limit keys' MEMORY USAGE and INFO's used_memory.
// Targets (issue 47): peak RSS under 200 MB at the large size; the same series count at both sizes.
// Diagnoses: BENCH_SCALE_ACTIVE_SNAPSHOTS=<dir> writes a heap snapshot at each reading of part 2;
// BENCH_SCALE_ACTIVE_SQLITE_CACHE_KIB sets the ledger's page cache bound (SQLite's cache_size).
// No network beyond 127.0.0.1 and the Redis URL given.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { writeHeapSnapshot } from 'node:v8'
import type { Pool } from 'undici'
import type { Redis } from 'ioredis'
import type { Child, ChildStats } from './child-ipc.js'

const MiB = 2 ** 20
/** the share of campaigns claimed (then intervened on once), and the share whose lease is read */
const MUTATED_EVERY = 10
/** @fastify/rate-limit's in-memory stores, as the child sees them */
interface StoreSize { size: number; max: number }
/**
 * the process's memory as it stands, and its resident pages by kind (Linux: /proc/self/status, and
 * the main thread's malloc heap `[heap]` from /proc/self/smaps; 0 elsewhere)
 */
interface Memory { memory: NodeJS.MemoryUsage; anon: number; file: number; brk: number }
/** `ledger`: the SQLite file's bytes and its page cache's bound (better-sqlite3 builds SQLite with 16,000 KiB) */
interface ProbeAnswer extends Memory { type: 'probe'; metricsUrl: string; stores: StoreSize[]; keyNames: number; ledger: { bytes: number; cacheKiB: number } }

function memoryNow (): Memory {
  let status = ''
  try { status = readFileSync('/proc/self/status', 'utf8') } catch {}
  const kb = (field: string): number => 1024 * Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  let brk = 0
  try {
    const m = /\[heap\]\n(?:(?!^[0-9a-f]+-)[^\n]*\n)*?Rss:\s+(\d+) kB/m.exec(readFileSync('/proc/self/smaps', 'utf8'))
    brk = 1024 * Number(m?.[1] ?? 0)
  } catch {}
  return { memory: process.memoryUsage(), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem'), brk }
}

// ---- the gateway child ----------------------------------------------------------------------

if (process.env.BENCH_SCALE_ACTIVE_ROLE === 'gateway') await gatewayChild()

async function gatewayChild (): Promise<void> {
  // every in-memory rate-limit store the gateway builds, seen at its first count: the bench reads
  // their sizes, which the gateway keeps to itself (src/http/rate-limit.ts, src/http/auth-failures.ts)
  const { default: LocalStore } = await import('@fastify/rate-limit/store/LocalStore.js')
  const stores = new Set<{ lru: StoreSize }>()
  const proto = LocalStore.prototype as { incr: (...args: unknown[]) => void }
  const incr = proto.incr
  proto.incr = function (this: { lru: StoreSize }, ...args: unknown[]) { stores.add(this); incr.apply(this, args) }
  const { loadConfig } = await import('../src/config/index.js')
  const { startGatewayServer } = await import('../src/server.js')
  const { serveParent } = await import('./child-ipc.js')
  const { keyNamesKept } = await import('../src/http/rate-limit.js')
  const { sqliteDatabaseOf } = await import('../src/ledger/index.js')
  const gw = await startGatewayServer(loadConfig(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>))
  for (let i = 0; i < 100 && gw.app.discovery.capability('control.claim_control').state !== 'available'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // a diagnosis, not a setting of the gateway's: the ledger's page cache bound, KiB (SQLite's cache_size)
  const cacheKiB = process.env.BENCH_SCALE_ACTIVE_SQLITE_CACHE_KIB
  if (cacheKiB !== undefined) sqliteDatabaseOf(gw.app.ledger)?.pragma(`cache_size = -${Number(cacheKiB)}`)
  const gc = (globalThis as { gc?: () => void }).gc
  process.on('message', (m: { type: string; snapshot?: string }) => {
    if (m.type === 'memory') process.send?.({ type: 'memory', ...memoryNow() })
    if (m.type !== 'probe') return
    gc?.()
    gc?.()
    if (m.snapshot !== undefined) writeHeapSnapshot(m.snapshot)
    const answer: ProbeAnswer = { type: 'probe', metricsUrl: gw.metricsUrl, ...memoryNow(), stores: [...stores].map((s) => ({ size: s.lru.size, max: s.lru.max })), keyNames: keyNamesKept(), ledger: ledgerOf(sqliteDatabaseOf(gw.app.ledger)) }
    process.send?.(answer)
  })
  serveParent(gw.url, async () => { await gw.close() })
}

function ledgerOf (db: { pragma: (p: string, o: { simple: true }) => unknown } | undefined): ProbeAnswer['ledger'] {
  if (db === undefined) return { bytes: 0, cacheKiB: 0 }
  const n = (p: string): number => Number(db.pragma(p, { simple: true }))
  const cache = n('cache_size')
  return { bytes: n('page_count') * n('page_size'), cacheKiB: cache < 0 ? -cache : cache * n('page_size') / 1024 }
}

// ---- a simulator and a gateway ---------------------------------------------------------------

interface Pair {
  gw: Child
  sim: Child
  pool: Pool
  tokens: string[]
  dir: string
  log: string
  /** requests refused with 503 overloaded and sent again (load shedding: docs/operating.md#load-shedding) */
  retries: number
  close: () => Promise<void>
}

async function startPair (callers: number, extra: Record<string, string> = {}, flags: string[] = []): Promise<Pair> {
  const { randomBytes } = await import('node:crypto')
  const { Pool } = await import('undici')
  const { sha256Hex } = await import('../src/callers/tokens.js')
  const { startChild } = await import('./child-ipc.js')
  const { deployedNodeFlags } = await import('./compare.js')
  const { callerName, controllerName } = await import('./scale-rows.js')
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-scale-active-'))
  const secret = randomBytes(24).toString('base64url')
  const base = randomBytes(18).toString('base64url')
  const tokens = Array.from({ length: callers }, (_, k) => `${base}-${k}`)
  // as scale.ts's ledger names them: caller-NNNN holding controller id ctl-NNNN
  const file = join(dir, 'callers.json')
  writeFileSync(file, JSON.stringify(tokens.map((t, k) => ({ name: callerName(k), tokenSha256: sha256Hex(t), scopes: ['read', 'control'], controllerId: controllerName(k) }))), { mode: 0o600 })
  const sim = await startChild('simulator-child.ts', { BENCH_SIM_SECRET: secret })
  const env = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS_FILE: file,
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}`,
    GATEWAY_RATE_LIMIT_CONTROL: '10000000',
    GATEWAY_RATE_LIMIT_READ: '10000000',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    ...extra
  }
  // the log at the default level (info) into a file, as compare.ts keeps it
  const log = join(dir, 'gateway.log')
  const fd = openSync(log, 'a')
  const gw = await startChild('scale-active.ts', { BENCH_SCALE_ACTIVE_ROLE: 'gateway', BENCH_GATEWAY_ENV: JSON.stringify(env) }, { stdout: fd, execArgv: [...deployedNodeFlags(), '--expose-gc', ...flags] })
  closeSync(fd)
  const pool = new Pool(gw.url, { connections: CONCURRENCY, pipelining: 1 })
  return {
    gw,
    sim,
    pool,
    tokens,
    dir,
    log,
    retries: 0,
    close: async () => {
      await pool.close()
      await gw.close()
      await sim.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const CONCURRENCY = Number(process.env.BENCH_SCALE_ACTIVE_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.BENCH_SCALE_ACTIVE_ROUNDS ?? 1)

/**
 * One request as `caller`; a 503 `overloaded` (refused before anything is read or written, when the
 * event loop lags: a host this loaded lags without the gateway's doing) is sent again after 100 ms,
 * a mutation with its own request id, as a client would
 */
async function call (p: Pair, caller: number, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
  for (let attempt = 0; ; attempt++) {
    const res = await p.pool.request({
      path,
      method,
      headers: { authorization: `Bearer ${p.tokens[caller]!}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await res.body.text()
    if (res.statusCode !== 503 || !text.includes('"overloaded"') || attempt >= 50) return { status: res.statusCode, text }
    p.retries++
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** asks the gateway child, waits for its answer of the same type */
async function ask<T> (gw: Child, type: 'probe' | 'memory', snapshot?: string): Promise<T> {
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { gw.proc.off('message', on); reject(new Error(`no ${type} answer within 20 s`)) }, 20_000)
    const on = (m: { type: string }): void => {
      if (m.type !== type) return
      clearTimeout(timer)
      gw.proc.off('message', on)
      resolve(m as T)
    }
    gw.proc.on('message', on)
    gw.proc.send({ type, snapshot })
  })
}
/** the gateway's heap after two full collections, its rate-limit stores, its metrics listener */
const probe = async (gw: Child, snapshot?: string): Promise<ProbeAnswer> => await ask<ProbeAnswer>(gw, 'probe', snapshot)

/** what the remote received: each mutation request id and how many times (bench/simulator-child.ts) */
async function remoteCounts (sim: Child): Promise<Map<string, number>> {
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sim.proc.off('message', on); reject(new Error('no simulator stats within 20 s')) }, 20_000)
    const on = (m: { type: string; requestCounts?: Array<[string, number]> }): void => {
      if (m.type !== 'stats') return
      clearTimeout(timer)
      sim.proc.off('message', on)
      resolve(new Map(m.requestCounts))
    }
    sim.proc.on('message', on)
    sim.proc.send({ type: 'stats', campaigns: [] })
  })
}

// ---- part 1: active load ---------------------------------------------------------------------

interface Task { kind: 'list' | 'status' | 'claim' | 'intervene'; campaign: number; caller: number; requestId?: string }
/** `memory`: the gateway's every 5 s, with the share of the phase's requests made by then */
interface PhaseFigures { name: string; requests: number; seconds: number; byStatus: Map<string, number>; firstFailure: string | undefined; cpuMs: number; retries: number; memory: Array<Memory & { done: number }> }
interface ActiveFigures {
  callers: number
  campaigns: number
  phases: PhaseFigures[]
  idle: ChildStats
  end: ChildStats
  probe: ProbeAnswer
  series: Map<string, number>
  /** every label pair of every sample, by family: `family k="v"` */
  labelPairs: Set<string>
  metricsBytes: number
  idLabels: string[]
  remote: string
  remoteOk: boolean
  logBytes: number
  callersSeen: number
}

async function runPhase (p: Pair, name: string, tasks: Task[], okIds: Set<string>): Promise<PhaseFigures> {
  const { scaleCampaignId } = await import('./scale-rows.js')
  const byStatus = new Map<string, number>()
  let firstFailure: string | undefined
  let next = 0
  const before = await p.gw.stats()
  const retries = p.retries
  const memory: PhaseFigures['memory'] = []
  const sampler = setInterval(() => { void ask<Memory>(p.gw, 'memory').then((m) => { memory.push({ ...m, done: next / tasks.length }) }, () => {}) }, 5000)
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < tasks.length) {
      const t = tasks[next++]!
      const c = `/v1/campaigns/${scaleCampaignId(t.campaign)}`
      const r = t.kind === 'list'
        ? await call(p, t.caller, 'GET', `${c}/requests`)
        : t.kind === 'status'
          ? await call(p, t.caller, 'GET', `${c}/control`)
          : t.kind === 'claim'
            ? await call(p, t.caller, 'POST', `${c}/control/claim`, { requestId: t.requestId, ttlSeconds: 3600 })
            : await call(p, t.caller, 'POST', `${c}/interventions`, { requestId: t.requestId, intervention: { action: 'adjust', knob: 'lr_scale', value: 0.9, seq: t.campaign } })
      const key = `${t.kind} ${r.status}`
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
      if (r.status === 200 && t.requestId !== undefined) okIds.add(t.requestId)
      if (r.status !== 200) firstFailure ??= `${key}: ${r.text.slice(0, 300)}`
    }
  }))
  const seconds = (performance.now() - t0) / 1000
  clearInterval(sampler)
  const after = await p.gw.stats()
  return { name, requests: tasks.length, seconds, byStatus, firstFailure, cpuMs: (after.cpuUs - before.cpuUs) / 1000, retries: p.retries - retries, memory }
}

/** a deterministic shuffle, so both sizes see the same order of kinds */
async function shuffle<T> (xs: T[], seed: number): Promise<T[]> {
  const { prng } = await import('./scale-rows.js')
  const rnd = prng(seed)
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
  return xs
}

async function active (callers: number, campaigns: number): Promise<ActiveFigures> {
  const { randomBytes } = await import('node:crypto')
  const runId = randomBytes(4).toString('hex')
  const p = await startPair(callers)
  try {
    const idle = await p.gw.stats()
    // campaign 10j is claimed and intervened on by caller j mod callers, campaign 10j+5's lease is
    // read by the same; every campaign's list is read by caller c mod callers
    const groups = Math.floor(campaigns / MUTATED_EVERY)
    const claims: Task[] = Array.from({ length: groups }, (_, j) => ({ kind: 'claim', campaign: MUTATED_EVERY * j, caller: j % callers, requestId: `sa-${runId}-claim-${j}` }))
    const mixed = (round: number): Task[] => [
      ...Array.from({ length: campaigns }, (_, c): Task => ({ kind: 'list', campaign: c, caller: c % callers })),
      ...Array.from({ length: groups }, (_, j): Task => ({ kind: 'status', campaign: MUTATED_EVERY * j + 5, caller: j % callers })),
      ...Array.from({ length: groups }, (_, j): Task => ({ kind: 'intervene', campaign: MUTATED_EVERY * j, caller: j % callers, requestId: `sa-${runId}-iv${round}-${j}` }))
    ]
    const okIds = new Set<string>()
    const phases = [await runPhase(p, 'claims', claims, okIds)]
    // BENCH_SCALE_ACTIVE_ROUNDS > 1: the mixed phase again over the same campaigns, to tell growth with campaigns from growth with requests
    for (let round = 1; round <= ROUNDS; round++) phases.push(await runPhase(p, ROUNDS === 1 ? 'mixed' : `mixed ${round}`, await shuffle(mixed(round), 46 + round), okIds))
    const end = await p.gw.stats()
    const pr = await probe(p.gw)
    // the counts are handed to prom-client at a scrape; a rendering is reused for a second (METRICS_CACHE_MS)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const text = await (await fetch(`${pr.metricsUrl}/metrics`)).text()
    const counts = await remoteCounts(p.sim)
    const twice = [...counts].filter(([, n]) => n !== 1).length
    const missing = [...okIds].filter((id) => counts.get(id) !== 1).length
    const callersSeen = new Set([...claims, ...mixed(1)].map((t) => t.caller)).size
    return {
      callers,
      campaigns,
      phases,
      idle,
      end,
      probe: pr,
      series: seriesByFamily(text),
      labelPairs: labelPairs(text),
      metricsBytes: Buffer.byteLength(text),
      idLabels: idLabels(text),
      remote: `${counts.size} mutation ids at the remote, ${okIds.size} answered 200; ${twice} arrived more than once, ${missing} answered 200 without arriving exactly once`,
      remoteOk: twice === 0 && missing === 0,
      logBytes: statSync(p.log).size,
      callersSeen
    }
  } finally {
    await p.close()
  }
}

/** the samples of a Prometheus text exposition, counted by family (a histogram's _bucket, _sum and _count are its own) */
export function seriesByFamily (text: string): Map<string, number> {
  const families = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) \S+$/gm)) families.add(m[1]!)
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]
    const family = families.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, '')
    out.set(family, (out.get(family) ?? 0) + 1)
  }
  return out
}

/** the label pairs of the samples, each with its metric's name */
function labelPairs (text: string): Set<string> {
  const out = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]
    for (const m of line.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) if (m[1] !== 'le') out.add(`${name} ${m[1]!}="${m[2]!}"`)
  }
  return out
}

/** label values that name a campaign, a caller, a controller or a request of this bench: none may appear */
function idLabels (text: string): string[] {
  const found = new Set<string>()
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    if (/scale-c\d|caller-\d|ctl-\d|sa-[0-9a-f]{8}-/.test(m[2]!)) found.add(`${m[1]!}="${m[2]!}"`)
  }
  return [...found]
}

// ---- parts 2 and 3: the rate limiter's memory ------------------------------------------------

interface LimiterStep { callers: number; heapUsed: number; stores: StoreSize[]; keyNames: number; redis?: { keys: number; keyBytes: number; usedMemory: number } }
interface LimiterFigures { where: string; steps: LimiterStep[]; statuses: string }

const LIMIT_CAMPAIGN = '/v1/campaigns/scale-rl-probe'

/** each caller listed makes one read and one control request (an empty intervention body: 400, counted first) */
async function touch (p: Pair, callers: number[], statuses: Map<string, number>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < callers.length) {
      const k = callers[next++]!
      for (const r of [await call(p, k, 'GET', `${LIMIT_CAMPAIGN}/requests`), await call(p, k, 'POST', `${LIMIT_CAMPAIGN}/interventions`, {})]) {
        statuses.set(String(r.status), (statuses.get(String(r.status)) ?? 0) + 1)
      }
    }
  }))
}

async function redisFigures (redis: Redis): Promise<NonNullable<LimiterStep['redis']>> {
  let cursor = '0'
  const keys: string[] = []
  do {
    const [c, batch] = await redis.scan(cursor, 'MATCH', 'oogw-*', 'COUNT', 1000)
    cursor = c
    keys.push(...batch)
  } while (cursor !== '0')
  let keyBytes = 0
  for (const k of keys) keyBytes += Number(await redis.call('MEMORY', 'USAGE', k, 'SAMPLES', '0') ?? 0)
  const usedMemory = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1])
  return { keys: keys.length, keyBytes, usedMemory }
}

/**
 * V8's interpreter alone in this gateway: optimised and baseline code grows with the requests
 * made, by about a megabyte over these steps, and would be counted against the callers (a heap
 * snapshot's diff showed it); objects are laid out as with the compilers
 */
const INTERPRETER_ONLY = ['--no-opt', '--no-maglev', '--no-sparkplug', '--no-flush-bytecode']

async function limiterMemory (callers: number, redisUrl: string | undefined): Promise<LimiterFigures> {
  const p = await startPair(callers, redisUrl === undefined ? {} : { GATEWAY_REDIS_URL: redisUrl }, INTERPRETER_ONLY)
  let redis: Redis | undefined
  try {
    if (redisUrl !== undefined) {
      const { Redis: RedisClient } = await import('ioredis')
      redis = new RedisClient(redisUrl)
    }
    const statuses = new Map<string, number>()
    const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i)
    // warm, as the first caller alone: the JIT, every pooled connection, the routes' first answers
    await touch(p, Array.from({ length: 100 * CONCURRENCY }, () => 0), statuses)
    const steps: LimiterStep[] = []
    // BENCH_SCALE_ACTIVE_SNAPSHOTS=<dir>: a heap snapshot at each reading, to find what a caller costs
    const snapshots = process.env.BENCH_SCALE_ACTIVE_SNAPSHOTS
    const measure = async (n: number): Promise<void> => {
      const pr = await probe(p.gw, snapshots === undefined ? undefined : join(snapshots, `${redis === undefined ? 'memory' : 'redis'}-${steps.length}-${n}.heapsnapshot`))
      steps.push({ callers: n, heapUsed: pr.memory.heapUsed, stores: pr.stores, keyNames: pr.keyNames, ...(redis === undefined ? {} : { redis: await redisFigures(redis) }) })
      // the collections (and a snapshot) held the event loop: its delay sample passes before the next requests
      await new Promise((resolve) => setTimeout(resolve, 1500))
    }
    // each size twice: the second reading of a size tells the noise
    await touch(p, range(0, 10), statuses)
    await measure(10)
    await touch(p, range(0, 10), statuses)
    await measure(10)
    await touch(p, range(10, callers), statuses)
    await measure(callers)
    await touch(p, range(0, callers), statuses)
    await measure(callers)
    if (redis !== undefined) {
      // the counters expire within a minute anyway; these are this run's, on a database found empty
      const keys = await redis.keys('oogw-*')
      if (keys.length > 0) await redis.del(...keys)
    }
    return { where: redisUrl === undefined ? 'in process (LocalStore)' : `Redis (${redisUrl.replace(/\/\/[^@]*@/, '//')})`, steps, statuses: `${[...statuses].map(([s, n]) => `${s}:${n}`).join(' ')}, ${p.retries} sent again after a 503 overloaded` }
  } finally {
    redis?.disconnect()
    await p.close()
  }
}

/** the Redis URL on the bench's own database, or why not */
async function benchRedis (): Promise<string | undefined> {
  const base = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL
  if (base === undefined) { console.log('rate limiter on Redis skipped: set BENCH_REDIS_URL (or TEST_REDIS_URL)'); return undefined }
  const u = new URL(base)
  u.pathname = `/${process.env.BENCH_SCALE_ACTIVE_REDIS_DB ?? '11'}`
  const { Redis: RedisClient } = await import('ioredis')
  const r = new RedisClient(u.toString())
  try {
    const n = await r.dbsize()
    if (n !== 0) { console.log(`rate limiter on Redis skipped: database ${u.pathname} holds ${n} keys (set BENCH_SCALE_ACTIVE_REDIS_DB to an empty one)`); return undefined }
  } finally {
    r.disconnect()
  }
  return u.toString()
}

// ---- the bench -------------------------------------------------------------------------------

export async function scaleActive (): Promise<void> {
  const callers = Number(process.env.BENCH_SCALE_ACTIVE_CALLERS ?? 1000)
  const campaigns = Number(process.env.BENCH_SCALE_ACTIVE_CAMPAIGNS ?? 100_000)
  if (!Number.isInteger(callers) || callers < 10 || !Number.isInteger(campaigns) || campaigns < 1000) throw new Error('BENCH_SCALE_ACTIVE_CALLERS ≥ 10 and BENCH_SCALE_ACTIVE_CAMPAIGNS ≥ 1000, integers')
  const { buildChildren } = await import('./child-ipc.js')
  buildChildren()
  const load0 = loadavg()
  const small = await active(10, 1000)
  console.log(`active (10 callers, 1000 campaigns): done in ${small.phases.reduce((s, p) => s + p.seconds, 0).toFixed(1)} s`)
  const large = await active(callers, campaigns)
  console.log(`active (${callers} callers, ${campaigns} campaigns): done in ${large.phases.reduce((s, p) => s + p.seconds, 0).toFixed(1)} s`)
  const limiters = [await limiterMemory(callers, undefined)]
  const redisUrl = await benchRedis()
  if (redisUrl !== undefined) limiters.push(await limiterMemory(callers, redisUrl))
  report(small, large, limiters, load0)
}

const mib = (b: number): string => (b / MiB).toFixed(1)

function report (small: ActiveFigures, large: ActiveFigures, limiters: LimiterFigures[], load0: number[]): void {
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' ')
  console.log(`\nnode ${process.version}, ${availableParallelism()} CPUs, load average ${load(load0)} at the start, ${load(loadavg())} at the end; ${CONCURRENCY} requests in flight`)
  console.log('gateway: its own process, `npm start`\'s node flags + --expose-gc, SQLite ledger (fresh), log at info to a file; simulator (campaign-control) in its own process')
  if (process.env.BENCH_SCALE_ACTIVE_SQLITE_CACHE_KIB !== undefined) console.log(`DIAGNOSIS: the ledger's page cache bound set to ${process.env.BENCH_SCALE_ACTIVE_SQLITE_CACHE_KIB} KiB (BENCH_SCALE_ACTIVE_SQLITE_CACHE_KIB)`)
  console.log('')
  console.log('| callers | campaigns | phase | requests | s | req/s | gateway CPU µs/req | answers | 503 overloaded, sent again |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const f of [small, large]) {
    for (const ph of f.phases) {
      console.log(`| ${f.callers} | ${f.campaigns} | ${ph.name} | ${ph.requests} | ${ph.seconds.toFixed(1)} | ${(ph.requests / ph.seconds).toFixed(0)} | ${(ph.cpuMs * 1000 / ph.requests).toFixed(0)} | ${[...ph.byStatus].map(([k, n]) => `${k}: ${n}`).join(', ')} | ${ph.retries} |`)
    }
  }
  for (const f of [small, large]) for (const ph of f.phases) if (ph.firstFailure !== undefined) console.log(`  ${f.callers}×${f.campaigns} ${ph.name}: first non-200: ${ph.firstFailure}`)
  console.log(`\nthe gateway's memory during the phases at ${large.callers} × ${large.campaigns}, MiB (sampled every 5 s, shown at about every tenth of each phase; heap as it stands, not after a collection)`)
  console.log('| phase | done | RSS | anonymous | of which the main thread\'s malloc heap | file-backed | V8 heap used (total) | external |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const ph of large.phases) {
    const shown = ph.memory.filter((m, i) => i === ph.memory.length - 1 || Math.floor(m.done * 10) !== Math.floor((ph.memory[i + 1]?.done ?? 1) * 10))
    for (const m of shown) console.log(`| ${ph.name} | ${(m.done * 100).toFixed(0)}% | ${mib(m.memory.rss)} | ${mib(m.anon)} | ${mib(m.brk)} | ${mib(m.file)} | ${mib(m.memory.heapUsed)} (${mib(m.memory.heapTotal)}) | ${mib(m.memory.external)} |`)
  }
  console.log('\n| callers | campaigns | RSS idle MiB | RSS after load MiB | peak RSS MiB | heap used (total) after full GC MiB | external MiB | RSS (anonymous, main malloc heap, file) after GC MiB | rate-limit stores (keys/max); caller names kept | ledger MB (page cache bound MiB) | series | log MB | callers that made requests | remote check |')
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const f of [small, large]) {
    const series = [...f.series.values()].reduce((s, n) => s + n, 0)
    console.log(`| ${f.callers} | ${f.campaigns} | ${mib(f.idle.rss)} | ${mib(f.end.rss)} | ${mib(f.end.peakRss)} | ${mib(f.probe.memory.heapUsed)} (${mib(f.probe.memory.heapTotal)}) | ${mib(f.probe.memory.external)} | ${mib(f.probe.memory.rss)} (${mib(f.probe.anon)}, ${mib(f.probe.brk)}, ${mib(f.probe.file)}) | ${f.probe.stores.map((s) => `${s.size}/${s.max}`).join(', ')}; ${f.probe.keyNames} | ${(f.probe.ledger.bytes / 1e6).toFixed(1)} (${(f.probe.ledger.cacheKiB / 1024).toFixed(1)}) | ${series} | ${(f.logBytes / 1e6).toFixed(1)} | ${f.callersSeen} | ${f.remoteOk ? 'OK' : 'FAILED'}: ${f.remote} |`)
  }
  const families = [...new Set([...small.series.keys(), ...large.series.keys()])].sort()
  const differing = families.filter((k) => small.series.get(k) !== large.series.get(k))
  const top = [...large.series].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, n]) => `${k} ${n}`).join(', ')
  console.log(`\nseries by family: ${families.length} families, /metrics ${small.metricsBytes} and ${large.metricsBytes} bytes; the largest: ${top}; ${differing.length === 0 ? 'every family has the same count at both sizes' : 'differing:'}`)
  for (const k of differing) console.log(`  ${k}: ${small.series.get(k) ?? 0} at 10×1000, ${large.series.get(k) ?? 0} at ${large.callers}×${large.campaigns}`)
  const onlyIn = (a: ActiveFigures, b: ActiveFigures): string[] => [...a.labelPairs].filter((x) => !b.labelPairs.has(x))
  if (differing.length > 0) {
    console.log(`  label pairs only at 10×1000: ${onlyIn(small, large).join(', ') || 'none'}`)
    console.log(`  label pairs only at ${large.callers}×${large.campaigns}: ${onlyIn(large, small).join(', ') || 'none'}`)
  }
  for (const f of [small, large]) if (f.idLabels.length > 0) console.log(`  LABELS NAMING IDS at ${f.callers}×${f.campaigns}: ${f.idLabels.slice(0, 10).join(', ')}`)

  console.log('\nrate limiter: heap used after two full collections, once each caller of the first 10, then of all, made one read and one control request; V8\'s interpreter alone (each size measured twice: the second reading shows the noise)')
  console.log('| store | callers | heap used KiB | in-memory stores (keys/max); caller names kept | Redis keys | MEMORY USAGE bytes | used_memory bytes |')
  console.log('|---|---|---|---|---|---|---|')
  for (const l of limiters) {
    for (const s of l.steps) console.log(`| ${l.where} | ${s.callers} | ${(s.heapUsed / 1024).toFixed(0)} | ${s.stores.map((x) => `${x.size}/${x.max}`).join(', ') || '-'}; ${s.keyNames} | ${s.redis?.keys ?? '-'} | ${s.redis?.keyBytes ?? '-'} | ${s.redis?.usedMemory ?? '-'} |`)
    // b: the second reading at 10 callers, c: the first at all of them
    const [b, c] = [l.steps[1]!, l.steps[2]!]
    const per = (c.heapUsed - b.heapUsed) / (c.callers - b.callers)
    const noise = Math.max(Math.abs(b.heapUsed - l.steps[0]!.heapUsed), Math.abs(l.steps[3]!.heapUsed - c.heapUsed))
    console.log(`  ${l.where}: heap +${((c.heapUsed - b.heapUsed) / 1024).toFixed(0)} KiB from ${b.callers} to ${c.callers} callers, ${per.toFixed(0)} B per caller (noise between two readings of one size ≤ ${(noise / 1024).toFixed(0)} KiB); answers ${l.statuses}`)
    if (c.redis !== undefined && b.redis !== undefined) {
      console.log(`  ${l.where}: ${c.redis.keys} keys, ${(c.redis.keyBytes / c.callers).toFixed(0)} B per caller by MEMORY USAGE; used_memory +${c.redis.usedMemory - b.redis.usedMemory} B from ${b.callers} to ${c.callers} callers (${((c.redis.usedMemory - b.redis.usedMemory) / (c.callers - b.callers)).toFixed(0)} B per caller; the whole server's, other clients included)`)
    }
  }

  const seriesOf = (f: ActiveFigures): number => [...f.series.values()].reduce((s, n) => s + n, 0)
  console.log('\ntargets (issue 47):')
  console.log(`  peak RSS at ${large.callers} callers × ${large.campaigns} campaigns: ${(large.end.peakRss / 1e6).toFixed(0)} MB (${mib(large.end.peakRss)} MiB) < 200 MB: ${large.end.peakRss < 200e6 ? 'met' : 'MISSED'}`)
  const ids = small.idLabels.length + large.idLabels.length
  const verdict = ids > 0 ? 'MISSED: a label names an id' : seriesOf(small) === seriesOf(large) ? 'equal, met' : 'met: they differ only in the values of fixed label sets, listed above (statuses answered, GC kinds run)'
  console.log(`  series: ${seriesOf(small)} at 10 × 1000, ${seriesOf(large)} at ${large.callers} × ${large.campaigns}: ${verdict}; labels naming an id: ${ids === 0 ? 'none' : 'FOUND'}`)
}
