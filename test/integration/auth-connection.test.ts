// A static caller remembered for its connection (docs/design.md#authentication): the bearer
// pattern and the digest are skipped for the Authorization value a keep-alive connection
// authenticated with last, and nothing else changes. On one connection, as an ingress sends many callers' requests: a token one character off the
// remembered one is refused, another caller is that caller (its own scopes), a caller removed by a
// reload is refused at its next request, and one past its expiresAt too.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'undici'
import { describe, expect } from 'vitest'
import { sameText, sha256Hex } from '../../src/callers/tokens.js'
import { it } from '../helpers/fixtures.js'

const READ = '/v1/supervisor/health'
const token = (): string => `tok-${randomBytes(18).toString('base64url')}`
const caller = (name: string, t: string, extra: object = {}): object => ({ name, tokenSha256: sha256Hex(t), scopes: ['read'], ...extra })

describe('a token remembered for its connection', () => {
  it('decides nothing the digest would not: a near token, another caller, a reload and an expiry on one connection', async ({ startPair }) => {
    const [a, b, c] = [token(), token(), token()]
    const path = join(mkdtempSync(join(tmpdir(), 'oogw-callers-')), 'callers.json')
    const write = (callers: unknown): void => {
      writeFileSync(`${path}.tmp`, JSON.stringify(callers))
      renameSync(`${path}.tmp`, path)
    }
    write([caller('a', a), caller('b', b, { scopes: ['admin'] })])
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    // one connection: every request below reuses the socket the first one opened
    const client = new Client(g.url, { pipelining: 1 })
    const ports = new Set<number>()
    const get = async (t: string, scheme = 'Bearer '): Promise<number> => {
      const res = await client.request({ path: READ, method: 'GET', headers: { authorization: `${scheme}${t}` } })
      await res.body.dump()
      return res.statusCode
    }
    const peerPort = (): void => {
      const line = g.logs.findLast((l) => l.includes('"request completed"'))
      if (line !== undefined) ports.add((JSON.parse(line) as { req: { remotePort: number } }).req.remotePort)
    }
    try {
      expect(await get(a)).toBe(200)
      peerPort()
      const near = a.slice(0, -1) + (a.endsWith('x') ? 'y' : 'x')
      expect(await get(near)).toBe(401)
      expect(await get(a + 'x')).toBe(401)
      expect(await get(a.slice(0, -1))).toBe(401)
      expect(await get(a)).toBe(200)
      // the Authorization value is what is remembered: the same token written otherwise is read
      // again, and a value the bearer pattern refuses is refused whatever token it holds
      expect(await get(a, 'bearer ')).toBe(200)
      expect(await get(a, 'Bearer  ')).toBe(401)
      expect(await get(a, 'Basic ')).toBe(401)
      expect(await get(a)).toBe(200)
      // another caller on the same connection is that caller: b holds the admin scope only
      expect(await get(b)).toBe(403)
      expect(await get(a)).toBe(200)
      // a reload that removes a: refused at its next request on the connection that knew it. c
      // comes with it, valid for a while from now (not from the start: a loaded machine is slow)
      const expiresAt = Date.now() + 2500
      write([caller('b', b, { scopes: ['admin'] }), caller('c', c, { expiresAt: new Date(expiresAt).toISOString() })])
      expect(await g.reloadCallers()).toBe(true)
      expect(await get(a)).toBe(401)
      // c, remembered while valid, refused once past its expiresAt
      expect(await get(c)).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 100))
      expect(await get(c)).toBe(401)
      peerPort()
    } finally {
      await client.close()
    }
    // the requests shared one connection, so the remembered token was there to be misused
    expect(ports.size).toBe(1)
  })
})

describe('sameText', () => {
  it('is equality, for every pair of lengths and a difference at any place', () => {
    const base = 'tok-abcdefghijklmnop'
    expect(sameText(base, base)).toBe(true)
    expect(sameText('', '')).toBe(true)
    expect(sameText('', base)).toBe(false)
    expect(sameText(base, '')).toBe(false)
    for (let i = 0; i < base.length; i++) {
      const changed = base.slice(0, i) + String.fromCharCode(base.charCodeAt(i) ^ 1) + base.slice(i + 1)
      expect(sameText(changed, base)).toBe(false)
      expect(sameText(base.slice(0, i), base)).toBe(false)
      expect(sameText(base, base.slice(0, i))).toBe(false)
    }
    // a character whose code is 0 past the known text's end still differs
    expect(sameText(base + '\u0000', base)).toBe(false)
  })
})
