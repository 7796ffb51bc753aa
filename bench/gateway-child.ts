// The gateway under test, in a process of its own, started as the bin starts it
// (startGatewayServer) at the default log level (info) with its log on stdout — which the bench
// points at a file, so the log's cost is counted and its size reported. The configuration comes
// from the parent (BENCH_GATEWAY_ENV, JSON); BENCH_COALESCE=0 turns coalescing off (a start
// option for the bench, not an operator setting: docs/design.md#coalescing).
import { loadConfig, type Env } from '../src/config/index.js'
import { startGatewayServer } from '../src/server.js'
import { serveParent } from './child-ipc.js'

const env = JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Env
const gw = await startGatewayServer(loadConfig(env), { coalesceReads: process.env.BENCH_COALESCE !== '0' })
// discovery runs once when the app is ready; the reads need its card
for (let i = 0; i < 100 && gw.app.discovery.capability('argus.supervisor.health').state !== 'available'; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50))
}
serveParent(gw.url, async () => { await gw.close() })
