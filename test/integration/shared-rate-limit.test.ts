// Rate-limit counters shared through Redis (docs/design.md#rate-limits): two replicas, one
// budget per caller. Needs TEST_REDIS_URL (set by .ci/run); skipped with a printed reason
// otherwise.
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const REDIS = process.env.TEST_REDIS_URL
if (REDIS === undefined) console.warn('SKIP shared-rate-limit: TEST_REDIS_URL is not set (no Redis to share counters through)')

// the gateways close before the test's simulator: hooks run before fixtures are torn down
const gws: TestGateway[] = []
afterEach(async () => { for (const g of gws.splice(0)) await g.close() })

describe.skipIf(REDIS === undefined)('rate limits across replicas', () => {
  it('two gateways sharing Redis enforce one budget per caller', async ({ sim }) => {
    // a unique caller name per run keeps earlier runs' counters out of this one
    const name = `rl-${randomBytes(6).toString('hex')}`
    const env = { GATEWAY_REDIS_URL: REDIS!, GATEWAY_RATE_LIMIT_READ: '4' }
    const a = await startGateway({ simulator: sim, env, callerPrefix: name })
    gws.push(a)
    const b = await startGateway({ simulator: sim, env, callerPrefix: name, tokens: a.tokens })
    gws.push(b)
    const statuses: number[] = []
    for (const g of [a, b, a, b, a, b]) statuses.push((await call(`${g.url}/v1/upstream`, { token: a.tokens.reader })).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
  })
})
