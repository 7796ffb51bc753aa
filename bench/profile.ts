// npm run bench -- --profile: the gateway (its own process, under --cpu-prof) under the uncached
// task read at saturation (BENCH_PROFILE_ROW=coalesced: the coalesced health read;
// BENCH_PROFILE_ROW=mutation: the mutations bench, with the bytes allocated by function too),
// then the self time by function, heaviest first. For finding what to change before changing it
// (BENCHMARKS.md).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SECONDS, restHealth, restTask, startFleet } from './compare.js'
import { closedLoop } from './load.js'

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }

export async function profile (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-prof-'))
  if (process.env.BENCH_PROFILE_ROW?.startsWith('mutation') === true) { mutationProfile(dir); return }
  process.env.BENCH_GATEWAY_NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200`
  const f = await startFleet()
  let result
  try {
    // BENCH_PROFILE_ROW=coalesced: the coalesced health read at 64 callers instead
    const coalesced = process.env.BENCH_PROFILE_ROW === 'coalesced'
    const req = coalesced ? restHealth(f.token) : restTask(f.token)
    const conns = coalesced ? 64 : 32
    await closedLoop(f.gateway.url, conns, 2, req)
    result = await closedLoop(f.gateway.url, conns, SECONDS, req)
  } finally {
    await f.closeAll()
  }
  console.log(`${result.rps.toFixed(0)} req/s, non-2xx ${result.non2xx}`)
  summarise(dir, '.cpuprofile', 'self time')
}

/**
 * BENCH_PROFILE_ROW=mutation: the mutations bench (bench/mutations.ts; BENCH_LEDGER picks the
 * store) with its gateway under V8's CPU profiler from its start on, and its sampling heap profiler counting freed objects
 * too (bench/gateway-child.ts): where a mutation's CPU and its allocations go
 */
function mutationProfile (dir: string): void {
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./mutations.ts', import.meta.url))], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PROFILE_DIR: dir }
  })
  if (r.status !== 0) throw new Error(`the mutations bench failed (${String(r.status)})`)
  summarise(dir, '.cpuprofile', 'self time')
  summarise(dir, '.heapprofile', 'bytes allocated (sampled, freed ones counted)')
}

interface HeapNode { callFrame: Node['callFrame']; selfSize: number; children: HeapNode[] }

/** a profile's weight by package or file and by function, heaviest first */
function summarise (dir: string, ext: string, what: string): void {
  const file = readdirSync(dir).find((n) => n.endsWith(ext))
  if (file === undefined) throw new Error(`no ${ext} written`)
  const raw = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[] } | { head: HeapNode }
  const nodes: Array<{ callFrame: Node['callFrame']; weight: number }> = []
  if ('nodes' in raw) for (const n of raw.nodes) nodes.push({ callFrame: n.callFrame, weight: n.hitCount })
  else {
    const walk = (n: HeapNode): void => { nodes.push({ callFrame: n.callFrame, weight: n.selfSize }); for (const c of n.children) walk(c) }
    walk(raw.head)
  }
  const total = nodes.reduce((s, n) => s + n.weight, 0)
  const byFn = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const n of nodes) {
    const url = n.callFrame.url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/.*?\/oo-gw-bench\//, '').replace(/^file:\/\/.*?\/main\//, '')
    const key = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`
    byFn.set(key, (byFn.get(key) ?? 0) + n.weight)
    const pkg = url.startsWith('node:') || url === '' ? (url || n.callFrame.functionName) : url.startsWith('src/') ? url.split('/').slice(0, 2).join('/') : url.split('/').slice(0, url.startsWith('@') ? 2 : 1).join('/')
    byFile.set(pkg, (byFile.get(pkg) ?? 0) + n.weight)
  }
  const top = (m: Map<string, number>, k: number): string[] => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, w]) => `${(w / total * 100).toFixed(1).padStart(5)} %  ${name}`)
  console.log(`\n${what} by package or source folder (${dir}/${file}):`)
  for (const l of top(byFile, 25)) console.log(l)
  console.log(`\n${what} by function:`)
  for (const l of top(byFn, 45)) console.log(l)
}
