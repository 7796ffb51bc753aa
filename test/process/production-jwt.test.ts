// Production with callers from an identity provider alone (docs/design.md#production): the bin
// starts with NODE_ENV=production, GATEWAY_JWT_* and no static caller, against an https upstream;
// a signed JWT is served with the scopes its claim grants, admin included, and nothing else gets
// in — no static caller exists and no token is generated. With neither static nor JWT callers the
// start is refused, naming both.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startGatewayChild } from '../helpers/child.js'
import { call } from '../helpers/http.js'
import { AUDIENCE, ISSUER, sign, testKey } from '../helpers/jwks.js'
import { TRUSTED_CA_FILE, trustedServer } from '../helpers/tls.js'

const SECRET = `prod-jwt-secret-${randomBytes(8).toString('hex')}`

let sim: Simulator | undefined
let dir: string | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

const production = (upstream: string): Record<string, string> => ({
  NODE_ENV: 'production',
  OPENOPERATOR_URL: upstream,
  SPYNEL_AGENT_ZERO_API_KEY: SECRET,
  UPSTREAM_CA_FILE: TRUSTED_CA_FILE,
  GATEWAY_LEDGER_URL: 'sqlite::memory:',
  HOST: '127.0.0.1',
  PORT: '0',
  METRICS_PORT: '0'
})

describe('production with JWT callers only', () => {
  it('starts, serves a JWT caller its claimed scopes (admin included), and knows no other caller', async () => {
    sim = await startSimulator({ secret: SECRET, tls: trustedServer })
    const key = await testKey('k1', 'ES256')
    dir = mkdtempSync(join(tmpdir(), 'gw-prod-jwt-'))
    const jwks = join(dir, 'jwks.json')
    writeFileSync(jwks, JSON.stringify({ keys: [key.jwk] }))
    const p = startGatewayChild({
      ...production(sim.url),
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
      GATEWAY_JWT_JWKS_FILE: jwks
    })
    const url = await listenUrlOf(p)

    const admin = await sign(key, { sub: 'ops-team', scope: 'openid read admin' })
    const read = await call(`${url}/v1/supervisor/health`, { token: admin })
    expect(read.status, read.text).toBe(200)
    const bindings = await call(`${url}/v1/admin/controllers`, { token: admin })
    expect(bindings.status, bindings.text).toBe(200)

    const reader = await sign(key, { sub: 'dashboards', scope: 'read' })
    expect((await call(`${url}/v1/supervisor/health`, { token: reader })).status).toBe(200)
    expect((await call(`${url}/v1/admin/controllers`, { token: reader })).status).toBe(403)

    // no static caller, no generated token: anything but a valid JWT is 401
    for (const token of ['dev-0123456789abcdefghijklmnopqrstuv', `tok-${randomBytes(18).toString('base64url')}`]) {
      expect((await call(`${url}/v1/supervisor/health`, { token })).status).toBe(401)
    }
    const other = await testKey('k1', 'ES256')
    expect((await call(`${url}/v1/supervisor/health`, { token: await sign(other, { scope: 'read admin' }) })).status).toBe(401)
    expect(p.out()).not.toMatch(/dev token/)
    expect(p.out() + p.err()).not.toContain(SECRET)

    p.child.kill('SIGTERM')
    expect(await p.exited).toBe(0)
  })

  it('with neither static nor JWT callers, refuses to start, naming both', async () => {
    const p = startGatewayChild(production('https://127.0.0.1:9'))
    expect(await p.exited).toBe(1)
    expect(p.err()).toContain('GATEWAY_CALLERS (or GATEWAY_CALLERS_FILE), or JWT callers (GATEWAY_JWT_*): required when NODE_ENV=production')
    expect(p.out()).toBe('')
    expect(p.err()).not.toContain(SECRET)
  })
})
