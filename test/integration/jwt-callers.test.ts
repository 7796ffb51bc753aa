// Callers from an identity provider (docs/design.md#authentication, docs/operating.md#jwt-callers):
// keys generated here, their JWKS served on loopback. A valid JWT is served beside the static
// tokens; every refusal — expired, not yet valid, wrong issuer or audience, no exp, unknown kid,
// algorithm confusion, a controllerId a static caller holds — is the static 401 byte for byte,
// counted by reason. An unknown kid fetches the JWKS once the window has passed (rotation); a
// flood of random kids does not fetch again within GATEWAY_JWT_JWKS_MIN_REFRESH_MS. The JWKS file
// is re-read on change.
import { createHmac, randomBytes } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportSPKI } from 'jose'
import { describe, expect, onTestFinished } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { waitFor } from '../helpers/child.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey, type TestIdp } from '../helpers/jwks.js'
import type { TestGateway } from '../helpers/gateway.js'
import { TRUSTED_CA_FILE, trustedServer, unknownServer } from '../helpers/tls.js'

const READ = '/v1/supervisor/health'
const CONTROL = '/v1/campaigns/c-1/requests/r-1/reconcile'

const jwtEnv = (idp: Pick<TestIdp, 'url'>): Record<string, string> => ({
  GATEWAY_JWT_ISSUER: ISSUER,
  GATEWAY_JWT_AUDIENCE: AUDIENCE,
  GATEWAY_JWT_JWKS_URL: idp.url,
  GATEWAY_JWT_JWKS_MIN_REFRESH_MS: '1000',
  GATEWAY_JWT_LEEWAY_SECONDS: '5',
  // the refusals below are many from one address: the failed-login budget is tested elsewhere
  GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000'
})

const get = async (g: TestGateway, token: string, path = READ): Promise<JsonResponse> => await call(`${g.url}${path}`, { token })

