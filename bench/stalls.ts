// npm run bench -- --stalls: what the steady-rate tail is made of. Each process under test in its
// own process with bench/stall-probe.ts preloaded, at BENCH_RATE for BENCH_SECONDS, open loop as in
// the comparison; then its p99 and its event-loop gaps over 5 ms, split into those during a GC and
// the others, with the CPU the process got during the others (little CPU: it was waiting for one).
// BENCH_STALLS_TARGETS (default `gateway`; `gateway,fastify` adds the bare Fastify proxy) are run
// alternately BENCH_STALLS_RUNS times (default 1), and a summary gives each one's median and
// range; BENCH_STALLS_FLAGS adds node flags to every target (e.g. `--single-threaded-gc`).
// BENCH_STALLS_SATURATE=30 runs each after 30 s at saturation (BENCHMARKS.md, "The tail").
// BENCH_STALLS_KEEP=<dir> keeps each gateway run's log there (with V8's lines when
// BENCH_STALLS_FLAGS=--trace-gc-nvp), for a run that goes wrong: twice so far a 60-s run has had
// ~24 mark-compacts instead of one, and not again when run again (BENCHMARKS.md#old-generation-direct).
import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILD, startChild, type Child } from './child-ipc.js'
import { RATE, SECONDS, deployedNodeFlags, restTask, startGateway, us } from './compare.js'
import { closedLoop, openLoop } from './load.js'

interface Stalls { gaps: Array<[number, number, number]>; gcs: Array<[number, number, number]>; delayMs: { p50: number; p99: number; max: number } }
interface Run { target: string; p99: number; gaps: number; gcGaps: number; waitGaps: number; gapMs: number; markCompacts: number }

const per10s = (n: number): number => n * 10 / SECONDS

