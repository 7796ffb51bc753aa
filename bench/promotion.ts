// npm run bench -- --promotion: how much of what a read allocates outlives the young generation.
// What a scavenge copies into the old generation stays there until a mark-compact, so bytes
// promoted per read, not bytes allocated, decide how often the loop pauses for a full collection
// (docs/design.md#hot-path). Each row starts its target in a process of its own with
// `--trace-gc-nvp` (the gateway with the node flags of `npm start`), drives BENCH_PROMOTION_N reads
// with 8 in flight through undici after a warm-up of a fifth as many, and sums V8's own lines over
// the counted reads: bytes promoted per read, bytes that entered the old generation directly per
// read (its growth between two scavenges less what they promoted, from `--trace-gc-verbose`: a
// long-lived Map's rebuilt tables, strings V8's number cache keeps, maps; `directPerRead`),
// scavenges, mark-compacts and their pauses per 10,000 reads. A mark-compact starts once the old
// generation has grown past a limit V8 sets after the last one (8-11 MB more, at 1,000 req/s here),
// so the two figures together decide how often the loop pauses. BENCH_PROMOTION_RATE=1000 drives
// the reads at that steady rate instead (open loop, as the stalls bench does): what decides the
// mark-compacts a minute at 1,000 req/s, and the counted reads' p99 and max. Loopback only; the
// gateway's log (with V8's lines) goes to a temp file, removed after (BENCH_PROMOTION_KEEP: kept).
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Pool } from 'undici'
import { startChild } from './child-ipc.js'
import { deployedNodeFlags, gatewayEnv, header } from './compare.js'
import { openLoop } from './load.js'

const N = Number(process.env.BENCH_PROMOTION_N ?? 30_000)
const IN_FLIGHT = 8
/** BENCH_PROMOTION_FLAGS: more node flags for every row (a heap-sampling preload, say) */
const EXTRA_FLAGS = (process.env.BENCH_PROMOTION_FLAGS ?? '').split(' ').filter((f) => f !== '')
/** BENCH_PROMOTION_ROWS: the rows whose names start with one of these (separated by ';'); default all */
const ONLY = process.env.BENCH_PROMOTION_ROWS?.split(';')
/** BENCH_PROMOTION_RATE: reads a second, open loop, instead of IN_FLIGHT at once as fast as they go */
const RATE = process.env.BENCH_PROMOTION_RATE === undefined ? undefined : Number(process.env.BENCH_PROMOTION_RATE)
/** BENCH_PROMOTION_KEEP=<dir>: each row's log (V8's lines) kept there, to read a run that went wrong */
const KEEP = process.env.BENCH_PROMOTION_KEEP

interface Row { name: string; script: string; path: (i: number) => string }

const ROWS: Row[] = [
  { name: 'bare Fastify proxy, task read', script: './fastify-floor-child.ts', path: (i) => `/v1/tasks/p-${i}` },
  { name: 'gateway, task read', script: './gateway-child.ts', path: (i) => `/v1/tasks/p-${i}` },
  { name: 'gateway, supervisor health', script: './gateway-child.ts', path: () => '/v1/supervisor/health' }
]

/** how long `n` reads took, ms; at a steady rate also their p99 and max, µs (a run whose reads pile up shows it there) */
interface Driven { ms: number; latency?: { p99: number; max: number } }

async function drive (url: string, token: string, first: number, n: number, path: Row['path']): Promise<Driven> {
  if (RATE !== undefined) {
    const t0 = performance.now()
    const r = await openLoop(url, RATE, n / RATE, (i) => ({ method: 'GET', path: path(first + i), headers: { authorization: `Bearer ${token}` } }))
    if (r.ok !== n) throw new Error(`${n - r.ok} of ${n} reads not answered 2xx (${r.firstFailure ?? ''})`)
    return { ms: performance.now() - t0, latency: { p99: r.p99, max: r.max } }
  }
  const pool = new Pool(url, { connections: IN_FLIGHT })
  let next = first
  const t0 = performance.now()
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < first + n) {
        const r = await pool.request({ method: 'GET', path: path(next++), headers: { authorization: `Bearer ${token}` } })
        await r.body.text()
        if (r.statusCode !== 200) throw new Error(`read answered ${r.statusCode}`)
      }
    }))
  } finally {
    await pool.close()
  }
  return { ms: performance.now() - t0 }
}

interface GcLine { kind: string; promoted: number; pause: number; oldUsedKb: number | undefined }