async function refusals (g: TestGateway): Promise<Record<string, number>> {
  const text = (await call(`${g.metricsUrl}/metrics`)).text
  return Object.fromEntries([...text.matchAll(/^gateway_auth_refused_total\{reason="([a-z_]+)"\} (\d+)/gm)].map((m) => [m[1]!, Number(m[2])]))
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

describe('JWT callers from a JWKS URL', () => {
  it('valid tokens are served beside static ones; every refusal is the static 401, counted by reason', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const idp = await startIdp([k1])
    onTestFinished(idp.close)
    const { gw: g } = await startPair({ env: jwtEnv(idp) })
    await waitFor(() => idp.fetches() >= 1 ? true : undefined, 5000, 'the JWKS fetch at start')

    await eventually(async () => (await get(g, await sign(k1))).status === 200, 5000, 'keys in use')
    expect((await get(g, g.tokens.reader)).status).toBe(200)
    // scopes come from the mapped claim only (scope here): roles elsewhere grant nothing
    expect((await get(g, await sign(k1, { scope: undefined, roles: ['read'] }))).status).toBe(403)

    const reference = await get(g, 'tok-not-a-configured-token')
    expect(reference.status).toBe(401)
    const now = Math.floor(Date.now() / 1000)
    const pub = await exportSPKI(k1.publicKey)
    const body = b64({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', scope: 'read admin', iat: now, exp: now + 300 })
    const hsHead = b64({ alg: 'HS256', kid: 'k1', typ: 'JWT' })
    const es384 = await testKey('k-es384', 'ES384')
    const cases: Array<[string, string]> = [
      ['expired', await sign(k1, { iat: now - 600, exp: now - 60 })],
      ['not_yet_valid', await sign(k1, { nbf: now + 120 })],
      ['not_yet_valid', await sign(k1, { iat: now + 120 })],
      ['claims', await sign(k1, { iss: 'https://other.idp.test' })],
      ['claims', await sign(k1, { aud: 'someone-else' })],
      ['claims', await sign(k1, { exp: undefined })],
      ['signature', `${(await sign(k1)).slice(0, -6)}AAAAAA`],
      ['signature', (await sign(await testKey('k1')))],
      // algorithm confusion: HMAC keyed with the public key's bytes, and algorithms not allowed
      ['algorithm', `${hsHead}.${body}.${createHmac('sha256', pub).update(`${hsHead}.${body}`).digest('base64url')}`],
      ['algorithm', `${b64({ alg: 'none' })}.${body}.`],
      ['algorithm', await sign(es384)],
      ['algorithm', await sign(await testKey('k1', 'PS256'))],
      ['malformed', `${b64({ kid: 'k1' })}.${body}.c2ln`]
    ]
    for (const [reason, token] of cases) {
      const res = await get(g, token)
      expect(res.status, reason).toBe(401)
      expect(res.body, reason).toEqual(reference.body)
      expect(res.headers['www-authenticate'], reason).toBe(reference.headers['www-authenticate'])
      expect(res.text, reason).not.toContain(reason)
    }
    const counted = await refusals(g)
    console.log(`jwt-callers: refusals by reason ${JSON.stringify(counted)}`)
    expect(counted).toMatchObject({ expired: 1, not_yet_valid: 2, claims: 3, signature: 2, algorithm: 4, malformed: 1, unknown_token: 1 })
    // the reason is in a debug line, never a token
    expect(g.logs.join('')).toMatch(/"reason":"algorithm".*authentication refused/)
    expect(g.logs.join('')).not.toContain(cases[0]![1])
  })

  it('a controllerId claim without the control scope is never used; control without a controllerId is dropped; a static controllerId is refused', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const idp = await startIdp([k1])
    onTestFinished(idp.close)
    const { gw: g } = await startPair({ env: jwtEnv(idp) })
    const reader = await sign(k1, { scope: 'read', oo_controller_id: 'ctl-jwt' })
    await eventually(async () => (await get(g, reader)).status === 200, 5000, 'keys in use')
    expect((await call(`${g.url}${CONTROL}`, { method: 'POST', token: reader, body: {} })).status).toBe(403)
    const noId = await sign(k1, { scope: 'read control' })
    expect((await get(g, noId)).status).toBe(200)
    expect((await call(`${g.url}${CONTROL}`, { method: 'POST', token: noId, body: {} })).status).toBe(403)
    // the static controller passes authentication on the same route
    expect([401, 403]).not.toContain((await call(`${g.url}${CONTROL}`, { method: 'POST', token: g.tokens.controller, body: {} })).status)
    // a JWT may not take the controller id of a static caller (ctl-1): 401, whatever its scopes
    const impostor = await sign(k1, { scope: 'read control', oo_controller_id: 'ctl-1' })
    expect((await get(g, impostor)).status).toBe(401)
    const withId = await sign(k1, { scope: 'read control', oo_controller_id: 'ctl-jwt' })
    expect([401, 403]).not.toContain((await call(`${g.url}${CONTROL}`, { method: 'POST', token: withId, body: {} })).status)
    expect(await refusals(g)).toMatchObject({ controller_conflict: 1 })
  })

  // What the window means is counted, not raced: a flood is sent inside a window far longer than
  // any test run, so "no fetch within the window" is an exact count whatever the machine's load
  // (with a one-second window, 200 verifications on a loaded machine outlasted it, and the fetch
  // the rule then allows was counted as a failure); a rotation and a kid past the window are single
  // steps, each after waiting out a short window, so each fetches exactly once.
  it('an unknown kid fetches the JWKS once the window has passed (rotation): once for a burst naming a new key, once for an unknown kid', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const idp = await startIdp([k1])
    onTestFinished(idp.close)
    const { gw: g } = await startPair({ env: jwtEnv(idp) })
    await eventually(async () => (await get(g, await sign(k1))).status === 200, 5000, 'keys in use')
    expect(idp.fetches()).toBe(1)

    // the IdP adds a key; past the window (1000 ms from the fetch at start, which began before the
    // keys were in use), ten requests naming it at once share one fetch and are served
    const k2 = await testKey('k2', 'ES256')
    idp.keys.push(k2)
    await new Promise((r) => setTimeout(r, 1100))
    const k2Token = await sign(k2)
    const rotated = await Promise.all(Array.from({ length: 10 }, async () => (await get(g, k2Token)).status))
    expect(rotated).toEqual(Array(10).fill(200))
    expect(idp.fetches()).toBe(2)

    // past the window again, a kid nobody has fetches once more, and is refused
    await new Promise((r) => setTimeout(r, 1100))
    expect((await get(g, await sign(k1, {}, { kid: randomBytes(8).toString('hex') }))).status).toBe(401)
    expect(idp.fetches()).toBe(3)
    expect((await refusals(g)).unknown_kid).toBe(1)
    expect((await get(g, await sign(k1))).status).toBe(200)
    expect(idp.fetches()).toBe(3)
  })

  it('a flood of random kids within the window fetches nothing: every one refused unknown_kid, the keys held still served', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const idp = await startIdp([k1])
    onTestFinished(idp.close)
    const randomKid = async (): Promise<string> => await sign(k1, {}, { kid: randomBytes(8).toString('hex') })
    const floodTokens = await Promise.all(Array.from({ length: 250 }, randomKid))
    // a window of ten minutes from the fetch at start: the whole test runs inside it
    const { gw: g } = await startPair({ env: { ...jwtEnv(idp), GATEWAY_JWT_JWKS_MIN_REFRESH_MS: '600000' } })
    await eventually(async () => (await get(g, await sign(k1))).status === 200, 5000, 'keys in use')
    expect(idp.fetches()).toBe(1)

    // in two bursts, each sent at once
    const flood = [
      ...await Promise.all(floodTokens.slice(0, 200).map(async (t) => (await get(g, t)).status)),
      ...await Promise.all(floodTokens.slice(200).map(async (t) => (await get(g, t)).status))
    ]
    expect(flood).toEqual(Array(250).fill(401))
    console.log(`jwt-callers: 250 unknown kids within one window → ${idp.fetches() - 1} JWKS fetch(es)`)
    expect(idp.fetches()).toBe(1)
    expect((await refusals(g)).unknown_kid).toBe(250)
    expect((await get(g, await sign(k1))).status).toBe(200)
  })

  it('keys unreachable at start are not fatal: JWTs are refused (no_keys) until the JWKS answers, and /readyz says so without going unready', async ({ startPair }) => {
    const k1 = await testKey('k1')
    let up = false
    const idp = await serve((_req, res) => {
      if (!up) { res.writeHead(503).end(); return }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [k1.jwk] }))
    })
    const { gw: g } = await startPair({ env: { ...jwtEnv({ url: `${idp.origin}/jwks` }), GATEWAY_JWT_JWKS_MIN_REFRESH_MS: '300' } })
    await waitFor(() => g.logs.some((l) => l.includes('JWKS fetch from GATEWAY_JWT_JWKS_URL failed')) ? true : undefined, 5000, 'the failed fetch')
    expect((await get(g, await sign(k1))).status).toBe(401)
    expect((await get(g, g.tokens.reader)).status).toBe(200)
    expect(await refusals(g)).toMatchObject({ no_keys: 1 })
    const before = await call(`${g.url}/readyz`)
    expect(before.status).toBe(200)
    expect(before.body.checks.jwtKeys).toBe(false)

    up = true
    await new Promise((r) => setTimeout(r, 350))
    expect((await get(g, await sign(k1))).status).toBe(200)
    const after = await call(`${g.url}/readyz`)
    expect(after.body.checks.jwtKeys).toBe(true)
  })
})

