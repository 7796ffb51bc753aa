// Failed logins per client address (docs/design.md#rate-limits): past
// GATEWAY_RATE_LIMIT_AUTH_FAILURES 401s in a minute, the address gets 429 rate_limited with
// Retry-After before its token is looked at — whatever the token, so the answer never tells a
// guesser whether a guess was right. Other addresses are untouched; behind
// GATEWAY_TRUST_PROXY the forwarded address is the one counted. The Redis case (shared by
// replicas) needs TEST_REDIS_URL and is skipped with a printed reason otherwise.
import { randomInt } from 'node:crypto'
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call, type JsonResponse } from '../helpers/http.js'

const REDIS = process.env.TEST_REDIS_URL
if (REDIS === undefined) console.warn('SKIP auth-failures (shared through Redis): TEST_REDIS_URL is not set')

const BAD = 'tok-not-a-configured-token'
const from = (g: TestGateway, ip: string, token?: string): Promise<JsonResponse> =>
  call(`${g.url}/v1/upstream`, { token, headers: { 'x-forwarded-for': ip } })

async function rateLimitedCount (g: TestGateway): Promise<number> {
  const text = (await call(`${g.metricsUrl}/metrics`)).text
  return [...text.matchAll(/^gateway_rate_limited_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0)
}

/** an address no other run or test uses, for counters that outlive the run in a shared Redis */
const randomAddress = (): string => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

describe('failed logins are rate-limited per client address', () => {
  it('N bad tokens → 401s, then 429 with Retry-After for that address only; behind a proxy the forwarded address counts', async ({ startPair }) => {
    const { gw: g } = await startPair({ env: { GATEWAY_TRUST_PROXY: 'true', GATEWAY_RATE_LIMIT_AUTH_FAILURES: '5' } })
    const a = '203.0.113.7'
    const b = '198.51.100.9'

    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await from(g, a, BAD)).status)
    const refused = await from(g, a, BAD)
    statuses.push(refused.status)
    statuses.push((await from(g, a)).status) // no token at all: also refused now
    console.log(`auth-failures: budget 5/min, one address sent 7 bad or missing tokens → ${statuses.join(',')}; Retry-After ${String(refused.headers['retry-after'])} s`)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429])
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', retryable: true })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
    expect(refused.headers['x-request-id']).toBeDefined()
    expect(refused.text).not.toContain(BAD)

    // a valid token from the refused address is refused too: serving it would tell a guesser
    // which guess was right (docs/design.md#rate-limits)
    expect((await from(g, a, g.tokens.reader)).status).toBe(429)
    // another address: the valid caller is served, and its own failures count on their own
    expect((await from(g, b, g.tokens.reader)).status).toBe(200)
    const other: number[] = []
    for (let i = 0; i < 6; i++) other.push((await from(g, b, BAD)).status)
    expect(other).toEqual([401, 401, 401, 401, 401, 429])
    // a valid token without the scope is a 403, never a failed login
    const c = '192.0.2.44'
    const forbidden: number[] = []
    for (let i = 0; i < 7; i++) forbidden.push((await from(g, c, g.tokens.none)).status)
    expect(forbidden.every((s) => s === 403)).toBe(true)

    expect(await rateLimitedCount(g)).toBeGreaterThanOrEqual(4)
  })

  it('without GATEWAY_TRUST_PROXY a forwarded address is ignored: the socket address counts', async ({ startPair }) => {
    const { gw: g } = await startPair({ env: { GATEWAY_RATE_LIMIT_AUTH_FAILURES: '3' } })
    const statuses: number[] = []
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']) statuses.push((await from(g, ip, BAD)).status)
    expect(statuses).toEqual([401, 401, 401, 429])
  })

  it.skipIf(REDIS === undefined)('two replicas sharing Redis share one failure budget per address', async ({ sim }) => {
    const env = { GATEWAY_REDIS_URL: REDIS!, GATEWAY_TRUST_PROXY: 'true', GATEWAY_RATE_LIMIT_AUTH_FAILURES: '4' }
    const a = await startGateway({ simulator: sim, env })
    const b = await startGateway({ simulator: sim, env, tokens: a.tokens })
    const ip = randomAddress()
    const statuses: number[] = []
    for (const g of [a, b, a, b, a, b]) statuses.push((await from(g, ip, BAD)).status)
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429])
    expect((await from(b, randomAddress(), a.tokens.reader)).status).toBe(200)
  })
})
