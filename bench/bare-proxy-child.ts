// The floor of any Node gateway here: bare node:http + one undici Pool (16 sockets, as the
// gateway's read Pool) serving GET /v1/tasks/:taskId as one JSON-RPC `tasks/get` to the bench
// upstream, its answer passed through as it came. No framework, no logs, no validation, no auth.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool } from 'undici'
import { serveParent } from './child-ipc.js'

const upstream = process.env.BENCH_UPSTREAM
if (upstream === undefined) throw new Error('BENCH_UPSTREAM is required')
const pool = new Pool(upstream, { connections: 16, keepAliveTimeout: 4000 })
const PREFIX = '/v1/tasks/'

const server = createServer((req, res) => {
  const url = req.url ?? ''
  if (req.method !== 'GET' || !url.startsWith(PREFIX)) {
    res.writeHead(404).end()
    return
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method: 'tasks/get', params: { id: url.slice(PREFIX.length), historyLength: 0 } })
  pool.request({ method: 'POST', path: '/a2a/', headers: { 'content-type': 'application/json' }, body })
    .then(async (r) => {
      const buf = Buffer.from(await r.body.arrayBuffer())
      res.writeHead(r.statusCode, { 'content-type': 'application/json', 'content-length': buf.length }).end(buf)
    })
    .catch(() => { res.writeHead(502).end() })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  serveParent(`http://127.0.0.1:${port}`, async () => { server.closeAllConnections(); server.close(); await pool.close() })
})
