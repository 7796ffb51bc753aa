// npm run bench -- --profile: the gateway (its own process, under --cpu-prof) under the uncached
// task read at saturation (BENCH_PROFILE_ROW=coalesced: the coalesced health read), then the self time by function, heaviest first, and the GC pauses
// (--trace-gc). For finding what to change before changing it (BENCHMARKS.md).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SECONDS, restHealth, restTask, startFleet } from './compare.js'
import { closedLoop } from './load.js'

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }

export async function profile (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-prof-'))
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
  const file = readdirSync(dir).find((n) => n.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error('no profile written')
  const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[] }
  const total = prof.nodes.reduce((s, n) => s + n.hitCount, 0)
  const byFn = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const n of prof.nodes) {
    const url = n.callFrame.url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/.*?\/main\//, '')
    const key = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`
    byFn.set(key, (byFn.get(key) ?? 0) + n.hitCount)
    const pkg = url.startsWith('node:') || url === '' ? (url || n.callFrame.functionName) : url.split('/').slice(0, url.startsWith('@') ? 2 : 1).join('/')
    byFile.set(pkg, (byFile.get(pkg) ?? 0) + n.hitCount)
  }
  const top = (m: Map<string, number>, k: number): string[] => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, hits]) => `${(hits / total * 100).toFixed(1).padStart(5)} %  ${name}`)
  console.log(`\nself time by package/file (${dir}/${file}):`)
  for (const l of top(byFile, 25)) console.log(l)
  console.log('\nself time by function:')
  for (const l of top(byFn, 45)) console.log(l)
}
