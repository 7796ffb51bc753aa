// Memory under large tasks (docs/design.md#load-shedding): 64 concurrent reads of 15 MiB task
// bodies (real servers send the full history) from a purpose-built upstream. The body budget
// (GATEWAY_TASK_BODY_BUDGET_BYTES, 64 MiB) lets about four be held at once; the others are shed
// with 503 upstream_unavailable and Retry-After, so peak memory has a ceiling. Half the answers
// declare their length, half stream it chunked, so both ways of reserving are exercised.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const MiB = 1024 * 1024
const BODY_BYTES = 15 * MiB
const CONCURRENT = 64

/** a completed task whose history fills about BODY_BYTES; the id is spliced in per request */
function bigTaskParts (): { head: (rpcId: string, taskId: string) => Buffer; tail: Buffer } {
  const message = JSON.stringify({ role: 'agent', kind: 'message', messageId: 'm', parts: [{ kind: 'text', text: 'x'.repeat(1000) }] })
  const history = `[${Array.from({ length: Math.floor(BODY_BYTES / (message.length + 1)) }, () => message).join(',')}]`
  return {
    head: (rpcId, taskId) => Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(rpcId)},"result":{"id":${JSON.stringify(taskId)},"contextId":"ctx-big","kind":"task","status":{"state":"completed"},"history":`),
    tail: Buffer.from(`${history}}}`)
  }
}

async function startBigUpstream (): Promise<{ url: string; close: () => Promise<void> }> {
  const { head, tail } = bigTaskParts()
  const card = JSON.stringify({ name: 'big-tasks', url: 'http://127.0.0.1/a2a', skills: [] })
  let n = 0
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/a2a/.well-known/agent-card.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(card)
      return
    }
    let raw = ''
    req.on('data', (d: Buffer) => { raw += d.toString() })
    req.on('end', () => {
      const rpc = JSON.parse(raw) as { id: string; params: { id: string } }
      const first = head(rpc.id, rpc.params.id)
      const headers: Record<string, string | number> = { 'content-type': 'application/json' }
      if (n++ % 2 === 0) headers['content-length'] = first.length + tail.length
      res.writeHead(200, headers)
      res.on('error', () => undefined) // the gateway hangs up on a shed answer
      res.write(first)
      res.end(tail)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)) } }
}

describe('large task bodies at once', () => {
  it('hold at most the body budget: the overflow is 503 with Retry-After, the rest 200', async () => {
    const up = await startBigUpstream()
    try {
      const gw = await startGateway({
        upstreamUrl: up.url,
        env: {
          UPSTREAM_READ_TIMEOUT_MS: '15000',
          GATEWAY_RATE_LIMIT_READ: '100000',
          // event-loop shedding off: what is shed here is the byte budget's doing alone
          GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
          GATEWAY_MAX_EVENT_LOOP_UTILIZATION: '0'
        }
      })
      gw.app.log.level = 'info'
      expect((await call(`${gw.url}/v1/upstream`, { token: gw.tokens.reader })).status).toBe(200)
      global.gc?.()
      const baseline = process.memoryUsage().rss
      let peak = baseline
      const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 10)
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, async (_, i) =>
        await call(`${gw.url}/v1/tasks/big-${i}`, { token: gw.tokens.reader })))
      clearInterval(sampler)
      peak = Math.max(peak, process.memoryUsage().rss)

      const ok = answers.filter((a) => a.status === 200)
      const shed = answers.filter((a) => a.status === 503)
      console.log(`task bodies: ${CONCURRENT} × ${BODY_BYTES / MiB} MiB, served ${ok.length}, shed ${shed.length}, ` +
        `peak RSS ${Math.round(peak / MiB)} MiB (baseline ${Math.round(baseline / MiB)} MiB, +${Math.round((peak - baseline) / MiB)} MiB)`)
      expect(ok.length + shed.length).toBe(CONCURRENT)
      expect(ok.length).toBeGreaterThan(0)
      expect(shed.length).toBeGreaterThan(0)
      for (const a of ok) expect(a.body.state).toBe('completed')
      for (const a of shed) {
        expect(a.body.error.code).toBe('upstream_unavailable')
        expect(a.body.error.retryable).toBe(true)
        expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      }
    } finally {
      await up.close()
    }
  }, 60_000)
})