async function runOnce (target: string, upstreamUrl: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-stalls-'))
  const out = join(dir, 'stalls.json')
  const flags = [`--import=${join(BUILD, 'bench', 'stall-probe.js')}`, ...(process.env.BENCH_STALLS_FLAGS ?? '').split(' ').filter((f) => f !== '')]
  const token = randomBytes(18).toString('base64url')
  let child: Child
  if (target === 'gateway') {
    const saved = process.env.BENCH_GATEWAY_NODE_OPTIONS
    process.env.BENCH_GATEWAY_NODE_OPTIONS = `${flags.join(' ')} ${saved ?? ''}`
    try {
      child = (await startGateway(dir, upstreamUrl, randomBytes(24).toString('base64url'), token, 'gateway', { BENCH_STALL_OUT: out })).child
    } finally {
      if (saved === undefined) delete process.env.BENCH_GATEWAY_NODE_OPTIONS
      else process.env.BENCH_GATEWAY_NODE_OPTIONS = saved
    }
  } else {
    // with the gateway's deployed node flags too: the two differ by what runs in them alone
    child = await startChild('./fastify-floor-child.ts', { BENCH_UPSTREAM: upstreamUrl, BENCH_STALL_OUT: out }, { execArgv: [...deployedNodeFlags(), ...flags] })
  }
  let p99 = 0
  let from = 0
  try {
    const saturate = Number(process.env.BENCH_STALLS_SATURATE ?? 0)
    if (saturate > 0) await closedLoop(child.url, 32, saturate, restTask(token))
    await openLoop(child.url, RATE, 2, restTask(token))
    from = (await child.stats()).uptimeMs
    const r = await openLoop(child.url, RATE, SECONDS, restTask(token))
    p99 = r.p99
    console.log(`${target}, ${RATE} req/s for ${SECONDS} s: p50 ${us(r.p50)} p99 ${us(r.p99)} p99.9 ${us(r.p999)} max ${us(r.max)}; generator send lag p99 ${us(r.sendLagP99 ?? 0)}`)
  } finally {
    await child.close()
  }
  const s = JSON.parse(readFileSync(out, 'utf8')) as Stalls
  const keep = process.env.BENCH_STALLS_KEEP
  if (keep !== undefined && target === 'gateway') {
    mkdirSync(keep, { recursive: true })
    const kept = join(keep, `gateway-${new Date().toISOString().replaceAll(':', '-')}.log`)
    copyFileSync(join(dir, 'gateway.log'), kept)
    console.log(`  log kept: ${kept}`)
  }
  rmSync(dir, { recursive: true, force: true })
  const gcs = s.gcs.filter(([t]) => t >= from)
  const gaps = s.gaps.filter(([t]) => t >= from)
  const inGc = (t: number, g: number): boolean => gcs.some(([gt, d]) => d > 1 && gt >= t - 1 && gt <= t + g + 1)
  const sum = (a: Array<[number, number, number]>, i: 0 | 1 | 2): number => a.reduce((x, v) => x + v[i], 0)
  const withGc = gaps.filter(([t, g]) => inGc(t, g))
  const other = gaps.filter(([t, g]) => !inGc(t, g))
  // a gap in which the process got under half its wall time in CPU was mostly waiting for one
  const waiting = other.filter(([, g, cpu]) => cpu < g / 2)
  const kinds: Record<string, [number, number, number]> = {}
  const names: Record<number, string> = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' }
  for (const [, d, k] of gcs) { const name = names[k] ?? String(k); const a = kinds[name] ?? [0, 0, 0]; kinds[name] = [a[0] + 1, a[1] + d, Math.max(a[2], d)] }
  console.log(`  event-loop delay (whole run): p50 ${s.delayMs.p50.toFixed(2)} ms p99 ${s.delayMs.p99.toFixed(2)} ms max ${s.delayMs.max.toFixed(1)} ms`)
  console.log(`  gaps over 5 ms: ${gaps.length} (${per10s(gaps.length).toFixed(1)} per 10 s), ${sum(gaps, 1).toFixed(0)} ms; during a GC ${withGc.length} (${sum(withGc, 1).toFixed(0)} ms); no GC ${other.length} (${sum(other, 1).toFixed(0)} ms wall, ${sum(other, 2).toFixed(0)} ms CPU), of which waiting for a CPU ${waiting.length}`)
  for (const [k, [n, total, max]] of Object.entries(kinds)) console.log(`  GC ${k}: ${n}, ${total.toFixed(0)} ms in all, longest ${max.toFixed(1)} ms`)
  return { target, p99, gaps: gaps.length, gcGaps: withGc.length, waitGaps: waiting.length, gapMs: sum(gaps, 1), markCompacts: kinds['mark-compact']?.[0] ?? 0 }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const spread = (xs: number[], f: (v: number) => string): string => `median ${f(median(xs))}, ${f(Math.min(...xs))}–${f(Math.max(...xs))}`

export async function stalls (): Promise<void> {
  const targets = (process.env.BENCH_STALLS_TARGETS ?? 'gateway').split(',')
  const runs = Number(process.env.BENCH_STALLS_RUNS ?? 1)
  const upstream = await startChild('./upstream-child.ts', {})
  const all: Run[] = []
  try {
    for (let i = 0; i < runs; i++) for (const t of targets) all.push(await runOnce(t, upstream.url))
  } finally {
    await upstream.close()
  }
  if (runs < 2) return
  console.log(`\nsummary, ${runs} alternating runs of ${SECONDS} s at ${RATE} req/s${process.env.BENCH_STALLS_FLAGS !== undefined ? `, flags ${process.env.BENCH_STALLS_FLAGS}` : ''}:`)
  for (const t of targets) {
    const r = all.filter((x) => x.target === t)
    console.log(`  ${t.padEnd(8)} p99 ${spread(r.map((x) => x.p99), us)}; gaps over 5 ms per 10 s ${spread(r.map((x) => per10s(x.gaps)), (v) => v.toFixed(1))} (in a GC ${spread(r.map((x) => per10s(x.gcGaps)), (v) => v.toFixed(1))}; waiting for a CPU ${spread(r.map((x) => per10s(x.waitGaps)), (v) => v.toFixed(1))}); mark-compacts per run ${spread(r.map((x) => x.markCompacts), (v) => v.toFixed(0))}`)
  }
}
