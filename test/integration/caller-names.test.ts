// Caller names hold no control, format or bidirectional characters, whatever their source
// (docs/design.md#callers): a name is written to the ledger, the logs and an operator's
// terminal. A JWT whose name claim (or subject) holds one is refused (401, reason claims); a
// static callers file that names one is refused at start, and on reload keeps the callers in use.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, onTestFinished } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { ConfigError } from '../../src/config/index.js'
import { startSimulator } from '../../src/simulator/index.js'
import { it } from '../helpers/fixtures.js'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey } from '../helpers/jwks.js'

const READ = '/v1/supervisor/health'
const UNSAFE = ['team\u001b[2Ja', 'team\u202eevil', 'te\u200bam', 'team\u2066a\u2069', 'team\u200e', 'team\u009b2J', 'team\u2028b']
/** none of the names' characters reached the text raw */
const expectNoneRaw = (text: string): void => { for (const c of '\u001b\u202e\u200b\u2066\u009b\u2028') expect(text.includes(c), JSON.stringify(c)).toBe(false) }
const token = (): string => `tok-${randomBytes(18).toString('base64url')}`
const caller = (name: string, t: string): object => ({ name, tokenSha256: sha256Hex(t), scopes: ['read'] })

function callersFile (callers: unknown): { path: string; write: (callers: unknown) => void } {
  const path = join(mkdtempSync(join(tmpdir(), 'oogw-callers-')), 'callers.json')
  const write = (c: unknown): void => {
    writeFileSync(`${path}.tmp`, JSON.stringify(c))
    renameSync(`${path}.tmp`, path)
  }
  write(callers)
  return { path, write }
}

describe('caller names', () => {
  it('a JWT whose name claim or subject holds a control, format or bidirectional character: 401, reason claims', async ({ startPair }) => {
    const key = await testKey('k1')
    const idp = await startIdp([key])
    onTestFinished(idp.close)
    const env = { GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_URL: idp.url, GATEWAY_JWT_CLAIMS: JSON.stringify({ name: 'username' }), GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' }
    const { gw } = await startPair({ env })
    const clean = await sign(key, { sub: 'team-a', username: 'team-a' })
    await eventually(async () => (await call(`${gw.url}${READ}`, { token: clean })).status === 200, 5000, 'keys in use')
    const reference = await call(`${gw.url}${READ}`, { token: 'tok-not-a-caller-000000' })
    // the name (the mapped claim) and the identity's subject alike
    const cases = [
      ...UNSAFE.map((name) => ({ sub: 'team-a', username: name })),
      ...UNSAFE.map((sub) => ({ sub, username: 'team-a' }))
    ]
    for (const claims of cases) {
      const res = await call(`${gw.url}${READ}`, { token: await sign(key, claims) })
      expect(res.status, JSON.stringify(claims)).toBe(401)
      expect(res.body).toEqual(reference.body)
    }
    expect((await call(`${gw.url}${READ}`, { token: clean })).status).toBe(200)
    const metrics = (await call(`${gw.metricsUrl}/metrics`)).text
    expect(metrics).toMatch(new RegExp(`^gateway_auth_refused_total\\{reason="claims"\\} ${cases.length}$`, 'm'))
    // the refusal's debug line names the claim, never its value
    expect(gw.logs.join('')).toMatch(/the username claim must not hold control/)
    expectNoneRaw(gw.logs.join(''))
  })

  it('a callers file naming one is refused at start, and on reload keeps the callers in use', async () => {
    const sim = await startSimulator()
    onTestFinished(async () => { await sim.close() })
    const good = token()
    for (const name of UNSAFE) {
      const f = callersFile([caller('ops', good), caller(name, token())])
      const started = startGateway({ simulator: sim, env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path } })
      await expect(started, JSON.stringify(name)).rejects.toThrow(ConfigError)
      await expect(started).rejects.toThrow(/GATEWAY_CALLERS\[1\]\.name: must not hold control, format \(zero-width, bidirectional\) or line-separator characters/)
    }

    const f = callersFile([caller('ops', good)])
    const gw = await startGateway({ simulator: sim, env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    for (const name of UNSAFE) {
      const other = token()
      f.write([caller('ops', good), caller(name, other)])
      expect(await gw.reloadCallers(), JSON.stringify(name)).toBe(false)
      expect((await call(`${gw.url}${READ}`, { token: good })).status).toBe(200)
      expect((await call(`${gw.url}${READ}`, { token: other })).status).toBe(401)
    }
    const warn = gw.logs.filter((l) => l.includes('GATEWAY_CALLERS_FILE was not reloaded'))
    expect(warn).toHaveLength(UNSAFE.length)
    for (const w of warn) expect(w).toContain('GATEWAY_CALLERS_FILE[1].name: must not hold control')
    // the warning names the field, never the value
    expectNoneRaw(gw.logs.join(''))
  })
})
