// Preloaded into the gateway child by `npm run bench -- --stalls` (node --import): records every
// event-loop gap over 5 ms (a 1 ms interval timer) with the process CPU spent during it, and every
// GC (PerformanceObserver), and writes them to BENCH_STALL_OUT when the process exits. A gap whose
// CPU is far below its wall time is the process waiting for a CPU, not working (BENCHMARKS.md).
import { writeFileSync } from 'node:fs'
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks'

const out = process.env.BENCH_STALL_OUT ?? 'stalls.json'
const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()
/** [start ms, gap ms, process CPU ms during it] */
const gaps: Array<[number, number, number]> = []
/** [start ms, duration ms, kind: 1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 incremental, 16 weak callbacks] */
const gcs: Array<[number, number, number]> = []
let last = performance.now()
let lastCpu = process.cpuUsage()
setInterval(() => {
  const now = performance.now()
  const cpu = process.cpuUsage()
  if (now - last > 5) gaps.push([last, now - last, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000])
  last = now
  lastCpu = cpu
}, 1).unref()
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.duration, ((e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0)])
}).observe({ entryTypes: ['gc'] })
process.on('exit', () => {
  writeFileSync(out, JSON.stringify({ gaps, gcs, delayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 } }))
})
