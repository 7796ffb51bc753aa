// The HTTP edges (docs/design.md#errors, docs/design.md#http-edges): what the router and the
// HTTP parser refuse still leaves in the contract's shape — a contract code, a message the
// gateway wrote (never the URL or a header back), x-request-id, counted in the metrics — a
// plugin's 4xx stays a 4xx below error level, task ids up to the schema's 256 characters
// route, and two Authorization headers are refused. What Node itself used to answer — a missing
// Host, an unknown Expect, CONNECT, a request pipelined past the per-socket limit — is answered
// in the contract's shape too, and counted; pipelined answers never leave out of order.
// Raw `net` sockets send what undici won't.
import { describe, expect } from 'vitest'
import type { TestGateway } from '../helpers/gateway.js'
import { rid } from '../helpers/control.js'
import { it, test } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'
import { connect } from 'node:net'
import { endpoint, parseRawAnswers, rawExchange, type RawAnswer } from '../helpers/raw-http.js'

test.override({ pairOptions: { sim: { secret: 'upstream-secret-0123456789' } } })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** the contract's error shape, the code, and nothing of what the caller sent */
function expectContractError (a: RawAnswer, status: number, code: string, sent: string[] = [], retryable = false): void {
  expect(a.status, a.raw.slice(0, 300)).toBe(status)
  expect(a.headers['content-type']).toMatch(/^application\/json/)
  expect(a.body).toEqual({ error: { code, message: expect.any(String), retryable } })
  for (const s of sent) expect(a.text).not.toContain(s)
}

async function metricLines (g: TestGateway): Promise<string[]> {
  const m = await call(`${g.metricsUrl}/metrics`)
  return m.text.split('\n').filter((l) => l.startsWith('gateway_http_requests_total'))
}

/** requests one after the other on one socket, each sent once the previous answer is in; resolves on the close */
async function sequential (url: string, requests: string[]): Promise<RawAnswer[]> {
  const { host, port } = endpoint(url)
  const s = connect(port, host)
  s.on('error', () => {})
  let got = ''
  let sent = 1
  const closed = new Promise<void>((resolve) => s.on('close', () => { resolve() }))
  s.on('data', (d: Buffer) => {
    got += d.toString('latin1')
    const answered = parseRawAnswers(got).filter((a) => a.text.length >= Number(a.headers['content-length'] ?? 0)).length
    if (answered === sent && sent < requests.length) s.write(requests[sent++]!)
  })
  s.write(requests[0]!)
  await Promise.race([closed, new Promise((_r, reject) => setTimeout(() => { s.destroy(); reject(new Error(`no close; got ${got.slice(0, 200)}`)) }, 5000))])
  return parseRawAnswers(got)
}

const get = (path: string, headers = ''): string => `GET ${path} HTTP/1.1\r\nHost: gw\r\n${headers}Connection: close\r\n\r\n`

describe('errors the router raises', () => {
  it('a bad URL (%FF) is 400 invalid_request with x-request-id, echoing nothing, counted', async ({ gw: g }) => {
    for (const path of ['/v1/tasks/%FF', '/%FF/x?token=QUERYSECRET-1']) {
      const a = await rawExchange(g.url, get(path, 'x-request-id: corr-bad-url\r\n'))
      expectContractError(a, 400, 'invalid_request', ['%FF', 'QUERYSECRET', '/x'])
      expect(a.headers['x-request-id']).toBe('corr-bad-url')
    }
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="unmatched",method="GET",status="400"} 2')
  })

  it('a path parameter over 256 characters is 414 uri_too_long; task ids of 101-256 characters route', async ({ sim, gw: g }) => {
    const long = 'L'.repeat(300)
    const a = await rawExchange(g.url, get(`/v1/tasks/${long}`, `Authorization: Bearer ${g.tokens.reader}\r\n`))
    expectContractError(a, 414, 'uri_too_long', ['LLLLLLLLLL'])
    expect(a.headers['x-request-id']).toMatch(UUID)
    for (const n of [101, 200, 256]) {
      const id = `t${'x'.repeat(n - 1)}`
      const res = await call(`${g.url}/v1/tasks/${id}`, { token: g.tokens.reader })
      // the remote has no such task: a 404 from the remote, not the router's 414
      expect(res.status, `task id of ${n}`).toBe(404)
      expect(res.body.error.code).toBe('not_found')
      expect(sim.rpcCalls().some((c) => c.method === 'tasks/get' && JSON.stringify(c.params).includes(id))).toBe(true)
    }
    // 257 is past the schema and the router alike
    expect((await call(`${g.url}/v1/tasks/${'y'.repeat(257)}`, { token: g.tokens.reader })).status).toBe(414)
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="unmatched",method="GET",status="414"} 2')
  })
})

