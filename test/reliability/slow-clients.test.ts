// Slow clients (docs/design.md#http-edges): a thousand sockets that send headers and then one
// byte of a 60,000-byte body, or their headers a byte at a time, are closed within the
// configured bounds (408 request_timeout in the contract's shape), while a normal caller is
// served within its usual latency; past GATEWAY_MAX_CONNECTIONS new sockets are dropped, the
// metrics listener keeps answering, and the API serves again once the slow ones are gone.
import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { endpoint, parseRawAnswer } from '../helpers/raw-http.js'

const HEADERS_TIMEOUT_MS = 2000
const REQUEST_TIMEOUT_MS = 2500
// the connection check runs every min(1000, headers timeout / 4) ms, so the configured bound is
// the timeout plus one interval; on top, a second for scheduling on a busy 2-core machine that
// also runs these thousand clients
const SLACK_MS = HEADERS_TIMEOUT_MS / 4 + 1000

interface Slow { socket: Socket; openedAt: () => number; connected: Promise<void>; closedAt: Promise<number>; answer: () => string; stop: () => void }

function openSlow (url: string, kind: 'body' | 'headers', token: string): Slow {
  const { host, port } = endpoint(url)
  const socket = connect(port, host)
  // from the moment it is connected (a SYN the kernel dropped is retried a second later)
  let openedAt = Date.now()
  socket.on('connect', () => { openedAt = Date.now() })
  let got = ''
  let trickle: NodeJS.Timeout | undefined
  socket.on('data', (d: Buffer) => { got += d.toString('latin1') })
  socket.on('error', () => {})
  const closedAt = new Promise<number>((resolve) => socket.on('close', () => { clearInterval(trickle); resolve(Date.now()) }))
  // a socket the server dropped at once counts as connected too
  const connected = new Promise<void>((resolve) => { socket.on('connect', resolve); socket.on('close', () => resolve()) })
  const head = `POST /v1/upstream/refresh HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`
  if (kind === 'body') {
    socket.write(`${head}{`)
  } else {
    // headers a byte at a time, never finished within the bound
    let i = 0
    socket.write(head[i++]!)
    trickle = setInterval(() => { if (i < head.length - 2 && !socket.destroyed) socket.write(head[i++]!) }, 300)
  }
  return { socket, openedAt: () => openedAt, connected, closedAt, answer: () => got, stop: () => { clearInterval(trickle); socket.destroy() } }
}

async function latencies (g: TestGateway, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    const res = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    out.push(performance.now() - t)
    expect(res.status).toBe(200)
  }
  return out.sort((a, b) => a - b)
}
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
const ms = (x: number): string => `${x.toFixed(1)} ms`

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
        slow.push(openSlow(g.url, i % 2 === 0 ? 'body' : 'headers', g.tokens.admin))
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
        slow.push(openSlow(g.url, 'body', g.tokens.admin))
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
      const m = await call(`${g.metricsUrl}/metrics`)
      expect(m.text).toMatch(/gateway_http_connections_dropped_total \d+/)
      expect(Number(/gateway_http_connections_dropped_total (\d+)/.exec(m.text)?.[1])).toBeGreaterThanOrEqual(50)
    } finally {
      await g.close()
      await sim.close()
    }
  })
})
