// The HTTP edges (docs/design.md#errors, docs/design.md#http-edges): what the router and the
// HTTP parser refuse still leaves in the contract's shape — a contract code, a message the
// gateway wrote (never the URL or a header back), x-request-id, counted in the metrics — a
// plugin's 4xx stays a 4xx below error level, task ids up to the schema's 256 characters
// route, and two Authorization headers are refused. Raw `net` sockets send what undici won't.
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { rawExchange, type RawAnswer } from '../helpers/raw-http.js'

let sim: Simulator | undefined
let gw: TestGateway | undefined
afterEach(async () => { await gw?.close(); await sim?.close(); gw = undefined; sim = undefined })

async function setup (): Promise<TestGateway> {
  sim = await startSimulator({ secret: 'upstream-secret-0123456789' })
  gw = await startGateway({ simulator: sim })
  return gw
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** the contract's error shape, the code, and nothing of what the caller sent */
function expectContractError (a: RawAnswer, status: number, code: string, sent: string[] = []): void {
  expect(a.status, a.raw.slice(0, 300)).toBe(status)
  expect(a.headers['content-type']).toMatch(/^application\/json/)
  expect(a.body).toEqual({ error: { code, message: expect.any(String), retryable: false } })
  for (const s of sent) expect(a.text).not.toContain(s)
}

async function metricLines (g: TestGateway): Promise<string[]> {
  const m = await call(`${g.metricsUrl}/metrics`)
  return m.text.split('\n').filter((l) => l.startsWith('gateway_http_requests_total'))
}

const get = (path: string, headers = ''): string => `GET ${path} HTTP/1.1\r\nHost: gw\r\n${headers}Connection: close\r\n\r\n`

describe('errors the router raises', () => {
  it('a bad URL (%FF) is 400 invalid_request with x-request-id, echoing nothing, counted', async () => {
    const g = await setup()
    for (const path of ['/v1/tasks/%FF', '/%FF/x?token=QUERYSECRET-1']) {
      const a = await rawExchange(g.url, get(path, 'x-request-id: corr-bad-url\r\n'))
      expectContractError(a, 400, 'invalid_request', ['%FF', 'QUERYSECRET', '/x'])
      expect(a.headers['x-request-id']).toBe('corr-bad-url')
    }
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="unmatched",method="GET",status="400"} 2')
  })

  it('a path parameter over 256 characters is 414 uri_too_long; task ids of 101-256 characters route', async () => {
    const g = await setup()
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
      expect(sim!.rpcCalls().some((c) => c.method === 'tasks/get' && JSON.stringify(c.params).includes(id))).toBe(true)
    }
    // 257 is past the schema and the router alike
    expect((await call(`${g.url}/v1/tasks/${'y'.repeat(257)}`, { token: g.tokens.reader })).status).toBe(414)
    expect(await metricLines(g)).toContain('gateway_http_requests_total{route="unmatched",method="GET",status="414"} 2')
  })
})

describe('errors the HTTP parser raises', () => {
  it('headers over the limit are 431 header_too_large in the contract shape', async () => {
    const g = await setup()
    const a = await rawExchange(g.url, get('/healthz', `X-Big: ${'B'.repeat(20_000)}\r\n`))
    expectContractError(a, 431, 'header_too_large', ['BBBBBBBB'])
    expect(a.headers['x-request-id']).toMatch(UUID)
  })

  it('malformed requests are 400 invalid_request in the contract shape, never echoing input', async () => {
    const g = await setup()
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
  it("the static plugin's 403 (--path-as-is ../..) stays 403 forbidden, logged below error level", async () => {
    const g = await setup()
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
  it('are refused with 400 invalid_request, whatever their order or values', async () => {
    const g = await setup()
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
