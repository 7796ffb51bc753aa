// Slow clients (docs/design.md#http-edges): a thousand sockets that send headers and then one
// byte of a 60,000-byte body, or their headers a byte at a time, are closed within the
// configured bounds (408 request_timeout in the contract's shape), while a normal caller is
// served within its usual latency; past GATEWAY_MAX_CONNECTIONS new sockets are dropped, the
// metrics listener keeps answering, and the API serves again once the slow ones are gone. The
// slow sockets come from several loopback addresses: one alone would meet the per-address bound
// first (test/reliability/connection-bounds.test.ts).
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { parseRawAnswer } from '../helpers/raw-http.js'
import { dropped, ms, openSlow, pct, type Slow } from '../helpers/slow-socket.js'

const HEADERS_TIMEOUT_MS = 2000
const REQUEST_TIMEOUT_MS = 2500
// the connection check runs every min(1000, headers timeout / 4) ms, so the configured bound is
// the timeout plus one interval; on top, a second for scheduling on a busy 2-core machine that
// also runs these thousand clients
const SLACK_MS = HEADERS_TIMEOUT_MS / 4 + 1000

async function latencies (g: TestGateway, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    const res = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    out.push(performance.now() - t)
    expect(res.status, res.text).toBe(200)
  }
  return out.sort((a, b) => a - b)
}

async function connections (g: TestGateway): Promise<number> {
  return await new Promise((resolve, reject) => g.app.server.getConnections((err, n) => { if (err !== null) reject(err); else resolve(n) }))
}

async function until (fn: () => Promise<boolean>, msMax: number): Promise<void> {
  const end = Date.now() + msMax
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not reached')
    await new Promise((r) => setTimeout(r, 20))
  }
}

const env = {
  GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  GATEWAY_RATE_LIMIT_READ: '100000'
}

describe('slow clients', () => {
  it('1,000 slow clients are closed within the bounds; a normal caller keeps its latency', async () => {
    const sim = await startSimulator({ secret: 'upstream-secret-0123456789' })
    const g = await startGateway({ simulator: sim, env })
    try {
      await latencies(g, 20) // warm up
      const before = await latencies(g, 100)

      // in batches: a burst of 1,000 SYNs overflows the listen backlog (511) and the rest retry
      // a second later, which would measure the kernel rather than the gateway
      const slow: Slow[] = []
      for (let i = 0; i < 1000; i++) {
        // from 10 addresses: one address alone would meet the per-address bound (256) first
        slow.push(openSlow(g.url, i % 2 === 0 ? 'body' : 'headers', g.tokens.admin, `127.0.2.${1 + (i % 10)}`))
        if (i % 100 === 99) await Promise.all(slow.slice(-100).map(async (s) => await s.connected))
      }
      await until(async () => (await connections(g)) >= 1000, 5000)
      const held = await connections(g)
      const during = await latencies(g, 100)

      const closed = await Promise.race([
        Promise.all(slow.map(async (s) => (await s.closedAt) - s.openedAt())),
        new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('slow sockets still open 4 s past the bound')), REQUEST_TIMEOUT_MS + 4000))
      ]).finally(() => { for (const s of slow) s.stop() })
      const bodyClosed = closed.filter((_x, i) => i % 2 === 0).sort((a, b) => a - b)
      const headersClosed = closed.filter((_x, i) => i % 2 === 1).sort((a, b) => a - b)

      console.log(`slow clients held: ${held}, closed after ~${ms(pct(bodyClosed, 0.5))} (slow body, bound ${REQUEST_TIMEOUT_MS} ms; max ${ms(bodyClosed.at(-1)!)}) / ~${ms(pct(headersClosed, 0.5))} (slow headers, bound ${HEADERS_TIMEOUT_MS} ms; max ${ms(headersClosed.at(-1)!)}); normal caller p50/p99 ${ms(pct(before, 0.5))}/${ms(pct(before, 0.99))} before, ${ms(pct(during, 0.5))}/${ms(pct(during, 0.99))} with them held`)

      expect(held).toBeGreaterThanOrEqual(1000)
      expect(bodyClosed.at(-1)!).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + SLACK_MS)
      expect(headersClosed.at(-1)!).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + SLACK_MS)
      // the usual latency: a few ms on loopback; allow for a loaded machine, not for starvation
      expect(pct(during, 0.5)).toBeLessThan(Math.max(5 * pct(before, 0.5), 25))
      expect(pct(during, 0.99)).toBeLessThan(Math.max(5 * pct(before, 0.99), 150))
      // each was told why, in the contract's shape
      for (const s of [slow[0]!, slow[1]!]) {
        const a = parseRawAnswer(s.answer())
        expect(a.status).toBe(408)
        expect(a.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String), retryable: false } })
      }
      expect(await connections(g)).toBeLessThan(5)
    } finally {
      await g.close()
      await sim.close()
    }
  })

  it('past GATEWAY_MAX_CONNECTIONS new sockets are dropped; metrics answer; the API serves again after the bound', async () => {
    const sim = await startSimulator({ secret: 'upstream-secret-0123456789' })
    const g = await startGateway({ simulator: sim, env: { ...env, GATEWAY_MAX_CONNECTIONS: '100' } })
    try {
      const slow: Slow[] = []
      for (let i = 0; i < 150; i++) {
        slow.push(openSlow(g.url, 'body', g.tokens.admin, `127.0.2.${1 + (i % 50)}`))
        if (i % 50 === 49) await Promise.all(slow.slice(-50).map(async (s) => await s.connected))
      }
      await until(async () => (await connections(g)) >= 100, 5000)
      await new Promise((r) => setTimeout(r, 200))
      expect(await connections(g)).toBe(100)
      const early = (await Promise.all(slow.map(async (s) => await Promise.race([s.closedAt.then((t) => t - s.openedAt()), new Promise<number>((r) => setTimeout(() => r(Infinity), 300))])))).filter((t) => t < 300)
      expect(early.length).toBeGreaterThanOrEqual(50)
      // the metrics listener is not behind the API's cap
      expect((await call(`${g.metricsUrl}/metrics`)).status).toBe(200)
      await Promise.all(slow.map(async (s) => await s.closedAt))
      expect((await call(`${g.url}/healthz`)).status).toBe(200)
      expect(await dropped(g, 'api', 'max_connections')).toBeGreaterThanOrEqual(50)
    } finally {
      await g.close()
      await sim.close()
    }
  })
})