/** V8's --trace-gc-nvp lines after the marker line's time, each with the old space's use that --trace-gc-verbose prints after it */
function gcLines (log: string, afterMs: number): GcLine[] {
  const out: GcLine[] = []
  let last: GcLine | undefined
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const m = /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: pause=([\d.]+) .* gc=(\w+) /.exec(line)
    if (m !== null) {
      last = Number(m[1]) < afterMs ? undefined : { kind: m[3]!, promoted: Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0), pause: Number(m[2]), oldUsedKb: undefined }
      if (last !== undefined) out.push(last)
      continue
    }
    const used = /\] Old space,\s+used:\s+(\d+) KB/.exec(line)
    if (used !== null && last !== undefined) last.oldUsedKb = Number(used[1])
  }
  return out
}

/**
 * Bytes that entered the old generation between two scavenges without being promoted (tables
 * rebuilt there, strings the number cache keeps, maps): the old space's growth from one scavenge
 * to the next less what the second promoted, over the pairs with no mark-compact between, scaled
 * to all the counted reads by the share of scavenge intervals summed
 */
function directPerRead (lines: GcLine[], scavenges: number, reads: number): number {
  let bytes = 0
  let pairs = 0
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1]!
    const b = lines[i]!
    if (a.kind !== 's' || b.kind !== 's' || a.oldUsedKb === undefined || b.oldUsedKb === undefined) continue
    bytes += (b.oldUsedKb - a.oldUsedKb) * 1024 - b.promoted
    pairs++
  }
  return pairs === 0 ? 0 : bytes / (reads * pairs / scavenges)
}

export async function promotion (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-promotion-'))
  const token = randomBytes(18).toString('base64url')
  const secret = randomBytes(24).toString('base64url')
  const upstream = await startChild('./upstream-child.ts', {})
  console.log(`${header()}\nbytes promoted to the old generation per read, and entering it directly (between two scavenges, not promoted), ${N} reads counted after ${N / 5}, ${RATE === undefined ? `${IN_FLIGHT} in flight` : `${RATE} a second`} (--trace-gc-nvp --trace-gc-verbose)`)
  try {
    for (const row of ROWS) {
      if (ONLY !== undefined && !ONLY.some((o) => row.name.startsWith(o))) continue
      const log = join(dir, `${row.name.replaceAll(/\W+/g, '-')}.log`)
      const fd = openSync(log, 'a')
      const isGateway = row.script === './gateway-child.ts'
      const env = isGateway ? gatewayEnv(upstream.url, secret, token, dir, 'gateway') : { BENCH_UPSTREAM: upstream.url }
      const child = await startChild(row.script, env, { stdout: fd, execArgv: [...(isGateway ? deployedNodeFlags() : []), '--trace-gc-nvp', '--trace-gc-verbose', ...EXTRA_FLAGS] })
      closeSync(fd)
      try {
        await drive(child.url, token, 0, N / 5, row.path)
        // V8 stamps each line with ms since the isolate started, the child's performance.now() within a few ms
        const from = (await child.stats()).uptimeMs
        const { ms, latency } = await drive(child.url, token, N, N, row.path)
        // its lines are buffered until it exits
        await child.close()
        if (KEEP !== undefined) copyFileSync(log, join(KEEP, `promotion-${new Date().toISOString().replaceAll(':', '-')}-${row.name.replaceAll(/\W+/g, '-')}.log`))
        const lines = gcLines(log, from)
        const scavenges = lines.filter((l) => l.kind === 's')
        const fulls = lines.filter((l) => l.kind === 'mc' || l.kind === 'mmc')
        const per10k = (x: number): string => (x * 10_000 / N).toFixed(1)
        const promoted = scavenges.reduce((a, l) => a + l.promoted, 0)
        const direct = directPerRead(lines, scavenges.length, N)
        console.log(`  ${row.name.padEnd(30)} ${(N / ms * 1000).toFixed(0).padStart(6)} reads/s  ${(promoted / N / 1024).toFixed(2).padStart(6)} KB promoted/read, ${(direct / 1024).toFixed(2)} KB direct  per 10k reads: ${per10k(scavenges.length)} scavenges (${per10k(scavenges.reduce((a, l) => a + l.pause, 0))} ms), ${per10k(fulls.length)} mark-compacts (${per10k(fulls.reduce((a, l) => a + l.pause, 0))} ms)${latency === undefined ? '' : `; p99 ${(latency.p99 / 1000).toFixed(1)} ms, max ${(latency.max / 1000).toFixed(0)} ms`}`)
      } catch (err) {
        await child.close().catch(() => undefined)
        throw err
      }
    }
  } finally {
    await upstream.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
