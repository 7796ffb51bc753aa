// Static callers reloaded without a restart (docs/operating.md#callers): GATEWAY_CALLERS_FILE is
// re-read on reload (SIGHUP in the bin, test/process/callers-reload.test.ts) and when it changes.
// Under a load of requests, a caller that stays is never refused, the one added is served after
// the reload and the one removed refused; a bad file keeps the set in use and says why. A static
// caller's expiresAt refuses its token from then on.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { waitFor } from '../helpers/child.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'
import { eventually } from '../helpers/jwks.js'

const READ = '/v1/supervisor/health'
const token = (): string => `tok-${randomBytes(18).toString('base64url')}`
const caller = (name: string, t: string, extra: object = {}): object => ({ name, tokenSha256: sha256Hex(t), scopes: ['read'], ...extra })

function callersFile (): { path: string; write: (callers: unknown) => void } {
  const path = join(mkdtempSync(join(tmpdir(), 'oogw-callers-')), 'callers.json')
  // written aside and renamed, as an operator (or a mounted Secret) replaces it
  const write = (callers: unknown): void => {
    writeFileSync(`${path}.tmp`, typeof callers === 'string' ? callers : JSON.stringify(callers))
    renameSync(`${path}.tmp`, path)
  }
  return { path, write }
}

describe('GATEWAY_CALLERS_FILE reload', () => {
  it('under load: zero refusals for the caller that stays, the added one served, the removed one refused', async ({ startPair }) => {
    const [stay, gone, added] = [token(), token(), token()]
    const f = callersFile()
    f.write([caller('stay', stay), caller('gone', gone)])
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path, GATEWAY_RATE_LIMIT_READ: '10000000' } })
    expect((await call(`${g.url}${READ}`, { token: gone })).status).toBe(200)
    expect((await call(`${g.url}${READ}`, { token: added })).status).toBe(401)

    let running = true
    const statuses: number[] = []
    const worker = async (): Promise<void> => {
      while (running) statuses.push((await call(`${g.url}${READ}`, { token: stay })).status)
    }
    const load = Promise.all(Array.from({ length: 8 }, worker))
    await waitFor(() => statuses.length > 100 ? true : undefined, 10_000, 'load')
    f.write([caller('stay', stay), caller('added', added)])
    expect(await g.reloadCallers()).toBe(true)
    const atReload = statuses.length
    await waitFor(() => statuses.length > atReload + 200 ? true : undefined, 10_000, 'load after the reload')
    running = false
    await load
    const bad = statuses.filter((s) => s !== 200)
    console.log(`callers-reload: ${statuses.length} requests under load across a reload, ${bad.length} not 200`)
    expect(bad).toEqual([])
    expect((await call(`${g.url}${READ}`, { token: added })).status).toBe(200)
    expect((await call(`${g.url}${READ}`, { token: gone })).status).toBe(401)
  })

  it('a change is picked up without a signal; a bad file keeps the callers in use and names its problems, never a token', async ({ startPair }) => {
    const [a, b] = [token(), token()]
    const f = callersFile()
    f.write([caller('a', a)])
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    f.write([caller('a', a), caller('b', b)])
    await eventually(async () => (await call(`${g.url}${READ}`, { token: b })).status === 200, 6000, 'the change to be seen')

    f.write([caller('a', a), { name: 'c', tokenSha256: 'xyz', scopes: ['read'] }, caller('jwt:d', token())])
    expect(await g.reloadCallers()).toBe(false)
    const warn = g.logs.find((l) => l.includes('GATEWAY_CALLERS_FILE was not reloaded'))
    expect(warn).toContain('GATEWAY_CALLERS_FILE[1].tokenSha256')
    expect(warn).toContain('GATEWAY_CALLERS_FILE[2].name')
    expect(warn).not.toContain(a)
    f.write('not json')
    expect(await g.reloadCallers()).toBe(false)
    expect((await call(`${g.url}${READ}`, { token: a })).status).toBe(200)
    expect((await call(`${g.url}${READ}`, { token: b })).status).toBe(200)
  })

  it('a static caller past its expiresAt is refused (401, reason expired)', async ({ startPair }) => {
    const [old, fresh] = [token(), token()]
    const env = {
      GATEWAY_CALLERS: JSON.stringify([
        caller('old', old, { expiresAt: new Date(Date.now() - 1000).toISOString() }),
        caller('fresh', fresh, { expiresAt: '2999-01-01T00:00:00+01:00' })
      ])
    }
    const { gw: g } = await startPair({ env })
    const refused = await call(`${g.url}${READ}`, { token: old })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe('unauthorized')
    expect((await call(`${g.url}${READ}`, { token: fresh })).status).toBe(200)
    expect((await call(`${g.metricsUrl}/metrics`)).text).toMatch(/^gateway_auth_refused_total\{reason="expired"\} 1$/m)
    // inline callers cannot be reloaded
    expect(await g.reloadCallers()).toBe(false)
  })
})