describe('errors the HTTP parser raises', () => {
  it('headers over the limit are 431 header_too_large in the contract shape', async ({ gw: g }) => {
    const a = await rawExchange(g.url, get('/healthz', `X-Big: ${'B'.repeat(20_000)}\r\n`))
    expectContractError(a, 431, 'header_too_large', ['BBBBBBBB'])
    expect(a.headers['x-request-id']).toMatch(UUID)
  })

  it('malformed requests are 400 invalid_request in the contract shape, never echoing input', async ({ gw: g }) => {
    const bad = [
      'GET /healthz HTTP/1.1\r\nHost: gw\r\nBad Header ECHO-ME\r\n\r\n',
      'GET /healthz?ECHO-ME HTTP/9.9\r\nHost: gw\r\n\r\n',
      'G@T /ECHO-ME HTTP/1.1\r\nHost: gw\r\n\r\n',
      'POST /v1/upstream/refresh HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\nZZ-ECHO-ME\r\n',
      'POST /v1/upstream/refresh HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nECHO-ME',
      'GET /healthz HTTP/1.1\r\nHost: gw\r\nX-Ctl: a\x01ECHO-ME\r\n\r\n'
    ]
    for (const data of bad) {
      const a = await rawExchange(g.url, data)
      expectContractError(a, 400, 'invalid_request', ['ECHO-ME'])
      expect(a.headers['x-request-id']).toMatch(UUID)
    }

    // each counted once: unrouted as `unparsed`, the chunked one under its route (its headers routed)
    const counted = (await metricLines(g)).filter((l) => l.includes('status="400"')).map((l) => Number(l.split(' ').at(-1)))
    expect(counted.reduce((a, b) => a + b, 0)).toBe(6)
    const unparsed = (await metricLines(g)).find((l) => l.startsWith('gateway_http_requests_total{route="unparsed",method="unknown",status="400"}'))
    expect(Number(unparsed?.split(' ').at(-1))).toBeGreaterThanOrEqual(5)
  })
})

describe('errors from plugins', () => {
  it("the static plugin's 403 (--path-as-is ../..) stays 403 forbidden, logged below error level", async ({ gw: g }) => {
    const a = await rawExchange(g.url, get('/docs/static/../../package.json'))
    expectContractError(a, 403, 'forbidden', ['package.json', 'openoperator-gateway'])
    expect(a.headers['x-request-id']).toMatch(UUID)
    const errorLines = g.logs.filter((l) => JSON.parse(l).level >= 50)
    expect(errorLines).toEqual([])
    expect(g.logs.join('')).not.toContain('"stack"')
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="/docs/static/*",method="GET",status="403"} 1')
  })
})

describe('two Authorization headers', () => {
  it('are refused with 400 invalid_request, whatever their order or values', async ({ gw: g }) => {
    const t = g.tokens.reader
    for (const pair of [[t, 'nope'], ['nope', t], [t, t]]) {
      const a = await rawExchange(g.url, get('/v1/upstream', `Authorization: Bearer ${pair[0]}\r\nauthorization: Bearer ${pair[1]}\r\n`))
      expectContractError(a, 400, 'invalid_request', [t])
      expect(a.headers['x-request-id']).toMatch(UUID)
    }
    // one header still works
    const ok = await rawExchange(g.url, get('/v1/upstream', `Authorization: Bearer ${t}\r\n`))
    expect(ok.status).toBe(200)
  })
})