/** a loopback server answering each request with `answer`, closed when the test finishes */
async function serve (answer: (req: IncomingMessage, res: ServerResponse) => void, tls?: { cert: string; key: string }): Promise<{ origin: string; hits: string[] }> {
  const hits: string[] = []
  const handler = (req: IncomingMessage, res: ServerResponse): void => { hits.push(req.url ?? ''); answer(req, res) }
  const server = tls === undefined ? createHttpServer(handler) : createHttpsServer(tls, handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
  return { origin: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}

describe('the JWKS fetch keeps the outbound bounds', () => {
  it('verified TLS (UPSTREAM_CA_FILE added to the roots); an unknown CA, a redirect or a body past 1 MiB is a failed fetch', async ({ startPair }) => {
    const k1 = await testKey('k1')
    const jwks = JSON.stringify({ keys: [k1.jwk] })
    const token = await sign(k1)
    const env = (url: string, extra: Record<string, string> = {}): Record<string, string> => ({ GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_URL: url, GATEWAY_JWT_JWKS_MIN_REFRESH_MS: '100000', ...extra })
    const failed = async (g: TestGateway): Promise<void> => {
      await waitFor(() => g.logs.some((l) => l.includes('JWKS fetch from GATEWAY_JWT_JWKS_URL failed')) ? true : undefined, 8000, 'the failed fetch')
      expect((await get(g, token)).status).toBe(401)
    }

    const trusted = await serve((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(jwks) }, trustedServer)
    const ok = (await startPair({ env: env(`${trusted.origin}/jwks`, { UPSTREAM_CA_FILE: TRUSTED_CA_FILE }) })).gw
    await eventually(async () => (await get(ok, token)).status === 200, 5000, 'keys over verified TLS')

    const unknown = await serve((_req, res) => { res.writeHead(200).end(jwks) }, unknownServer)
    await failed((await startPair({ env: env(`${unknown.origin}/jwks`, { UPSTREAM_CA_FILE: TRUSTED_CA_FILE }) })).gw)

    const target = await serve((_req, res) => { res.writeHead(200).end(jwks) })
    const redirect = await serve((_req, res) => { res.writeHead(302, { location: `${target.origin}/jwks` }).end() })
    await failed((await startPair({ env: env(`${redirect.origin}/jwks`) })).gw)
    expect(target.hits).toEqual([])

    const huge = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ keys: [k1.jwk], pad: 'x'.repeat(1024 * 1024) }))
    })
    await failed((await startPair({ env: env(`${huge.origin}/jwks`) })).gw)
    const chunked = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write(`{"keys":[${JSON.stringify(k1.jwk)}],"pad":"`)
      for (let i = 0; i < 17; i++) res.write('x'.repeat(64 * 1024))
      res.end('"}')
    })
    await failed((await startPair({ env: env(`${chunked.origin}/jwks`) })).gw)
  })
})

