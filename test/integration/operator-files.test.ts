// Files an operator points at (docs/design.md#operator-files): GATEWAY_CALLERS_FILE,
// GATEWAY_JWT_JWKS_FILE and GATEWAY_CARD_JWKS_FILE, re-read while the gateway serves. Each one
// replaced by a file over the 1 MiB cap is refused — the previous callers or keys stay in force,
// a warn line says why, gateway_operator_file_refusals_total{file,reason} counts it — and
// /healthz keeps answering meanwhile. A sparse 1.5 GiB callers file is refused without being
// read: the process's peak memory does not move. A file being written is read once it has held
// still for a poll, not at every poll.
import { randomBytes } from 'node:crypto'
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, generateKeyPair } from 'jose'
import { describe, expect, onTestFinished } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { it } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, testKey } from '../helpers/jwks.js'

const READ = '/v1/supervisor/health'
/** the contract's cap (§13): 1 MiB */
const CAP = 1024 * 1024
const token = (): string => `tok-${randomBytes(18).toString('base64url')}`
const caller = (name: string, t: string): object => ({ name, tokenSha256: sha256Hex(t), scopes: ['read'] })

/** a file in a directory of its own, replaced the way an operator (or a mounted Secret) replaces it: written aside, renamed */
function operatorFile (name: string): { path: string, replace: (text: string) => void, sparse: (bytes: number) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'oogw-opfile-'))
  onTestFinished(() => { rmSync(dir, { recursive: true, force: true }) })
  const path = join(dir, name)
  return {
    path,
    replace: (text) => { writeFileSync(`${path}.tmp`, text); renameSync(`${path}.tmp`, path) },
    // a file of this size taking no disk: reading it would fill memory with zeros
    sparse: (bytes) => { writeFileSync(`${path}.tmp`, ''); truncateSync(`${path}.tmp`, bytes); renameSync(`${path}.tmp`, path) }
  }
}

/** valid JSON of just over 2 MiB: only its size is wrong */
const padded = (value: Record<string, unknown>): string => JSON.stringify({ ...value, pad: 'x'.repeat(2 * CAP) })

async function refusals (g: TestGateway): Promise<Record<string, number>> {
  const text = (await call(`${g.metricsUrl}/metrics`)).text
  return Object.fromEntries([...text.matchAll(/^gateway_operator_file_refusals_total\{file="(\w+)",reason="(\w+)"\} (\d+)$/gm)].filter((m) => m[3] !== '0').map((m) => [`${m[1]!} ${m[2]!}`, Number(m[3])]))
}

/**
 * /healthz asked every 20 ms until `done` holds: the slowest answer. A read on the event loop of
 * the file the gateway refuses would show here.
 */
async function slowestHealthz (g: TestGateway, done: () => boolean, ms: number, what: string): Promise<number> {
  let slowest = 0
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    const t0 = performance.now()
    expect((await call(`${g.url}/healthz`)).status).toBe(200)
    slowest = Math.max(slowest, performance.now() - t0)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return slowest
}

const refusedLines = (g: TestGateway, variable: string, reason: string): string[] =>
  g.logs.filter((l) => l.includes(`${variable} was not reloaded`) && l.includes(`"reason":"${reason}"`))