describe('what Node itself answered outside the contract', () => {
  it('a missing Host is 400 invalid_request in the contract shape, counted; HTTP/1.0 needs none', async ({ gw: g }) => {
    const a = await rawExchange(g.url, 'GET /healthz HTTP/1.1\r\nx-request-id: corr-no-host\r\nConnection: close\r\n\r\n')
    expectContractError(a, 400, 'invalid_request')
    expect(a.headers['x-request-id']).toBe('corr-no-host')
    expect((await rawExchange(g.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200)
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="/healthz",method="GET",status="400"} 1')
  })

  it('an Expect other than 100-continue is 417 expectation_failed in the contract shape, counted', async ({ gw: g }) => {
    const a = await rawExchange(g.url, get('/healthz', 'Expect: ECHO-ME-teapot\r\n'))
    expectContractError(a, 417, 'expectation_failed', ['ECHO-ME'])
    expect(a.headers['x-request-id']).toMatch(UUID)
    // 100-continue is still honoured: the interim answer, then the route's
    const ok = parseRawAnswers((await rawExchange(g.url, 'POST /v1/upstream/refresh HTTP/1.1\r\nHost: gw\r\n' +
      `Authorization: Bearer ${g.tokens.admin}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{}`)).raw)
    expect(ok.map((x) => x.status)).toEqual([200])
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="/healthz",method="GET",status="417"} 1')
  })

  it('CONNECT is 400 invalid_request in the contract shape, counted, then the socket closes', async ({ gw: g }) => {
    const a = await rawExchange(g.url, 'CONNECT ECHO-ME.example:443 HTTP/1.1\r\nHost: ECHO-ME.example:443\r\nx-request-id: corr-connect\r\n\r\n')
    expectContractError(a, 400, 'invalid_request', ['ECHO-ME'])
    expect(a.headers['x-request-id']).toBe('corr-connect')
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="unmatched",method="CONNECT",status="400"} 1')
  })

  it('past GATEWAY_MAX_REQUESTS_PER_SOCKET a pipelined request is 503 connection_closing in the contract shape, counted, then the socket closes', async ({ startPair }) => {
    const { gw: g } = await startPair({ env: { GATEWAY_MAX_REQUESTS_PER_SOCKET: '2' } })
    const one = (n: number): string => `GET /healthz HTTP/1.1\r\nHost: gw\r\nx-request-id: pipe-${n}\r\n\r\n`
    const answers = parseRawAnswers((await rawExchange(g.url, [1, 2, 3, 4].map(one).join(''))).raw)
    expect(answers.map((a) => a.status)).toEqual([200, 200, 503, 503])
    expect(answers.map((a) => a.headers['x-request-id'])).toEqual(['pipe-1', 'pipe-2', 'pipe-3', 'pipe-4'])
    for (const a of answers.slice(2)) expectContractError(a, 503, 'connection_closing', [], true)
    // the last answer says the connection ends, and it did (rawExchange returned on the close)
    expect(answers.at(-1)!.headers.connection).toBe('close')
    // without pipelining, the last allowed answer closes the socket
    const seq = await sequential(g.url, [one(5), one(6)])
    expect(seq.map((a) => [a.status, a.headers.connection])).toEqual([[200, 'keep-alive'], [200, 'close']])
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="/healthz",method="GET",status="503"} 2')
  })
})

describe('answers leave in order', () => {
  it('a malformed request pipelined behind a mutation: the mutation is answered first, then the 400, then the socket closes', async ({ controlPair: p }) => {
    const id = rid('claim')
    const body = JSON.stringify({ requestId: id, ttlSeconds: 300 })
    const claim = `POST /v1/campaigns/camp-1/control/claim HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${p.gw.tokens.controller}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    const answers = parseRawAnswers((await rawExchange(p.gw.url, `${claim}G@T /ECHO-ME HTTP/1.1\r\nHost: gw\r\n\r\n`)).raw)
    expect(answers.map((a) => a.status)).toEqual([200, 400])
    expect(answers[0]!.body).toMatchObject({ requestId: id, campaignId: 'camp-1' })
    expectContractError(answers[1]!, 400, 'invalid_request', ['ECHO-ME'])
    const rec = await p.get(p.gw.tokens.controller, `/v1/campaigns/camp-1/requests/${id}`)
    expect(rec.body.state).toBe('applied')
  })

  it('a malformed request pipelined behind a slow read waits for the read', async ({ sim, gw: g }) => {
    sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 300 })
    const read = `GET /v1/supervisor/health HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${g.tokens.reader}\r\n\r\n`
    const answers = parseRawAnswers((await rawExchange(g.url, `${read}${read}GET /healthz HTTP/1.1\r\nHost: gw\r\nBad Header\r\n\r\n`)).raw)
    expect(answers.map((a) => a.status)).toEqual([200, 200, 400])
    expectContractError(answers[2]!, 400, 'invalid_request')
  })
})
