// The floor of a Fastify gateway here: the bare proxy (bare-proxy-child.ts) with Fastify in
// front instead of node:http — one route, no hooks, no logger, no validation, no auth; the
// upstream answer parsed and re-serialised as the gateway does; and GET /v1/supervisor/health as an
// answer already in memory (the coalesced row's floor). What the framework alone costs.
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { Pool } from 'undici'
import { serveParent } from './child-ipc.js'

const upstream = process.env.BENCH_UPSTREAM
if (upstream === undefined) throw new Error('BENCH_UPSTREAM is required')
const pool = new Pool(upstream, { connections: 16, keepAliveTimeout: 4000 })
const app = Fastify({ logger: false, keepAliveTimeout: 60_000 })

app.get<{ Params: { taskId: string } }>('/v1/tasks/:taskId', async (req, reply) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'tasks/get', params: { id: req.params.taskId, historyLength: 0 } })
  const r = await pool.request({ method: 'POST', path: '/a2a/', headers: { 'content-type': 'application/json' }, body })
  const text = await r.body.text()
  reply.code(r.statusCode).header('content-type', 'application/json')
  return JSON.stringify((JSON.parse(text) as { result: unknown }).result)
})
// the coalesced row's floor: an answer already in memory, serialised per request as the gateway does
const health = { operation: 'supervisor.health', requestId: randomUUID(), result: { status: 'ok', checkedAt: new Date().toISOString(), components: [{ name: 'argus', state: 'healthy', detail: null }] } }
app.get('/v1/supervisor/health', async (_req, reply) => {
  reply.header('content-type', 'application/json')
  return JSON.stringify(health)
})
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo
serveParent(`http://127.0.0.1:${port}`, async () => { await app.close(); await pool.close() })