describe('JWT callers from a JWKS file', () => {
  it('the file is read at start and re-read when it changes (rotation without restart); a bad new file keeps the keys', async ({ startPair }) => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-jwks-'))
    const file = join(dir, 'jwks.json')
    const k1 = await testKey('k1')
    const k2 = await testKey('k2', 'ES256')
    writeFileSync(file, JSON.stringify({ keys: [k1.jwk] }))
    const { gw: g } = await startPair({ env: { GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_FILE: file } })
    expect((await get(g, await sign(k1))).status).toBe(200)
    expect((await get(g, await sign(k2))).status).toBe(401)
    // re-read off the event loop once the change held still for a poll (docs/design.md#operator-files)
    const logged = async (line: string): Promise<void> => { await eventually(async () => g.logs.some((l) => l.includes(line)), 5000, line) }
    writeFileSync(`${file}.tmp`, JSON.stringify({ keys: [k1.jwk, k2.jwk] }))
    renameSync(`${file}.tmp`, file)
    await logged('GATEWAY_JWT_JWKS_FILE reloaded')
    expect((await get(g, await sign(k2))).status).toBe(200)
    writeFileSync(`${file}.tmp`, '{"keys": "nope"}')
    renameSync(`${file}.tmp`, file)
    await logged('GATEWAY_JWT_JWKS_FILE was not reloaded')
    expect((await get(g, await sign(k2))).status).toBe(200)
    expect(g.logs.join('')).toContain('GATEWAY_JWT_JWKS_FILE was not reloaded')
    // a key file always holds keys: the bad one kept the last good set
    expect((await call(`${g.url}/readyz`)).body.checks.jwtKeys).toBe(true)
  })
})
