// npm run bench -- --instructions: what one uncached task read costs each proxy in CPU
// instructions, counted by valgrind's callgrind — the same figure run after run, whatever else the
// VM is doing (the CPU µs of the comparison move by ±10 % here), so a change worth 1 % can be
// told from noise. For each of the bare Node proxy, the bare Fastify proxy and the gateway: the
// same process first runs at full speed with V8's `--trace-opt --trace-deopt`, reads one at a time
// in windows until the optimizing compiler has been quiet for a while (settle: the steady state,
// issue 47); then it starts under callgrind with counting off, serves that many reads, counts
// BENCH_IR_N reads one at a time (no batching to vary with timing), and dumps. A fixed warm-up of
// 8,000 left the gateway still compiling: 33 k instructions a read in the compiler and a read path
// not yet optimised (BENCHMARKS.md#read-steady-state). The optimizing compiler's own work (V8's
// `compiler::` functions) and the garbage collector's are reported apart, with what V8 optimised
// while the count ran. Then a coalesced answer, 64 callers at once, against the upstream's own
// answer and bare Fastify's from memory (coalescedRows), warmed the same way; then a mutation
// (mutationRows), after a fixed warm-up. Needs valgrind (`apt-get install -y valgrind`);
// user-space instructions only — the kernel's share of a write is not in it.
// Under valgrind a read takes milliseconds, so work done per unit of time (the load-shedding
// sampler, the deadline sweep) weighs more per read here than at full speed: compare rows and
// versions with this, not absolute costs.
import { execFileSync, fork } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Pool } from 'undici'
import pg from 'pg'
import { sha256Hex } from '../src/callers/tokens.js'
import { BUILD, buildChildren, startChild, type Child } from './child-ipc.js'
import { bareHealth, deployedNodeFlags, directHealth, gatewayEnv, header, restHealth } from './compare.js'
import type { Request } from './load.js'

const N = Number(process.env.BENCH_IR_N ?? 2000)
/** BENCH_IR_WARM: a fixed warm-up of the read rows instead of one measured (settle), as before issue 47 */
const WARM = process.env.BENCH_IR_WARM === undefined ? undefined : Number(process.env.BENCH_IR_WARM)
/** the read rows' warm-up, measured: windows of BENCH_IR_WINDOW reads until BENCH_IR_QUIET in a row see V8's optimizing compiler do nothing, at most BENCH_IR_WARM_CAP reads */
const WINDOW = Number(process.env.BENCH_IR_WINDOW ?? 1000)
const QUIET = Number(process.env.BENCH_IR_QUIET ?? 8)
const WARM_CAP = Number(process.env.BENCH_IR_WARM_CAP ?? 200_000)
const COMPILER = /compiler::|Compiler::|CodeGenerator|OptimizedCompilationJob/
/**
 * V8's garbage collector, reported apart too: one mark-compact is ~150 k instructions per read over
 * a 1,000-read window, and whether one lands in the window depends on what the process allocated
 * before it (and, under valgrind, on how long the window takes): the allocation per read, which
 * is what decides how often it runs, is measured by the comparison's GC columns (compare.ts)
 */
const GC = /Heap::|heap::|MarkCompact|Marking|Sweeper|Scaveng|Evacuat|BodyDescriptorBase::Iterate|IterateObjectCache|GCTracer|ConcurrentMarking|MemoryAllocator|RememberedSet|SlotSet/
/** BENCH_IR_ONLY=gateway (a row's name starts with it): that row alone, for a quick comparison of two versions */
const ONLY = process.env.BENCH_IR_ONLY
/** BENCH_IR_KEEP=<dir>: callgrind's dumps are kept there, for callgrind_annotate */
const KEEP = process.env.BENCH_IR_KEEP

function valgrindAvailable (): boolean {
  try { execFileSync('valgrind', ['--version'], { stdio: 'ignore' }); return true } catch { return false }
}

/** `n` uncached reads, one at a time, on `pool` */
async function drive (pool: Pool, token: string, n: number, first: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await pool.request({ method: 'GET', path: `/v1/tasks/ir-${first + i}`, headers: { authorization: `Bearer ${token}` } })
    await r.body.text()
    if (r.statusCode !== 200) throw new Error(`read answered ${r.statusCode}`)
  }
}

