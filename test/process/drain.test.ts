// SIGTERM drains (docs/design.md#shutdown): the bin in a child process, under load from slow but
// legitimate reads (the remote holds each Argus read ~1.8 s, well inside the read timeout).
// At SIGTERM the listener closes, readiness turns 503 `draining`, a request that arrives on a
// connection already open is refused with 503 `shutting_down` in the contract's shape, every
// request in flight completes, then the pools and the ledger close and the process exits 0.
// With a grace shorter than a request, that request is cut, logged, and the process still exits 0.
// A request pipelined behind one in flight after SIGTERM gets its 503, after the first answer. An
// idle keep-alive connection is closed at once, with no answer written on it.
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Agent, request } from 'undici'
import { sha256Hex } from '../../src/callers/tokens.js'
import { parseRawAnswers } from '../helpers/raw-http.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startGatewayChild, waitFor, type GatewayChild } from '../helpers/child.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f()
})

const READS = ['/v1/supervisor/health', '/v1/supervisor/status', '/v1/campaigns']

interface Setup { sim: Simulator; gw: GatewayChild; url: string; token: string; agent: Agent }

async function setup (delayMs: number, env: Record<string, string> = {}): Promise<Setup> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  const sim = await startSimulator({ profile: 'openoperator', secret })
  cleanups.push(async () => { await sim.close() })
  const token = `tok-${randomBytes(12).toString('hex')}`
  const gw = startGatewayChild({
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name: 'reader', tokenSha256: sha256Hex(token), scopes: ['read'] }]),
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    // slow but legitimate: the remote's delay is well inside the read timeout
    UPSTREAM_READ_TIMEOUT_MS: '5000',
    ...env
  })
  const url = await listenUrlOf(gw)
  for (const op of ['supervisor.health', 'supervisor.status', 'campaign.list']) sim.inject({ argusOperation: op }, { kind: 'delay', ms: delayMs })
  // one connection per request: a reset would show as a socket error on that request alone
  const agent = new Agent({ connections: 100, pipelining: 1 })
  cleanups.push(async () => { await agent.destroy() })
  return { sim, gw, url, token, agent }
}

/** a raw connection that has sent the start of a request (so the server counts it active) */
async function partialRequest (url: string, firstLines: string): Promise<{ socket: Socket; finish: (rest: string) => Promise<string> }> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  let received = ''
  socket.on('data', (d: Buffer) => { received += d.toString() })
  const ended = new Promise<void>((resolve) => { socket.once('close', () => resolve()); socket.once('error', () => resolve()) })
  socket.write(firstLines)
  cleanups.push(() => { socket.destroy() })
  return {
    socket,
    finish: async (rest) => {
      socket.write(rest)
      await ended
      return received
    }
  }
}

function parseRaw (raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) }
}

const logLines = (gw: GatewayChild): Array<Record<string, unknown>> =>
  gw.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)

