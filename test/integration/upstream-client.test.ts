// The wire rules (docs/design.md#upstream-wire-rules) over real sockets: TLS verified with the
// extra CA, no redirect followed, byte caps while streaming, id matching, the single read retry
// only when nothing was sent, and timeouts.
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { TRUSTED_CA_FILE, trustedServer, unknownServer } from '../helpers/tls.js'

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => { while (closers.length > 0) await closers.pop()!() })

async function sim (opts: Parameters<typeof startSimulator>[0] = {}): Promise<Simulator> {
  const s = await startSimulator({ secret: 'upstream-secret-xyz', ...opts })
  closers.push(() => s.close())
  return s
}
async function gateway (s: Simulator | undefined, env: Record<string, string> = {}, upstreamUrl?: string): Promise<TestGateway> {
  const g = await startGateway({ simulator: s, upstreamUrl, env: { UPSTREAM_CA_FILE: TRUSTED_CA_FILE, ...env } })
  closers.push(() => g.close())
  return g
}
const health = async (g: TestGateway) => await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })

describe('TLS', () => {
  it('trusts a server signed by UPSTREAM_CA_FILE', async () => {
    const s = await sim({ tls: trustedServer, profile: 'a2a-js' })
    expect(s.url.startsWith('https://')).toBe(true)
    const g = await gateway(s)
    expect((await health(g)).status).toBe(200)
  })

  it('refuses a certificate from an unknown CA: nothing is sent', async () => {
    const s = await sim({ tls: unknownServer })
    const g = await gateway(s)
    const u = (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
    expect(u.card).toBeNull()
    expect(u.lastError).toBe('unreachable')
    expect(s.received).toHaveLength(0)
  })
})

describe('redirects are never followed', () => {
  it('a 3xx card is reported, and the redirect target never contacted', async () => {
    const target = await sim({ tls: trustedServer })
    const s = await sim({ tls: trustedServer })
    s.inject('card', { kind: 'redirect', status: 302, location: `${target.url}/a2a/.well-known/agent-card.json` })
    const g = await gateway(s)
    const u = (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
    expect(u.card).toBeNull()
    expect(u.lastError).toBe('redirect')
    expect(target.received).toHaveLength(0)
  })

  it('a 3xx JSON-RPC answer is not followed and becomes upstream_invalid_response', async () => {
    const target = await sim({ tls: trustedServer })
    const s = await sim({ tls: trustedServer })
    const g = await gateway(s)
    s.inject('rpc', { kind: 'redirect', status: 307, location: `${target.url}/a2a/` })
    const res = await health(g)
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_invalid_response')
    expect(target.received).toHaveLength(0)
    expect(s.rpcCalls()).toHaveLength(1)
  })
})

describe('byte caps', () => {
  it('drops a chunked card over 1 MiB while it streams', async () => {
    const s = await sim()
    s.inject('card', { kind: 'oversized', bytes: 2 * 1024 * 1024, mode: 'chunked' })
    const g = await gateway(s)
    const u = (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
    expect(u.card).toBeNull()
    expect(u.lastError).toBe('too_large')
  })

  it('refuses a JSON-RPC body over UPSTREAM_MAX_RESPONSE_BYTES, chunked or declared', async () => {
    const s = await sim()
    const g = await gateway(s, { UPSTREAM_MAX_RESPONSE_BYTES: String(64 * 1024) })
    s.inject('rpc', { kind: 'oversized', bytes: 256 * 1024, mode: 'chunked' }, 1)
    const a = await health(g)
    expect(a.status).toBe(502)
    expect(a.body.error.code).toBe('upstream_invalid_response')
    s.inject('rpc', { kind: 'oversized', bytes: 256 * 1024, mode: 'content-length' }, 1)
    expect((await health(g)).body.error.code).toBe('upstream_invalid_response')
    const metrics = await call(`${g.metricsUrl}/metrics`)
    expect(metrics.text).toMatch(/gateway_upstream_requests_total\{rpc_method="supervisor.health",outcome="too_large"\} 2/)
  })
})

describe('JSON-RPC answers', () => {
  it('a response whose id differs is upstream_invalid_response', async () => {
    const s = await sim()
    const g = await gateway(s)
    s.inject('rpc', { kind: 'wrong-id' }, 1)
    expect((await health(g)).body.error.code).toBe('upstream_invalid_response')
    s.inject('rpc', { kind: 'invalid-json' }, 1)
    expect((await health(g)).body.error.code).toBe('upstream_invalid_response')
  })

  it('a plain-text 500 is upstream_unavailable, retryable', async () => {
    const s = await sim()
    const g = await gateway(s)
    s.inject('rpc', { kind: 'status', status: 500 }, 1)
    const res = await health(g)
    expect(res.status).toBe(503)
    expect(res.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true })
  })

  it('a slow remote is a 504 upstream_timeout within the read timeout', async () => {
    const s = await sim()
    const g = await gateway(s, { UPSTREAM_READ_TIMEOUT_MS: '300' })
    s.inject('rpc', { kind: 'delay', ms: 1500 }, 1)
    const started = Date.now()
    const res = await health(g)
    expect(res.status).toBe(504)
    expect(res.body.error).toMatchObject({ code: 'upstream_timeout', retryable: true })
    expect(Date.now() - started).toBeLessThan(1200)
  })
})

describe('the single read retry', () => {
  /** a TCP front that kills the first `kill` connections before TLS completes, then forwards */
  async function flakyFront (targetPort: number, kill: number): Promise<{ url: string; connections: () => number }> {
    let n = 0
    const sockets = new Set<net.Socket>()
    const server = net.createServer((sock) => {
      n += 1
      sockets.add(sock)
      if (n <= kill) { sock.destroy(); return }
      const up = net.connect(targetPort, '127.0.0.1')
      sockets.add(up)
      sock.pipe(up).pipe(sock)
      up.on('error', () => sock.destroy())
      sock.on('error', () => up.destroy())
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closers.push(() => new Promise((r) => { server.close(r); for (const s of sockets) s.destroy() }))
    return { url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`, connections: () => n }
  }

  it('retries a read once when the connection failed before any byte was written', async () => {
    const s = await sim({ tls: trustedServer })
    const front = await flakyFront(Number(new URL(s.url).port), 1)
    const g = await gateway(undefined, { SPYNEL_AGENT_ZERO_API_KEY: 'upstream-secret-xyz' }, front.url)
    const u = (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
    expect(u.card).not.toBeNull()
    expect(front.connections()).toBe(2)
  })

  it('gives up after one retry', async () => {
    const s = await sim({ tls: trustedServer })
    const front = await flakyFront(Number(new URL(s.url).port), 2)
    const g = await gateway(undefined, { SPYNEL_AGENT_ZERO_API_KEY: 'upstream-secret-xyz' }, front.url)
    const u = (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
    expect(u.card).toBeNull()
    expect(front.connections()).toBe(2)
    expect(s.received).toHaveLength(0)
  })

  it('never retries a read once the request was written', async () => {
    const s = await sim()
    const g = await gateway(s)
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'drop' }, 1)
    const res = await health(g)
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('upstream_unavailable')
    expect(s.rpcCalls().filter((c) => c.method === 'message/send')).toHaveLength(1)
  })
})
