// npm run bench -- --instructions: what one uncached task read costs each proxy in CPU
// instructions, counted by valgrind's callgrind — the same figure run after run, whatever else the
// VM is doing (the CPU µs of the comparison move by ±10 % here), so a change worth 1 % can be
// told from noise. For each of the bare Node proxy, the bare Fastify proxy and the gateway: the
// process starts under callgrind with counting off, serves BENCH_IR_WARM reads (the JIT settles),
// counts BENCH_IR_N reads one at a time (no batching to vary with timing), and dumps. The
// optimizing compiler's own work (V8's `compiler::` functions) is reported apart: it is a warm-up
// cost that moves with timing, not a cost per read. Needs valgrind (`apt-get install -y
// valgrind`); user-space instructions only — the kernel's share of a write is not in it.
// Under valgrind a read takes milliseconds, so work done per unit of time (the load-shedding
// sampler, the deadline sweep) weighs more per read here than at full speed: compare rows and
// versions with this, not absolute costs.
import { execFileSync, fork } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Pool } from 'undici'
import { BUILD, buildChildren, startChild } from './child-ipc.js'
import { deployedNodeFlags, gatewayEnv, header } from './compare.js'

const N = Number(process.env.BENCH_IR_N ?? 2000)
const WARM = Number(process.env.BENCH_IR_WARM ?? 8000)
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

/** `n` uncached reads, one at a time */
async function drive (url: string, token: string, n: number, first: number): Promise<void> {
  const pool = new Pool(url, { connections: 1 })
  try {
    for (let i = 0; i < n; i++) {
      const r = await pool.request({ method: 'GET', path: `/v1/tasks/ir-${first + i}`, headers: { authorization: `Bearer ${token}` } })
      await r.body.text()
      if (r.statusCode !== 200) throw new Error(`read answered ${r.statusCode}`)
    }
  } finally {
    await pool.close()
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
  console.log(`${header()}\ninstructions per uncached GET /v1/tasks/:id, one at a time, ${N} counted after ${WARM}, under callgrind (--single-threaded node)`)
  let first = 0
  try {
    for (const [name, script] of rows) {
      if (ONLY !== undefined && !name.startsWith(ONLY)) continue
      const out = join(KEEP ?? dir, `cg-${script}`)
      const log = openSync(join(dir, `${script}.log`), 'a')
      const proc = fork(join(BUILD, 'bench', script), [], {
        execPath: 'valgrind',
        // V8's JIT writes code into memory it then runs: callgrind must look for that
        execArgv: ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, process.execPath, '--single-threaded', ...(process.env.BENCH_IR_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''), ...(script === 'gateway-child.js' ? deployedNodeFlags() : [])],
        env: { ...process.env, BENCH_GATEWAY_ENV: JSON.stringify(gw), BENCH_UPSTREAM: upstream.url },
        stdio: ['ignore', log, 'ignore', 'ipc']
      })
      closeSync(log)
      try {
        const url = await new Promise<string>((resolve, reject) => {
          proc.on('message', (m: { type: string; url: string }) => { if (m.type === 'ready') resolve(m.url) })
          proc.once('exit', (code) => { reject(new Error(`${script} under valgrind exited (${String(code)})`)) })
        })
        await drive(url, token, WARM, first)
        first += WARM
        execFileSync('callgrind_control', ['-i', 'on', String(proc.pid)], { stdio: 'ignore' })
        await drive(url, token, N, first)
        first += N
        execFileSync('callgrind_control', ['-d', String(proc.pid)], { stdio: 'ignore' })
      } finally {
        proc.kill('SIGKILL')
      }
      const c = count(readdirSync(KEEP ?? dir).filter((f) => f.startsWith(`cg-${script}.${String(proc.pid)}`)).map((f) => join(KEEP ?? dir, f)))
      const k = (n: number): string => (n / N / 1000).toFixed(1)
      console.log(`  ${name.padEnd(20)} ${k(c.all - c.compiler - c.gc).padStart(7)} k instructions/read  (+ ${k(c.gc)} k in the garbage collector, + ${k(c.compiler)} k in the optimizing compiler)`)
    }
  } finally {
    await upstream.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
