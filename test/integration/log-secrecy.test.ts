// Caller secrets never reach the log (docs/design.md#logging): at LOG_LEVEL=trace, malformed
// requests (bad request line, bad header, oversized header, invalid chunked encoding, a bad
// URL, two Authorization headers, a body that never arrives) and well-formed ones carrying a
// valid token, an X-API-KEY, `?token=…&api_key=…` and the token as a query name (`?<token>=`,
// `?a[<token>]=1`) leave no raw packet, no Authorization or X-API-KEY value, no query value and no
// unknown query name in any log line. The test helper gives the scrubber no secrets, so whatever
// the source lets through shows here.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'
import { rawExchange } from '../helpers/raw-http.js'

describe('log secrecy at trace', () => {
  it('no raw packet, credential header value or query value in any log line', async ({ startPair }) => {
    const { gw: g } = await startPair({ sim: { secret: 'upstream-secret-0123456789' }, env: { GATEWAY_HEADERS_TIMEOUT_MS: '500', GATEWAY_REQUEST_TIMEOUT_MS: '800' } })
    const token = g.tokens.all
    const apiKey = 'XAPIKEY-value-0123456789abcdef'
    const q1 = 'QVALUE-token-0123456789'
    const q2 = 'QVALUE-apikey-0123456789'
    const query = `?token=${q1}&api_key=${q2}`
    const creds = `Authorization: Bearer ${token}\r\nX-API-KEY: ${apiKey}\r\n`
    const malformed = [
      // bad request line, the query in it
      `GET /v1/upstream${query} HTTP/7.7\r\nHost: gw\r\n${creds}\r\n`,
      // a bad header after the credentials
      `GET /v1/upstream${query} HTTP/1.1\r\nHost: gw\r\n${creds}Bad Header Line\r\n\r\n`,
      // headers over the limit
      `GET /v1/upstream${query} HTTP/1.1\r\nHost: gw\r\n${creds}X-Pad: ${'p'.repeat(20_000)}\r\n\r\n`,
      // invalid chunked encoding
      `POST /v1/upstream/refresh${query} HTTP/1.1\r\nHost: gw\r\n${creds}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n{}\r\n0\r\n\r\n`,
      // conflicting lengths
      `POST /v1/upstream/refresh${query} HTTP/1.1\r\nHost: gw\r\n${creds}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      // a bad URL and a parameter over the limit
      `GET /v1/tasks/%FF${query} HTTP/1.1\r\nHost: gw\r\n${creds}Connection: close\r\n\r\n`,
      `GET /v1/tasks/${'t'.repeat(300)}${query} HTTP/1.1\r\nHost: gw\r\n${creds}Connection: close\r\n\r\n`,
      // two Authorization headers
      `GET /v1/upstream${query} HTTP/1.1\r\nHost: gw\r\n${creds}Authorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      // a body that never arrives: the request timeout closes it
      `POST /v1/upstream/refresh${query} HTTP/1.1\r\nHost: gw\r\n${creds}Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{`
    ]
    const statuses: number[] = []
    for (const data of malformed) statuses.push((await rawExchange(g.url, data, 5000)).status)
    expect(statuses).toEqual([400, 400, 431, 400, 400, 400, 414, 400, 408])

    // well-formed requests with a valid token and query values, on every kind of route
    const headers = { 'x-api-key': apiKey }
    for (const path of ['/v1/upstream', '/v1/supervisor/health', '/v1/tasks/task-1', '/healthz', '/nope', '/docs/static/../x']) {
      await call(`${g.url}${path}${query}`, { token, headers })
    }
    await call(`${g.url}/v1/upstream/refresh${query}`, { method: 'POST', token, headers })
    await call(`${g.url}/v1/campaigns/c-1/control/claim${query}`, { method: 'POST', token, headers, body: { requestId: 'r-1', ttlSeconds: 60 } })
    // a token as a query name, bare, inside brackets or percent-encoded, on a route and off
    for (const q of [`?${token}=`, `?${token}=1`, `?a[${token}]=1`, `?${token}[a]=1`, `?a.${token}=1`, `?${encodeURIComponent(token)}=`]) {
      await call(`${g.url}/v1/tasks/task-1${q}`, { token, headers })
      await call(`${g.url}/nope${q}`, { token })
    }
    // a valid request without a query still logs where it went
    expect((await call(`${g.url}/v1/upstream`, { token })).status).toBe(200)

    const lines = g.logs
    expect(lines.length).toBeGreaterThan(20)
    const offending = lines.filter((l) => l.includes(token) || l.includes(apiKey) || l.includes(q1) || l.includes(q2) ||
      l.includes('rawPacket') || /\[(\d{1,3},){16,}/.test(l))
    expect(offending).toEqual([])
    // the access line (one per request) names the route template and keeps the query's shape, values redacted
    const access = lines.map((l) => JSON.parse(l)).filter((o) => o.msg === 'request completed')
    expect(access.some((o) => o.req.route === '/v1/tasks/:taskId' && o.req.url === '/v1/tasks/task-1?token=[REDACTED]&api_key=[REDACTED]')).toBe(true)
    expect(access.some((o) => o.req.url === '/v1/upstream' && o.req.route === '/v1/upstream')).toBe(true)
    // a name that is not a known word is replaced whole, like a bare value
    expect(access.some((o) => o.req.url === '/v1/tasks/task-1?[REDACTED]')).toBe(true)
  })
})