/** the coalesced rows' callers: `n` bursts of CALLERS requests at once on `pool`, every answer a 200 */
const CALLERS = 64
const BURSTS = Number(process.env.BENCH_IR_BURSTS ?? 50)
/** BENCH_IR_BURSTS_WARM: a fixed warm-up of the coalesced rows, in bursts, instead of one measured (settle) */
const WARM_BURSTS = process.env.BENCH_IR_BURSTS_WARM === undefined ? undefined : Number(process.env.BENCH_IR_BURSTS_WARM)
async function bursts (pool: Pool, make: () => Request, n: number): Promise<void> {
  for (let b = 0; b < n; b++) {
    await Promise.all(Array.from({ length: CALLERS }, async () => {
      const q = make()
      const r = await pool.request({ method: q.method, path: q.path, headers: q.headers, body: q.body })
      await r.body.text()
      if (r.statusCode !== 200) throw new Error(`${q.path} answered ${r.statusCode}`)
    }))
  }
}

/** total instructions and the optimizing compiler's part, from callgrind's dumps */
function count (files: string[]): { all: number; compiler: number; gc: number } {
  let all = 0
  let compiler = 0
  let gc = 0
  for (const f of files) {
    if (statSync(f).size === 0) continue
    const ann = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', f], { maxBuffer: 1 << 28 }).toString()
    const total = /([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/.exec(ann)
    if (total === null) continue
    all += Number(total[1]!.replaceAll(',', ''))
    for (const line of ann.split('\n')) {
      const isCompiler = COMPILER.test(line)
      if (!isCompiler && !GC.test(line)) continue
      const m = /^\s*([\d,]+)/.exec(line)
      if (m === null) continue
      if (isCompiler) compiler += Number(m[1]!.replaceAll(',', ''))
      else gc += Number(m[1]!.replaceAll(',', ''))
    }
  }
  return { all, compiler, gc }
}

/** what V8 reports with `--trace-opt --trace-deopt`: functions optimised (compiled by TurboFan), deoptimisations and their reasons */
interface CompilerEvents { optimised: number; deopts: number; reasons: Map<string, number> }

function compilerEvents (text: string): CompilerEvents {
  const e: CompilerEvents = { optimised: 0, deopts: 0, reasons: new Map() }
  for (const line of text.split('\n')) {
    if (line.startsWith('[completed compiling ')) e.optimised++
    else if (line.startsWith('[bailout (kind: deopt')) {
      e.deopts++
      const reason = /reason: ([^)]*)\): begin\. deoptimizing \S+ <JSFunction ([^ >]*)/.exec(line)
      const key = reason === null ? '?' : `${reason[2] === '(sfi' ? '(anonymous)' : reason[2]!}: ${reason[1]!}`
      e.reasons.set(key, (e.reasons.get(key) ?? 0) + 1)
    }
  }
  return e
}

/** the text appended to `file` since `from`, and where it now ends */
function readFrom (file: string, from: number): { text: string; end: number } {
  const end = statSync(file).size
  if (end <= from) return { text: '', end: from }
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(end - from)
    readSync(fd, buf, 0, buf.length, from)
    return { text: buf.toString('utf8'), end }
  } finally {
    closeSync(fd)
  }
}

/** the node flags of a row's child: `--single-threaded` (the compiler on the main thread, so it is counted), the bench's, the deployed ones for the gateway */
const nodeFlags = (script: string): string[] =>
  ['--single-threaded', ...(process.env.BENCH_IR_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''), ...(script === 'gateway-child.js' ? deployedNodeFlags() : []), '--trace-opt', '--trace-deopt']

/** how long the optimizing compiler took to fall quiet on a row, measured at full speed (settle) */
interface Settled { units: number; windows: number[]; deopts: number; reasons: Map<string, number>; quiet: boolean; seconds: number }

