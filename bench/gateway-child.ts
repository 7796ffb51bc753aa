// The gateway under test, in a process of its own, started as the bin starts it
// (startGatewayServer) at the default log level (info) with its log on stdout — which the bench
// points at a file, so the log's cost is counted and its size reported. The configuration comes
// from the parent (BENCH_GATEWAY_ENV, JSON); BENCH_COALESCE=0 turns coalescing off (a start
// option for the bench, not an operator setting: docs/design.md#coalescing).
import { loadConfig, type Env } from '../src/config/index.js'
import { sqliteCommitStatsOf, sqliteDatabaseOf } from '../src/ledger/index.js'
import { startGatewayServer } from '../src/server.js'
import { serveParent } from './child-ipc.js'

const env = JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Env
const gw = await startGatewayServer(loadConfig(env), { coalesceReads: process.env.BENCH_COALESCE !== '0' })
// discovery runs once when the app is ready; the reads need its card
for (let i = 0; i < 100 && gw.app.discovery.capability('argus.supervisor.health').state !== 'available'; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50))
}
// the mutations bench reads the SQLite group commit's counts and the durability setting the ledger runs with
const db = sqliteDatabaseOf(gw.app.ledger)
const synchronous = db === undefined ? -1 : Number(db.pragma('synchronous', { simple: true }))
const wal = db !== undefined && db.pragma('journal_mode', { simple: true }) === 'wal' ? 1 : 0
const profiled = await profiling(process.env.BENCH_PROFILE_DIR)
serveParent(gw.url, async () => { await profiled(); await gw.close() }, (): Record<string, number> => {
  const c = sqliteCommitStatsOf(gw.app.ledger)
  return c === undefined ? {} : { commits: c.batches, commitWrites: c.writes, synchronous, wal }
})

/**
 * BENCH_PROFILE_DIR=<dir>: from here (after the start) to the close, V8's CPU profiler (200 µs
 * samples) and its sampling heap profiler counting what the collectors freed too (what a request
 * allocates, not what it keeps), written as gateway.cpuprofile and gateway.heapprofile
 */
async function profiling (dir: string | undefined): Promise<() => Promise<void>> {
  if (dir === undefined) return async () => undefined
  const { Session } = await import('node:inspector/promises')
  const { writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  await session.post('Profiler.start')
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  return async () => {
    const { profile: heap } = await session.post('HeapProfiler.stopSampling')
    const { profile: cpu } = await session.post('Profiler.stop')
    writeFileSync(join(dir, 'gateway.heapprofile'), JSON.stringify(heap))
    writeFileSync(join(dir, 'gateway.cpuprofile'), JSON.stringify(cpu))
    session.disconnect()
  }
}
