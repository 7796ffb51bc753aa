// npm run bench: the read path under load, in one process on loopback. The gateway on port 0
// against the simulator (a2a-js profile: one upstream call per read), 50 connections for a
// bounded time per route; prints throughput, latency percentiles, upstream calls (coalescing)
// and memory. No network beyond 127.0.0.1. The gateway starts as the bin starts it
// (startGatewayServer).
import { randomBytes } from 'node:crypto'
import autocannon from 'autocannon'
import { loadConfig } from '../src/config.js'
import { sha256Hex } from '../src/plugins/auth.js'
import { startGatewayServer } from '../src/server.js'
import { startSimulator } from '../src/simulator/index.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const token = randomBytes(18).toString('base64url')
const sim = await startSimulator({ profile: 'a2a-js', secret: 'bench-secret-0123456789' })
const config = loadConfig({
  OPENOPERATOR_URL: sim.url,
  SPYNEL_AGENT_ZERO_API_KEY: 'bench-secret-0123456789',
  GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read'] }]),
  GATEWAY_RATE_LIMIT_READ: '10000000',
  HOST: '127.0.0.1',
  PORT: '0',
  METRICS_PORT: '0',
  LOG_LEVEL: 'warn'
})
const gw = await startGatewayServer(config)
const url = gw.url

const rows: string[] = []
for (const path of ['/healthz', '/v1/supervisor/health', '/v1/tasks/task-demo-1']) {
  const before = sim.rpcCalls().length
  const r = await autocannon({ url: `${url}${path}`, connections: 50, duration: seconds, headers: { authorization: `Bearer ${token}` } })
  const upstreamCalls = sim.rpcCalls().length - before
  const ok = r['2xx']
  rows.push(`${path.padEnd(24)} ${String(Math.round(r.requests.average)).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms  2xx ${ok}  non-2xx ${r.non2xx}  errors ${r.errors}  upstream calls ${upstreamCalls}`)
}
const mem = process.memoryUsage()
console.log(`\nnode ${process.version}, ${seconds} s per route, 50 connections, gateway and simulator in one process\n`)
for (const row of rows) console.log(row)
console.log(`\nRSS ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB`)
await gw.close()
await sim.close()