describe('GATEWAY_CALLERS_FILE', () => {
  it('a 2 MiB file written while the gateway serves is refused: the old callers authenticate, the warn line and the metric say why, /healthz answers meanwhile', async ({ startPair }) => {
    const [a, b] = [token(), token()]
    const f = operatorFile('callers.json')
    f.replace(JSON.stringify([caller('a', a)]))
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    expect(await refusals(g)).toEqual({})

    // a callers array that would let `b` in, padded past the cap
    f.replace(`[${JSON.stringify(caller('b', b))}${' '.repeat(2 * CAP)}]`)
    const slowest = await slowestHealthz(g, () => refusedLines(g, 'GATEWAY_CALLERS_FILE', 'too_large').length > 0, 10_000, 'the refusal')
    console.log(`operator-files: slowest /healthz while the 2 MiB callers file was refused: ${slowest.toFixed(1)} ms`)
    expect(slowest).toBeLessThan(1000)
    expect(refusedLines(g, 'GATEWAY_CALLERS_FILE', 'too_large')[0]).toMatch(/GATEWAY_CALLERS_FILE: is \d+ bytes or more, over the 1 MiB cap \(1048576 bytes\)/)
    expect((await call(`${g.url}${READ}`, { token: a })).status).toBe(200)
    expect((await call(`${g.url}${READ}`, { token: b })).status).toBe(401)
    expect(await refusals(g)).toEqual({ 'GATEWAY_CALLERS_FILE too_large': 1 })

    // refused once per version of the file, not at every poll; a SIGHUP reads it again, and refuses it again
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(refusedLines(g, 'GATEWAY_CALLERS_FILE', 'too_large')).toHaveLength(1)
    expect(await g.reloadCallers()).toBe(false)
    expect(await refusals(g)).toEqual({ 'GATEWAY_CALLERS_FILE too_large': 2 })

    // unreadable and invalid are counted apart; a good file is taken again
    f.replace('[{"name": "c"')
    await eventually(async () => refusedLines(g, 'GATEWAY_CALLERS_FILE', 'invalid').length > 0, 10_000, 'the invalid file to be refused')
    rmSync(f.path)
    expect(await g.reloadCallers()).toBe(false)
    expect(await refusals(g)).toEqual({ 'GATEWAY_CALLERS_FILE too_large': 2, 'GATEWAY_CALLERS_FILE invalid': 1, 'GATEWAY_CALLERS_FILE unreadable': 1 })
    expect((await call(`${g.url}${READ}`, { token: a })).status).toBe(200)
    f.replace(JSON.stringify([caller('a', a), caller('b', b)]))
    expect(await g.reloadCallers()).toBe(true)
    expect((await call(`${g.url}${READ}`, { token: b })).status).toBe(200)
  })

  it('a sparse 1.5 GiB file is refused without being read: the peak memory stays put', async ({ startPair }) => {
    const a = token()
    const f = operatorFile('callers.json')
    f.replace(JSON.stringify([caller('a', a)]))
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path } })
    const peakBefore = process.resourceUsage().maxRSS
    f.sparse(1536 * 1024 * 1024)
    const slowest = await slowestHealthz(g, () => refusedLines(g, 'GATEWAY_CALLERS_FILE', 'too_large').length > 0, 10_000, 'the refusal')
    expect(await g.reloadCallers()).toBe(false)
    const grewKiB = process.resourceUsage().maxRSS - peakBefore
    console.log(`operator-files: a 1.5 GiB callers file refused; peak RSS grew ${Math.round(grewKiB / 1024)} MiB, slowest /healthz ${slowest.toFixed(1)} ms`)
    expect(grewKiB).toBeLessThan(128 * 1024)
    expect(slowest).toBeLessThan(1000)
    expect((await call(`${g.url}${READ}`, { token: a })).status).toBe(200)
    expect(await refusals(g)).toEqual({ 'GATEWAY_CALLERS_FILE too_large': 2 })
  })

  it('a file being written is read once it held still for a poll, not at every poll', async ({ startPair }) => {
    const [a, b] = [token(), token()]
    const f = operatorFile('callers.json')
    f.replace(JSON.stringify([caller('a', a)]))
    const { gw: g } = await startPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: f.path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    // written in place, a piece every 200 ms for 4 s: never the same between two polls
    const text = JSON.stringify([caller('a', a), caller('b', b)])
    writeFileSync(f.path, '')
    const pieces = 20
    for (let i = 0; i < pieces; i++) {
      appendFileSync(f.path, text.slice(Math.floor(i * text.length / pieces), Math.floor((i + 1) * text.length / pieces)))
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    // nothing read meanwhile: no half-written file refused, nothing reloaded
    expect(g.logs.filter((l) => l.includes('GATEWAY_CALLERS_FILE was not reloaded') || l.includes('GATEWAY_CALLERS_FILE reloaded'))).toEqual([])
    await eventually(async () => (await call(`${g.url}${READ}`, { token: b })).status === 200, 5000, 'the written file to be read')
    expect(g.logs.filter((l) => l.includes('GATEWAY_CALLERS_FILE reloaded'))).toHaveLength(1)
    expect(await refusals(g)).toEqual({})
  })
})

describe('GATEWAY_JWT_JWKS_FILE', () => {
  it('a 2 MiB key file is refused: the keys in force still verify, the new one does not, counted', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const k2 = await testKey('k2', 'ES256')
    const f = operatorFile('jwks.json')
    f.replace(JSON.stringify({ keys: [k1.jwk] }))
    const { gw: g } = await startPair({ env: { GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_FILE: f.path, GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    f.replace(padded({ keys: [k1.jwk, k2.jwk] }))
    const slowest = await slowestHealthz(g, () => refusedLines(g, 'GATEWAY_JWT_JWKS_FILE', 'too_large').length > 0, 10_000, 'the refusal')
    expect(slowest).toBeLessThan(1000)
    expect((await call(`${g.url}${READ}`, { token: await sign(k1) })).status).toBe(200)
    expect((await call(`${g.url}${READ}`, { token: await sign(k2) })).status).toBe(401)
    expect(await refusals(g)).toEqual({ 'GATEWAY_JWT_JWKS_FILE too_large': 1 })
    // the same keys under the cap: taken
    f.replace(JSON.stringify({ keys: [k1.jwk, k2.jwk] }))
    await eventually(async () => (await call(`${g.url}${READ}`, { token: await sign(k2) })).status === 200, 5000, 'the new keys')
  })
})

describe('GATEWAY_CARD_JWKS_FILE', () => {
  const keyPair = async (kid: string) => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
    return { signing: { privateKey, kid, alg: 'ES256' }, jwk: { ...await exportJWK(publicKey), kid, alg: 'ES256' } }
  }
  const refresh = async (g: TestGateway): Promise<{ lastError: string | null, signature: { keyId: string | null } }> =>
    (await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })).body

  it('a 2 MiB key file is refused: a card signed by the key it would add is still refused, counted', async ({ startPair }) => {
    const oldKey = await keyPair('k-old')
    const newKey = await keyPair('k-new')
    const f = operatorFile('card-keys.json')
    f.replace(JSON.stringify({ keys: [oldKey.jwk] }))
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0', cardSigning: { keys: [oldKey.signing] } }, env: { GATEWAY_CARD_JWKS_FILE: f.path } })
    expect((await refresh(g)).signature.keyId).toBe('k-old')
    f.replace(padded({ keys: [oldKey.jwk, newKey.jwk] }))
    const slowest = await slowestHealthz(g, () => refusedLines(g, 'GATEWAY_CARD_JWKS_FILE', 'too_large').length > 0, 10_000, 'the refusal')
    expect(slowest).toBeLessThan(1000)
    sim.setCardSigning({ keys: [newKey.signing] })
    expect((await refresh(g)).lastError).toBe('card signature: no signature verified: signature 1: no trusted key has kid k-new for ES256')
    expect(await refusals(g)).toEqual({ 'GATEWAY_CARD_JWKS_FILE too_large': 1 })
  })
})