/**
 * The row's child at full speed, not under callgrind, with the same node flags: `step` run in
 * windows of `window` units until QUIET windows in a row saw V8 optimise or deoptimise nothing,
 * or WARM_CAP units. The units until then are the row's warm-up under callgrind, where the same
 * reads take ~50 times longer. V8 tiers a function up by the bytecode it has run (its interrupt
 * budget), not by time, and with `--single-threaded` compiles on the main thread at once, so the
 * same reads bring the same optimisations in both runs; what runs by the clock (timers, the
 * logger's batch) runs more often per read under callgrind, and the counted window's own count of
 * optimisations says whether that moved anything (underCallgrind).
 */
async function settle (o: { script: string; env: Record<string, string>; dir: string; connections: number; window: number; step: (pool: Pool, n: number) => Promise<void> }): Promise<Settled> {
  const file = join(o.dir, `${o.script}.settle.log`)
  const log = openSync(file, 'a')
  const proc = fork(join(BUILD, 'bench', o.script), [], { execArgv: nodeFlags(o.script), env: { ...process.env, ...o.env, BENCH_GC_TOTALS: 'off' }, stdio: ['ignore', log, 'ignore', 'ipc'] })
  closeSync(log)
  const s: Settled = { units: 0, windows: [], deopts: 0, reasons: new Map(), quiet: false, seconds: 0 }
  const t0 = performance.now()
  try {
    const url = await ready(proc, o.script)
    const pool = new Pool(url, { connections: o.connections })
    try {
      let at = readFrom(file, 0).end
      let still = 0
      while (s.units < WARM_CAP && still < QUIET) {
        await o.step(pool, o.window)
        s.units += o.window
        const { text, end } = readFrom(file, at)
        at = end
        const e = compilerEvents(text)
        s.windows.push(e.optimised)
        s.deopts += e.deopts
        for (const [k, v] of e.reasons) s.reasons.set(k, (s.reasons.get(k) ?? 0) + v)
        still = e.optimised + e.deopts === 0 ? still + 1 : 0
      }
      s.quiet = still >= QUIET
      s.seconds = (performance.now() - t0) / 1000
    } finally {
      await pool.close()
    }
  } finally {
    proc.kill('SIGKILL')
  }
  return s
}

async function ready (proc: ReturnType<typeof fork>, script: string): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    proc.on('message', (m: { type: string; url: string }) => { if (m.type === 'ready') resolve(m.url) })
    proc.once('exit', (code) => { reject(new Error(`${script} exited (${String(code)})`)) })
  })
}

/**
 * One target under callgrind: started with counting off, `warm` run, then `counted` run with
 * counting on, dumped, killed; the instructions per unit (`units` of them counted) printed. Both
 * phases get the one pool of `connections` kept-alive connections: a pool made for the counted
 * phase put the opening of its connections in the counted window — and the deoptimization a new
 * connection brings, ~74 k a read on bare Fastify; for the coalesced rows 64 connections whose
 * first requests arrived one by one, each an upstream call of its own (BENCHMARKS.md#warm-connections)
 */
async function underCallgrind (o: { name: string; unit: string; script: string; env: Record<string, string>; dir: string; units: number; connections: number; warm: (pool: Pool) => Promise<void>; counted: (pool: Pool) => Promise<void>; note?: string }): Promise<void> {
  const out = join(KEEP ?? o.dir, `cg-${o.script}`)
  const file = join(o.dir, `${o.script}.log`)
  const log = openSync(file, 'a')
  const proc = fork(join(BUILD, 'bench', o.script), [], {
    execPath: 'valgrind',
    // V8's JIT writes code into memory it then runs: callgrind must look for that
    execArgv: ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, process.execPath, ...nodeFlags(o.script)],
    env: { ...process.env, ...o.env, BENCH_GC_TOTALS: 'off' },
    stdio: ['ignore', log, 'ignore', 'ipc']
  })
  closeSync(log)
  // what V8's optimizing compiler did while the count ran: nothing, once the warm-up was long enough
  let during: CompilerEvents
  try {
    const url = await ready(proc, `${o.script} under valgrind`)
    const pool = new Pool(url, { connections: o.connections })
    try {
      await o.warm(pool)
      const from = readFrom(file, 0).end
      execFileSync('callgrind_control', ['-i', 'on', String(proc.pid)], { stdio: 'ignore' })
      await o.counted(pool)
      execFileSync('callgrind_control', ['-d', String(proc.pid)], { stdio: 'ignore' })
      during = compilerEvents(readFrom(file, from).text)
    } finally {
      await pool.close()
    }
  } finally {
    proc.kill('SIGKILL')
  }
  const c = count(readdirSync(KEEP ?? o.dir).filter((f) => f.startsWith(`cg-${o.script}.${String(proc.pid)}`)).map((f) => join(KEEP ?? o.dir, f)))
  const k = (n: number): string => (n / o.units / 1000).toFixed(1)
  console.log(`  ${o.name.padEnd(20)} ${k(c.all - c.compiler - c.gc).padStart(7)} k instructions/${o.unit}  (+ ${k(c.gc)} k in the garbage collector, + ${k(c.compiler)} k in the optimizing compiler; ` +
    `with the collector ${k(c.all - c.compiler)} k; while counted V8 optimised ${during.optimised} functions and deoptimised ${during.deopts})${o.note ?? ''}`)
}

