// Inbound rules (docs/design.md#authentication, docs/design.md#rate-limits,
// docs/design.md#errors): 401/403/429 in that order, x-request-id everywhere, the error shape,
// strict query and body caps, and nothing secret or remote in any answer or log.
import { describe, expect } from 'vitest'
import { it, test } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

test.override({ pairOptions: { sim: { secret: 'upstream-secret-0123456789', profile: 'a2a-js' } } })

describe('authentication and scopes', () => {
  it('401 with WWW-Authenticate for a missing, malformed or unknown token', async ({ sim, gw: g }) => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer not-a-known-token' }, { authorization: `Bearer ${g.tokens.reader}x` }]) {
      const res = await call(`${g.url}/v1/supervisor/health`, { headers })
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /)
      expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), retryable: false } })
    }
    expect(sim.rpcCalls()).toHaveLength(0)
  })

  it('403 forbidden when the caller lacks the scope', async ({ gw: g }) => {
    const res = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.none })
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('forbidden')
    const refresh = await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.reader })
    expect(refresh.status).toBe(403)
  })

  it('public routes need no token', async ({ gw: g }) => {
    expect((await call(`${g.url}/healthz`)).body).toEqual({ status: 'ok' })
    const ready = await call(`${g.url}/readyz`)
    expect(ready.status).toBe(200)
    // without GATEWAY_JWT_* there is no key set to report
    expect(ready.body.checks).not.toHaveProperty('jwtKeys')
    const spec = await call(`${g.url}/openapi.json`)
    expect(spec.status).toBe(200)
    expect(Object.keys(spec.body.paths)).toEqual(expect.arrayContaining(['/v1/upstream', '/v1/supervisor/health']))
  })
})

describe('rate limiting', () => {
  it('429 rate_limited with Retry-After per caller, after authentication; a 401 never counts', async ({ startPair }) => {
    const { gw: g } = await startPair({ env: { GATEWAY_RATE_LIMIT_READ: '3' } })
    for (let i = 0; i < 5; i++) expect((await call(`${g.url}/v1/upstream`, { token: 'wrong-token' })).status).toBe(401)
    for (let i = 0; i < 3; i++) {
      const ok = await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })
      expect(ok.status).toBe(200)
      // the budget as docs/api.md describes it: the limit, what is left, seconds to the reset
      expect(ok.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': String(2 - i) })
      expect(Number(ok.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1)
      expect(Number(ok.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60)
    }
    const limited = await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' })
    // health and docs carry no caller and no budget
    expect((await call(`${g.url}/healthz`)).headers['x-ratelimit-limit']).toBeUndefined()
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', retryable: true })
    // another caller has a budget of its own
    expect((await call(`${g.url}/v1/upstream`, { token: g.tokens.admin })).status).toBe(200)
    const m = await call(`${g.metricsUrl}/metrics`)
    expect(m.text).toMatch(/gateway_rate_limited_total\{route="\/v1\/upstream"\} 1/)
  })
})

describe('errors', () => {
  it('every response carries x-request-id; a safe caller id is kept, an unsafe one replaced', async ({ gw: g }) => {
    const a = await call(`${g.url}/healthz`, { headers: { 'x-request-id': 'corr-123' } })
    expect(a.headers['x-request-id']).toBe('corr-123')
    const b = await call(`${g.url}/nope`, { headers: { 'x-request-id': 'bad id\twith spaces' } })
    expect(b.status).toBe(404)
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(b.body).toEqual({ error: { code: 'not_found', message: expect.any(String), retryable: false } })
    const c = await call(`${g.url}/v1/upstream`)
    expect(c.headers['x-request-id']).toBeTruthy()
  })

  it('unknown query parameters are 400 invalid_request', async ({ gw: g }) => {
    const res = await call(`${g.url}/v1/supervisor/health?verbose=1`, { token: g.tokens.reader })
    expect(res.status).toBe(400)
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'unknown query parameter: verbose', retryable: false })
  })

  it('a refused query or path says which parameter and what is wrong, never the value given', async ({ gw: g }) => {
    const secret = 'sk-live-QUERYVALUE-0123456789abcdef'
    const query = await call(`${g.url}/v1/campaigns/camp-1/requests?limit=${secret}&state=${secret}`, { token: g.tokens.reader })
    expect(query.status).toBe(400)
    expect(query.body.error).toEqual({
      code: 'invalid_request',
      message: 'query parameter state: must be one of "pending", "applied", "rejected", "ambiguous", "not_applied"; query parameter limit: must be a number',
      retryable: false
    })
    const path = await call(`${g.url}/v1/tasks/${secret}!`, { token: g.tokens.reader })
    expect(path.status).toBe(400)
    expect(path.body.error).toEqual({ code: 'invalid_request', message: 'path parameter taskId: must be 1-256 characters of [A-Za-z0-9._:-]', retryable: false })
    for (const r of [query, path]) expect(r.text).not.toContain('QUERYVALUE')
  })

  it('bodies over 64 KiB are 413 payload_too_large, after authentication', async ({ gw: g }) => {
    const big = JSON.stringify({ pad: 'x'.repeat(70 * 1024) })
    const unauth = await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', rawBody: big, headers: { 'content-type': 'application/json' } })
    expect(unauth.status).toBe(401)
    const res = await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin, rawBody: big, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(413)
    expect(res.body.error.code).toBe('payload_too_large')
  })
})

describe('nothing secret or remote leaks', () => {
  it('a remote error string planted by the simulator is never in a response or the log', async ({ sim, gw: g }) => {
    const planted = 'PLANTED-REMOTE-TEXT Traceback: secret path /etc/shadow'
    sim.inject('rpc', { kind: 'rpc-error', code: -32603, message: planted, data: { detail: planted } }, 1)
    const a = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    expect(a.status).toBe(502)
    expect(a.body.error.code).toBe('upstream_rejected')
    sim.inject('rpc', { kind: 'status', status: 500, body: planted }, 1)
    const b = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    expect(b.body.error.code).toBe('upstream_unavailable')
    sim.inject('rpc', { kind: 'status', status: 200, body: planted, contentType: 'text/plain' }, 1)
    const c = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    expect(c.body.error.code).toBe('upstream_invalid_response')
    for (const r of [a, b, c]) expect(r.text).not.toContain('PLANTED')
    const log = g.logs.join('')
    expect(log).not.toContain('PLANTED')
    expect(log).toMatch(/"bodySha256":"[0-9a-f]{64}"/)
    expect(log).toContain('"remoteCode":-32603')
  })

  it('the upstream secret and caller tokens are never in a response or the log', async ({ gw: g }) => {
    const paths = ['/v1/upstream', '/v1/supervisor/health', '/readyz', '/openapi.json', '/nope']
    const texts: string[] = []
    for (const p of paths) texts.push((await call(`${g.url}${p}`, { token: g.tokens.reader })).text)
    texts.push((await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })).text)
    texts.push((await call(`${g.url}/v1/upstream`, { token: 'guessed-token-value' })).text)
    texts.push((await call(`${g.metricsUrl}/metrics`)).text)
    const everything = texts.join('\n') + g.logs.join('')
    expect(g.logs.length).toBeGreaterThan(5)
    expect(everything).not.toContain('upstream-secret-0123456789')
    for (const t of Object.values(g.tokens)) expect(everything).not.toContain(t)
    expect(everything).not.toContain('guessed-token-value')
  })
})
