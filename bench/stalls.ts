// npm run bench -- --stalls: what the steady-rate tail is made of. The gateway alone (its own
// process, with bench/stall-probe.ts preloaded) at BENCH_RATE for BENCH_SECONDS, open loop as in
// the comparison, then its event-loop gaps over 5 ms split into those during a GC and the others,
// with the CPU the process got during the others (BENCHMARKS.md, "The steady-rate tail").
// BENCH_STALLS_SATURATE=30 runs it after 30 s at saturation.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILD, startChild } from './child-ipc.js'
import { RATE, SECONDS, restTask, startGateway, us } from './compare.js'
import { closedLoop, openLoop } from './load.js'

interface Stalls { gaps: Array<[number, number, number]>; gcs: Array<[number, number, number]>; delayMs: { p50: number; p99: number; max: number } }

export async function stalls (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-stalls-'))
  const out = join(dir, 'stalls.json')
  process.env.BENCH_GATEWAY_NODE_OPTIONS = `--import ${join(BUILD, 'bench', 'stall-probe.js')} ${process.env.BENCH_GATEWAY_NODE_OPTIONS ?? ''}`
  const token = randomBytes(18).toString('base64url')
  const upstream = await startChild('./upstream-child.ts', {})
  const { child } = await startGateway(dir, upstream.url, randomBytes(24).toString('base64url'), token, 'gateway', { BENCH_STALL_OUT: out })
  let from = 0
  try {
    // BENCH_STALLS_SATURATE=s: first s seconds at saturation (32 connections), as the comparison's
    // steady row comes after its saturation rows
    const saturate = Number(process.env.BENCH_STALLS_SATURATE ?? 0)
    if (saturate > 0) await closedLoop(child.url, 32, saturate, restTask(token))
    await openLoop(child.url, RATE, 2, restTask(token))
    from = (await child.stats()).uptimeMs
    const r = await openLoop(child.url, RATE, SECONDS, restTask(token))
    console.log(`gateway, ${RATE} req/s for ${SECONDS} s: p50 ${us(r.p50)} p99 ${us(r.p99)} p99.9 ${us(r.p999)} max ${us(r.max)}; generator send lag p99 ${us(r.sendLagP99 ?? 0)}`)
  } finally {
    await child.close()
    await upstream.close()
  }
  const s = JSON.parse(readFileSync(out, 'utf8')) as Stalls
  rmSync(dir, { recursive: true, force: true })
  const gcs = s.gcs.filter(([t]) => t >= from)
  const gaps = s.gaps.filter(([t]) => t >= from)
  const inGc = (t: number, g: number): boolean => gcs.some(([gt, d]) => d > 1 && gt >= t - 1 && gt <= t + g + 1)
  const sum = (a: Array<[number, number, number]>, i: 0 | 1 | 2): number => a.reduce((x, v) => x + v[i], 0)
  const withGc = gaps.filter(([t, g]) => inGc(t, g))
  const other = gaps.filter(([t, g]) => !inGc(t, g))
  const kinds: Record<string, [number, number, number]> = {}
  const names: Record<number, string> = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' }
  for (const [, d, k] of gcs) { const name = names[k] ?? String(k); const a = kinds[name] ?? [0, 0, 0]; kinds[name] = [a[0] + 1, a[1] + d, Math.max(a[2], d)] }
  console.log(`event-loop delay (monitorEventLoopDelay, whole run): p50 ${s.delayMs.p50.toFixed(2)} ms p99 ${s.delayMs.p99.toFixed(2)} ms max ${s.delayMs.max.toFixed(1)} ms`)
  console.log(`gaps over 5 ms in the measured phase: ${gaps.length}, ${sum(gaps, 1).toFixed(0)} ms in all`)
  console.log(`  during a GC: ${withGc.length}, ${sum(withGc, 1).toFixed(0)} ms`)
  console.log(`  no GC:       ${other.length}, ${sum(other, 1).toFixed(0)} ms wall, ${sum(other, 2).toFixed(0)} ms of process CPU (the rest: waiting for a CPU)`)
  for (const [k, [n, total, max]] of Object.entries(kinds)) console.log(`GC ${k}: ${n}, ${total.toFixed(0)} ms in all, longest ${max.toFixed(1)} ms`)
}