/** a settled row's warm-up, for the row's line: how long, and what the compiler did window by window */
function settledNote (s: Settled, unit: string, window = WINDOW): string {
  const quietFrom = s.units - (s.quiet ? QUIET * window : 0)
  const reasons = [...s.reasons].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([r, n]) => `${r} ×${n}`).join('; ')
  return `\n  ${''.padEnd(20)} warm-up ${s.units.toLocaleString('en')} ${unit}s (${s.seconds.toFixed(0)} s at full speed): ${s.quiet ? `quiet after ${quietFrom.toLocaleString('en')}` : 'not quiet by the cap (BENCH_IR_WARM_CAP)'}; ` +
    `functions optimised per ${window.toLocaleString('en')}: ${s.windows.join(' ')}; ${s.deopts} deoptimisations${reasons === '' ? '' : ` (${reasons})`}`
}

export async function instructions (): Promise<void> {
  if (!valgrindAvailable()) {
    console.log('bench --instructions: valgrind is not installed (apt-get install -y valgrind); nothing measured')
    return
  }
  buildChildren()
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-ir-'))
  const token = randomBytes(18).toString('base64url')
  const secret = randomBytes(24).toString('base64url')
  const upstream = await startChild('./upstream-child.ts', {})
  const gw = JSON.parse(gatewayEnv(upstream.url, secret, token, dir, 'gateway').BENCH_GATEWAY_ENV!) as Record<string, string>
  // a read takes milliseconds under valgrind: the event-loop delay bound would shed them
  gw.GATEWAY_MAX_EVENT_LOOP_DELAY_MS = '0'
  const rows: Array<[string, string]> = [['bare Node proxy', 'bare-proxy-child.js'], ['bare Fastify proxy', 'fastify-floor-child.js'], ['gateway, uncached', 'gateway-child.js']]
  const warmup = WARM === undefined ? `a warm-up measured at full speed first (windows of ${WINDOW.toLocaleString('en')} reads until ${QUIET} in a row see V8 optimise nothing, at most ${WARM_CAP.toLocaleString('en')})` : `after ${WARM}`
  console.log(`${header()}\ninstructions per uncached GET /v1/tasks/:id, one at a time, ${N} counted ${warmup}, under callgrind (--single-threaded node)`)
  let first = 0
  // every read row's child: the gateway's configuration, and the upstream the bare proxies call
  const readEnv = { BENCH_GATEWAY_ENV: JSON.stringify(gw), BENCH_UPSTREAM: upstream.url }
  const step = async (pool: Pool, n: number): Promise<void> => { await drive(pool, token, n, first); first += n }
  try {
    for (const [name, script] of rows) {
      if (ONLY !== undefined && !name.startsWith(ONLY)) continue
      const settled = WARM === undefined ? await settle({ script, env: readEnv, dir, connections: 1, window: WINDOW, step }) : undefined
      const reads = settled?.units ?? WARM ?? 0
      const warm = async (pool: Pool): Promise<void> => { await step(pool, reads) }
      const counted = async (pool: Pool): Promise<void> => { await step(pool, N) }
      await underCallgrind({ name, unit: 'read', script, env: readEnv, dir, units: N, connections: 1, warm, counted, note: settled === undefined ? '' : settledNote(settled, 'read') })
    }
    await coalescedRows(dir, upstream, readEnv, token)
  } finally {
    await upstream.close()
  }
  try {
    await mutationRows(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The coalesced row of the comparison (BENCHMARKS.md#coalesced-instructions), counted: what one
 * answer costs when 64 callers ask at once and share one upstream call, against what the
 * upstream's own answer costs (`direct`: the bench upstream under callgrind, answering
 * `message/send` to 64 callers at once) and bare Fastify answering from memory. The comparison's
 * throughput ratio moves by ±15 % with the host; this one does not. The kernel's part of a
 * request (a read and a write a socket, alike in every row) is not in it.
 */
async function coalescedRows (dir: string, upstream: Child, env: Record<string, string>, token: string): Promise<void> {
  const rows: Array<[string, string, () => Request]> = [
    ['direct (message/send)', 'upstream-child.js', directHealth],
    ['bare Fastify, from memory', 'fastify-floor-child.js', bareHealth],
    ['gateway, coalesced', 'gateway-child.js', restHealth(token)]
  ]
  const chosen = rows.filter(([name]) => ONLY === undefined || name.startsWith(ONLY))
  if (chosen.length === 0) return
  const warmup = WARM_BURSTS === undefined ? 'a warm-up measured at full speed first, as the reads\'' : `after ${WARM_BURSTS * CALLERS}`
  console.log(`instructions per answer, ${CALLERS} callers at once, ${BURSTS * CALLERS} counted ${warmup} (GET /v1/supervisor/health; direct: the upstream's message/send)`)
  // the window in answers: whole bursts of CALLERS, about WINDOW of them
  const window = Math.max(1, Math.round(WINDOW / CALLERS)) * CALLERS
  for (const [name, script, make] of chosen) {
    let before = 0
    let after = 0
    const health = async (): Promise<number> => (await upstream.stats()).calls['message/send'] ?? 0
    const step = async (pool: Pool, answers: number): Promise<void> => { await bursts(pool, make, answers / CALLERS) }
    const settled = WARM_BURSTS === undefined ? await settle({ script, env, dir, connections: CALLERS, window, step }) : undefined
    const answers = settled?.units ?? (WARM_BURSTS ?? 0) * CALLERS
    const warm = async (pool: Pool): Promise<void> => { await step(pool, answers); before = await health() }
    const counted = async (pool: Pool): Promise<void> => { await bursts(pool, make, BURSTS); after = await health() }
    await underCallgrind({ name, unit: 'answer', script, env, dir, units: BURSTS * CALLERS, connections: CALLERS, warm, counted, note: settled === undefined ? '' : settledNote(settled, 'answer', window) })
    if (script === 'gateway-child.js') console.log(`  ${''.padEnd(20)} ${((after - before) / (BURSTS * CALLERS) * 100).toFixed(1)} % of answers made an upstream call`)
  }
}

/**
 * interventions counted, after warm ones, one at a time: the optimizing compiler settles on the
 * mutation path only after a few thousand (600 warm: 2,030 k a mutation on SQLite, 2,000: 1,668 k,
 * 4,000: 1,527 k with the compiler's own share down to 117 k)
 */
const N_MUTATIONS = Number(process.env.BENCH_IR_MUTATIONS ?? 500)
const WARM_MUTATIONS = Number(process.env.BENCH_IR_MUTATIONS_WARM ?? 4000)
const MUTATION_CAMPAIGNS = 16

/**
 * The mutation path (docs/design.md#order-of-checks): `POST /v1/campaigns/:c/interventions`, one at
 * a time round-robin over campaigns claimed first, through the gateway on the SQLite ledger (a file
 * in the temp directory) and — with BENCH_POSTGRES_URL or TEST_POSTGRES_URL — on PostgreSQL (a
 * schema of its own, dropped after), against the simulator in a process of its own. What is
 * counted is the gateway's process only: the ledger's own work on PostgreSQL is the server's.
 */
async function mutationRows (dir: string): Promise<void> {
  const pgUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL
  const ledgers: Array<['SQLite' | 'PostgreSQL', string]> = [['SQLite', `sqlite:${join(dir, 'ledger.db')}`]]
  const schema = `oogw_ir_${randomBytes(4).toString('hex')}`
  if (pgUrl !== undefined) {
    const u = new URL(pgUrl)
    u.searchParams.set('options', `-c search_path=${schema}`)
    ledgers.push(['PostgreSQL', u.toString()])
  }
  const rows = ledgers.filter(([ledger]) => ONLY === undefined || `gateway, intervention (${ledger})`.startsWith(ONLY))
  if (rows.length === 0) return
  console.log(`instructions per intervention (POST /v1/campaigns/:c/interventions), one at a time over ${MUTATION_CAMPAIGNS} claimed campaigns, ${N_MUTATIONS} counted after ${WARM_MUTATIONS}${pgUrl === undefined ? '; PostgreSQL skipped: set BENCH_POSTGRES_URL (or TEST_POSTGRES_URL)' : ''}`)
  const secret = randomBytes(24).toString('base64url')
  const token = randomBytes(18).toString('base64url')
  const sim = await startChild('./simulator-child.ts', { BENCH_SIM_SECRET: secret })
  const admin = pgUrl === undefined ? undefined : new pg.Client({ connectionString: pgUrl })
  try {
    if (admin !== undefined) {
      await admin.connect()
      await admin.query(`CREATE SCHEMA ${schema}`)
    }
    for (const [ledger, url] of rows) {
      const env: Record<string, string> = {
        OPENOPERATOR_URL: sim.url,
        SPYNEL_AGENT_ZERO_API_KEY: secret,
        GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read', 'control'], controllerId: 'bench-ctl' }]),
        GATEWAY_CONTROL_ENABLED: 'true',
        GATEWAY_LEDGER_URL: url,
        GATEWAY_RATE_LIMIT_CONTROL: '10000000',
        GATEWAY_RATE_LIMIT_READ: '10000000',
        GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0'
      }
      const run = randomBytes(3).toString('hex')
      const campaigns = Array.from({ length: MUTATION_CAMPAIGNS }, (_, i) => `ir-${run}-${i}`)
      let n = 0
      const interventions = async (pool: Pool, count: number): Promise<void> => {
        for (let i = 0; i < count; i++, n++) {
          const c = campaigns[n % campaigns.length]!
          const r = await pool.request({ method: 'POST', path: `/v1/campaigns/${c}/interventions`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ requestId: `iv-${run}-${n}`, intervention: { n } }) })
          const text = await r.body.text()
          if (r.statusCode !== 200) throw new Error(`intervention answered ${r.statusCode}: ${text.slice(0, 300)}`)
        }
      }
      await underCallgrind({
        name: `gateway, intervention (${ledger})`,
        unit: 'mutation',
        script: 'gateway-child.js',
        env: { BENCH_GATEWAY_ENV: JSON.stringify(env) },
        dir,
        units: N_MUTATIONS,
        // one connection from the claims to the counted interventions
        connections: 1,
        warm: async (pool) => {
          // the card's control operations are discovered once the gateway is up: claims retry until it has
          for (const c of campaigns) {
            for (let attempt = 0; ; attempt++) {
              const r = await pool.request({ method: 'POST', path: `/v1/campaigns/${c}/control/claim`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ requestId: `claim-${c}-${attempt}`, ttlSeconds: 3600 }) })
              const text = await r.body.text()
              if (r.statusCode === 200) break
              if (attempt >= 100) throw new Error(`claim of ${c} answered ${r.statusCode}: ${text.slice(0, 300)}`)
              await new Promise((resolve) => setTimeout(resolve, 200))
            }
          }
          await interventions(pool, WARM_MUTATIONS)
        },
        counted: async (pool) => { await interventions(pool, N_MUTATIONS) }
      })
    }
  } finally {
    await sim.close()
    if (admin !== undefined) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
      await admin.end()
    }
  }
}
