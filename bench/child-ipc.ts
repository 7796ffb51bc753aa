// The parent ↔ child protocol of the comparison bench (bench/compare.ts). Every process under
// test (the fixed upstream, the bare proxy, the gateway, the simulator) runs in a process of its
// own, as JavaScript compiled once per run (bench/tsconfig.json, into node_modules/.cache, where
// the packages still resolve) and started with plain `node`: the tsx loader's thread would add
// ~60 MB to every child's RSS and its CPU. It reports over IPC: CPU from process.cpuUsage(), RSS
// sampled every 50 ms (the peak since the last `reset`).
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GCProfiler, getHeapStatistics } from 'node:v8'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** BENCH_BUILD_DIR: another place for it (two checkouts sharing one node_modules, measured side by side); packages must resolve from there */
export const BUILD = process.env.BENCH_BUILD_DIR ?? join(ROOT, 'node_modules', '.cache', 'oo-gw-bench')
let built = false

/** compiles src, routes, schemas and bench once per run */
export function buildChildren (): void {
  if (built) return
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'bench', 'tsconfig.json'), '--outDir', BUILD], { stdio: 'inherit' })
  built = true
}

export type ParentMessage = { type: 'stats' } | { type: 'reset' } | { type: 'close' }
/** `uptimeMs`: the child's performance.now(), to align its own records (bench/stall-probe.ts) with the parent's phases */
export interface ChildStats { cpuUs: number; rss: number; peakRss: number; heapUsed: number; uptimeMs: number; calls: Record<string, number>; gc: GcTotals }

/** the child's garbage collection since it started: bytes allocated on the V8 heap, collections by kind, time in them */
export interface GcTotals { allocatedBytes: number; scavenges: number; markCompacts: number; gcMs: number }

/** no collection seen: the totals' start, and what a child not measuring them reports */
const NO_GC: GcTotals = { allocatedBytes: 0, scavenges: 0, markCompacts: 0, gcMs: 0 }

/**
 * Running totals from V8's GCProfiler (one per interval between two reads): the bytes allocated
 * are the heap's growth between collections — what each collection found in use before it, less
 * what the one before left — plus the growth since the last one.
 */
export function gcTotals (): () => GcTotals {
  const totals: GcTotals = { ...NO_GC }
  let profiler = new GCProfiler()
  profiler.start()
  let lastUsed = getHeapStatistics().used_heap_size
  return () => {
    const data = profiler.stop()
    profiler = new GCProfiler()
    profiler.start()
    for (const g of data?.statistics ?? []) {
      totals.allocatedBytes += Math.max(0, g.beforeGC.heapStatistics.usedHeapSize - lastUsed)
      lastUsed = g.afterGC.heapStatistics.usedHeapSize
      if (g.gcType === 'Scavenge' || g.gcType === 'MinorMarkSweep' || g.gcType === 'MinorMarkCompact') totals.scavenges++
      else if (g.gcType === 'MarkSweepCompact') totals.markCompacts++
      totals.gcMs += g.cost / 1000
    }
    const used = getHeapStatistics().used_heap_size
    totals.allocatedBytes += Math.max(0, used - lastUsed)
    lastUsed = used
    return { ...totals }
  }
}
export type ChildMessage = { type: 'ready'; url: string } | ({ type: 'stats' } & ChildStats)

/** in the child: answer the parent; `calls` reports what the child counts (upstream calls by method) */
export function serveParent (url: string, close: () => Promise<void>, calls: () => Record<string, number> = () => ({})): void {
  if (process.send === undefined) throw new Error('forked by bench/compare.ts only (IPC required)')
  let peak = process.memoryUsage.rss()
  // under callgrind (instructions.ts) nothing reads the totals, and V8's GCProfiler writes its heap
  // statistics at every collection: ~200 k instructions each, which would count against the row
  const gc = process.env.BENCH_GC_TOTALS === 'off' ? () => ({ ...NO_GC }) : gcTotals()
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 50)
  sampler.unref()
  let closing = false
  const stop = async (): Promise<void> => {
    if (closing) return
    closing = true
    clearInterval(sampler)
    await close().catch(() => undefined)
    process.exit(0)
  }
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'stats') {
      const cpu = process.cpuUsage()
      const rss = process.memoryUsage.rss()
      peak = Math.max(peak, rss)
      const msg: ChildMessage = { type: 'stats', cpuUs: cpu.user + cpu.system, rss, peakRss: peak, heapUsed: process.memoryUsage().heapUsed, uptimeMs: performance.now(), calls: calls(), gc: gc() }
      process.send?.(msg)
    } else if (m.type === 'reset') {
      peak = process.memoryUsage.rss()
    } else if (m.type === 'close') {
      void stop()
    }
  })
  // the parent went away: never outlive it
  process.on('disconnect', () => { void stop() })
  process.send({ type: 'ready', url } satisfies ChildMessage)
}

export interface Child {
  proc: ChildProcess
  url: string
  stats: () => Promise<ChildStats>
  reset: () => void
  close: () => Promise<void>
}

/** in the parent: fork `script` (a file beside this one, compiled) and wait for its URL */
export async function startChild (script: string, env: Record<string, string>, opts: { stdout?: number | 'ignore' | 'inherit'; execArgv?: string[] } = {}): Promise<Child> {
  buildChildren()
  const proc = fork(join(BUILD, 'bench', script.replace(/^\.\//, '').replace(/\.ts$/, '.js')), [], {
    execArgv: opts.execArgv ?? [],
    env: { ...process.env, ...env },
    stdio: ['ignore', opts.stdout ?? 'inherit', 'inherit', 'ipc']
  })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => { resolve() }))
  const next = async <T extends ChildMessage['type']>(type: T, timeoutMs = 20_000): Promise<Extract<ChildMessage, { type: T }>> =>
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { done(); reject(new Error(`${script}: no '${type}' within ${timeoutMs} ms`)) }, timeoutMs)
      const onMessage = (m: ChildMessage): void => { if (m.type === type) { done(); resolve(m as Extract<ChildMessage, { type: T }>) } }
      const onExit = (code: number | null): void => { done(); reject(new Error(`${script} exited (${String(code)}) before '${type}'`)) }
      const done = (): void => { clearTimeout(timer); proc.off('message', onMessage); proc.off('exit', onExit) }
      proc.on('message', onMessage)
      proc.once('exit', onExit)
    })
  const { url } = await next('ready')
  return {
    proc,
    url,
    stats: async () => {
      const p = next('stats')
      proc.send({ type: 'stats' } satisfies ParentMessage)
      const { type: _type, ...s } = await p
      return s
    },
    reset: () => { proc.send({ type: 'reset' } satisfies ParentMessage) },
    close: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.send({ type: 'close' } satisfies ParentMessage)
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())])
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    }
  }
}
