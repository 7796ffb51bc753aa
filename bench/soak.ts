// npm run bench -- --soak: the gateway (its own process) under a steady open loop for
// BENCH_SOAK_SECONDS (default 300): RATE req/s of uncached task reads, one in four a coalesced
// health read. Its RSS is sampled every second; the figure is the growth of the mean RSS from the
// first minute to the last (target ≤ 10 %), with the latency of the whole soak.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RATE, header, restHealth, restTask, startFleet, us } from './compare.js'
import { openLoop, type Request } from './load.js'

const MiB = 2 ** 20

export async function soak (): Promise<void> {
  const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 300)
  const watchdog = setTimeout(() => { console.error('soak: over its time budget, aborting'); process.exit(1) }, seconds * 1000 + 120_000)
  watchdog.unref()
  const f = await startFleet()
  const samples: Array<{ t: number; rss: number; heapUsed: number }> = []
  try {
    console.log(`${header()}\nsoak: ${seconds} s at ${RATE} req/s (3 uncached task reads : 1 coalesced health read), gateway RSS every second`)
    const task = restTask(f.token)
    const health = restHealth(f.token)
    const next = (i: number): Request => i % 4 === 3 ? health() : task(i)
    const start = performance.now()
    const poll = setInterval(() => {
      void f.gateway.stats().then((s) => { samples.push({ t: (performance.now() - start) / 1000, rss: s.rss, heapUsed: s.heapUsed }) })
    }, 1000)
    const result = await openLoop(f.gateway.url, RATE, seconds, next)
    clearInterval(poll)
    const window = Math.min(60, seconds / 5)
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
    const first = mean(samples.filter((s) => s.t <= window).map((s) => s.rss))
    const last = mean(samples.filter((s) => s.t > seconds - window).map((s) => s.rss))
    const peak = Math.max(...samples.map((s) => s.rss))
    const growth = (last - first) / first
    const md = `${header()}\n\nsoak ${seconds} s at ${RATE} req/s: RSS mean first ${window} s ${(first / MiB).toFixed(1)} MiB, last ${window} s ${(last / MiB).toFixed(1)} MiB, ` +
      `growth ${(growth * 100).toFixed(1)} %, peak ${(peak / MiB).toFixed(0)} MiB; p50 ${us(result.p50)} p99 ${us(result.p99)} p99.9 ${us(result.p999)} max ${us(result.max)}; ` +
      `2xx ${result.ok} non-2xx ${result.non2xx} errors ${result.errors}`
    console.log(`\n${md}`)
    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    const dir = fileURLToPath(new URL('./results/', import.meta.url))
    writeFileSync(join(dir, `soak-${stamp}.json`), `${JSON.stringify({ kind: 'soak', at: new Date().toISOString(), seconds, rate: RATE, firstMiB: first / MiB, lastMiB: last / MiB, growth, peakMiB: peak / MiB, result, samples }, null, 2)}\n`)
    writeFileSync(join(dir, `soak-${stamp}.md`), `${md}\n`)
    console.log(`results: bench/results/soak-${stamp}.json`)
  } finally {
    await f.closeAll()
  }
}