describe('SIGTERM under load', () => {
  it('drains: readiness 503 at once, late requests 503 shutting_down, every in-flight request completes, exit 0', async () => {
    const { sim, gw, url, token, agent } = await setup(1800)
    const auth = { authorization: `Bearer ${token}` }
    // two connections that began a request before SIGTERM and finish it after
    const lateRead = await partialRequest(url, 'GET /v1/supervisor/health HTTP/1.1\r\nHost: gw\r\nx-request-id: late-read-1\r\n')
    const lateReady = await partialRequest(url, 'GET /readyz HTTP/1.1\r\nHost: gw\r\n')

    const N = 30
    const inFlight = Array.from({ length: N }, async (_, i) => {
      try {
        const res = await request(`${url}${READS[i % READS.length]!}`, { headers: auth, dispatcher: agent })
        await res.body.text()
        return res.statusCode === 200 ? 'ok' as const : `status ${res.statusCode}`
      } catch (err) {
        return `reset: ${(err as Error).message}`
      }
    })
    await waitFor(() => sim.rpcCalls().filter((c) => c.method === 'message/send').length >= 3 ? true : undefined, 5_000, 'the reads to reach the remote')
    await new Promise((r) => setTimeout(r, 150))

    const t0 = Date.now()
    gw.child.kill('SIGTERM')
    // the drain begins in the signal's own tick: readiness turns 503 and the listener closes
    // together, so from the "draining" line on a fresh connection (an ingress probe) is refused
    await waitFor(() => gw.out().includes('"msg":"draining"') ? true : undefined, 2_000, 'the drain to begin')
    const fresh = await request(`${url}/readyz`, { dispatcher: agent })
      .then(async (r) => `${r.statusCode} ${await r.body.text()}`, (err: { code?: string }) => String(err.code))
    expect(fresh).toBe('ECONNREFUSED')

    // a request already on the wire when the drain began: 503 in the contract's shape
    const late = parseRaw(await lateRead.finish(`authorization: Bearer ${token}\r\n\r\n`))
    expect(late.status).toBe(503)
    expect(late.body).toEqual({ error: { code: 'shutting_down', message: expect.any(String), retryable: true } })
    expect(late.headers.connection).toBe('close')
    expect(Number(late.headers['retry-after'])).toBeGreaterThan(0)
    expect(late.headers['x-request-id']).toBe('late-read-1')
    const ready = parseRaw(await lateReady.finish('\r\n'))
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ ready: false, draining: true })
    expect(ready.headers.connection).toBe('close')

    const results = await Promise.all(inFlight)
    const code = await gw.exited
    const ms = Date.now() - t0
    const completed = results.filter((r) => r === 'ok').length
    const reset = results.filter((r) => r.startsWith('reset')).length
    const drainLog = logLines(gw).find((l) => l.msg === 'drained')
    console.log(`drain: ${String(drainLog?.inFlight)} in flight at SIGTERM, ${completed} completed, ${reset} reset, exit ${String(code)} after ${ms} ms`)
    expect(results).toEqual(Array(N).fill('ok'))
    expect(code).toBe(0)
    expect(drainLog).toMatchObject({ inFlight: N, cut: 0 })
    expect(ms).toBeLessThan(5_000)
    expect(gw.out()).not.toContain('killed by timeout')
    expect(gw.err()).toBe('')
  }, 20_000)

  it('cuts a request that outlasts a short grace, logs it, and still exits 0 promptly', async () => {
    const { sim, gw, url, token, agent } = await setup(4000, { GATEWAY_SHUTDOWN_GRACE_MS: '300' })
    const slow = request(`${url}/v1/supervisor/health`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'slow-read-1' }, dispatcher: agent })
      .then(async (r) => { await r.body.text(); return `status ${r.statusCode}` }, (err: Error) => `reset: ${err.message}`)
    // in flight once the remote has it (the access line is written when a request ends, not when it arrives)
    await waitFor(() => sim.rpcCalls().some((c) => c.method === 'message/send') ? true : undefined, 5_000, 'the request to arrive').catch(() => undefined)
    await new Promise((r) => setTimeout(r, 300))
    const t0 = Date.now()
    gw.child.kill('SIGTERM')
    expect(await slow).toMatch(/^reset/)
    const code = await gw.exited
    const ms = Date.now() - t0
    const lines = logLines(gw)
    const cut = lines.find((l) => l.msg === 'request cut at the end of the shutdown grace')
    console.log(`drain with a 300 ms grace: 1 in flight at SIGTERM, cut and logged, exit ${String(code)} after ${ms} ms`)
    expect(cut).toMatchObject({ reqId: 'slow-read-1', route: '/v1/supervisor/health', method: 'GET' })
    expect(lines.find((l) => l.msg === 'drained')).toMatchObject({ inFlight: 1, cut: 1 })
    expect(code).toBe(0)
    // the remote still holds the read (4 s): the pools are destroyed, not waited for
    expect(ms).toBeLessThan(2_500)
  }, 20_000)

  it('an idle keep-alive connection is closed at SIGTERM with no answer (a FIN, no bytes); a new connection is refused; the read in flight completes', async () => {
    const { sim, gw, url, token, agent } = await setup(1500)
    for (let i = 0; ; i++) {
      const status = await request(`${url}/readyz`, { dispatcher: agent }).then(async (r) => { await r.body.text(); return r.statusCode }, () => 0)
      if (status === 200) break
      if (i > 100) throw new Error(`not ready: ${status}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    // a keep-alive connection that was answered once and now sits idle, as a client's pool holds it
    const { hostname, port } = new URL(url)
    const idle = connect(Number(port), hostname)
    cleanups.push(() => { idle.destroy() })
    let received = ''
    let ended = false
    idle.on('data', (d: Buffer) => { received += d.toString('latin1') })
    idle.on('end', () => { ended = true })
    idle.on('error', () => {})
    idle.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n')
    await waitFor(() => /\r\n\r\n\{.*\}$/s.test(received) ? true : undefined, 5_000, 'the first answer')
    expect(parseRawAnswers(received).map((a) => a.status)).toEqual([200])
    const answered = received.length
    // a read in flight keeps the process draining while the idle connection is looked at
    const inFlight = request(`${url}/v1/supervisor/health`, { headers: { authorization: `Bearer ${token}` }, dispatcher: agent })
      .then(async (r) => { await r.body.text(); return r.statusCode }, (err: Error) => `reset: ${err.message}`)
    await waitFor(() => sim.rpcCalls().some((c) => c.method === 'message/send') ? true : undefined, 5_000, 'the read to reach the remote')

    gw.child.kill('SIGTERM')
    await waitFor(() => ended ? true : undefined, 2_000, 'the idle connection to be closed')
    // closed by the drain, not by the exit: the read is still in flight
    expect(gw.child.exitCode).toBeNull()
    // nothing was written on it: no 503, since no request arrived on it
    expect(received.length).toBe(answered)
    // a client that sees the close and opens a new connection is refused: the listener is closed
    const fresh = await new Promise<string>((resolve) => {
      const s = connect(Number(port), hostname)
      s.once('connect', () => { s.destroy(); resolve('connected') })
      s.once('error', (err: NodeJS.ErrnoException) => { resolve(String(err.code)) })
    })
    expect(fresh).toBe('ECONNREFUSED')
    expect(await inFlight).toBe(200)
    expect(await gw.exited).toBe(0)
  }, 20_000)

  it('a request pipelined after SIGTERM behind one in flight gets its 503 shutting_down, after the first answer', async () => {
    const { sim, gw, url, token, agent } = await setup(1500)
    // ready first: the card is discovered, so the read goes to the remote
    for (let i = 0; ; i++) {
      const status = await request(`${url}/readyz`, { dispatcher: agent }).then(async (r) => { await r.body.text(); return r.statusCode }, () => 0)
      if (status === 200) break
      if (i > 100) throw new Error(`not ready: ${status}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    cleanups.push(() => { socket.destroy() })
    let received = ''
    socket.on('data', (d: Buffer) => { received += d.toString('latin1') })
    socket.on('error', () => {})
    const closed = new Promise<void>((resolve) => socket.once('close', () => { resolve() }))
    socket.write(`GET /v1/supervisor/health HTTP/1.1\r\nHost: gw\r\nauthorization: Bearer ${token}\r\nx-request-id: first-1\r\n\r\n`)
    await waitFor(() => sim.rpcCalls().some((c) => c.method === 'message/send') ? true : undefined, 5_000, 'the read to reach the remote')
    gw.child.kill('SIGTERM')
    await waitFor(() => gw.out().includes('"msg":"draining"') ? true : undefined, 2_000, 'the drain to begin')
    // pipelined on the same connection while the first is still in flight
    socket.write(`GET /v1/supervisor/status HTTP/1.1\r\nHost: gw\r\nauthorization: Bearer ${token}\r\nx-request-id: piped-2\r\n\r\n`)
    await closed
    const answers = parseRawAnswers(received)
    console.log(`pipelined after SIGTERM: answers ${answers.map((a) => `${a.status} ${a.headers['x-request-id']}`).join(', ')}, exit ${String(await gw.exited)}`)
    expect(answers.map((a) => [a.status, a.headers['x-request-id']])).toEqual([[200, 'first-1'], [503, 'piped-2']])
    expect(answers[1]!.body).toEqual({ error: { code: 'shutting_down', message: expect.any(String), retryable: true } })
    expect(Number(answers[1]!.headers['retry-after'])).toBeGreaterThan(0)
    expect(answers[1]!.headers.connection).toBe('close')
    expect(logLines(gw).find((l) => l.reqId === 'piped-2' && l.code === 'shutting_down')).toBeDefined()
    expect(await gw.exited).toBe(0)
  }, 20_000)
})
