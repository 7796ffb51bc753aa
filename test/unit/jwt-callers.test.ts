// The JWT callers' configuration and rules (docs/design.md#authentication): what
// GATEWAY_JWT_* accepts and refuses at load, every problem at once; what looks like a JWT (else
// the static lookup alone); how a verified payload becomes a caller under the claim mapping; the
// static callers' expiresAt and reserved names.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/index.js'
import { callerOf, looksLikeJwt } from '../../src/callers/jwt.js'
import { JwtClaimsSchema } from '../../schemas/callers.js'
import { parseCallers } from '../../src/config/callers.js'
import { problems } from '../helpers/config-problems.js'

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
const JWKS = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', kid: 'k1', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] })
const FILE_BASE = { GATEWAY_JWT_ISSUER: 'https://idp.example', GATEWAY_JWT_AUDIENCE: 'gw' }
const BASE = { ...FILE_BASE, GATEWAY_JWT_JWKS_URL: 'https://idp.example/jwks' }

describe('GATEWAY_JWT_* configuration', () => {
  it('unset: no JWT callers; set: defaults for algorithms, leeway, claims and the refresh window', () => {
    expect(loadConfig({}).jwt).toBeUndefined()
    expect(loadConfig(BASE).jwt).toEqual({
      issuer: 'https://idp.example',
      audience: 'gw',
      algorithms: ['RS256', 'ES256'],
      leewaySeconds: 30,
      claims: { name: 'sub', scopes: 'scope', controllerId: 'oo_controller_id' },
      jwks: { url: 'https://idp.example/jwks', minRefreshMs: 30_000 }
    })
    const file = loadConfig({ ...FILE_BASE, GATEWAY_JWT_JWKS_FILE: '/keys.json', GATEWAY_JWT_CLAIMS: '{"name":"azp","scopes":"roles"}' }, { readFile: () => JWKS }).jwt
    expect(file?.jwks).toMatchObject({ file: '/keys.json' })
    expect(file?.claims).toEqual({ name: 'azp', scopes: 'roles', controllerId: 'oo_controller_id' })
  })

  it('refuses HMAC, none and unknown algorithms, a missing issuer/audience/key source, bad claims and leeway, every problem at once', () => {
    expect(problems({ GATEWAY_JWT_JWKS_URL: 'https://idp.example/jwks', GATEWAY_JWT_ALGORITHMS: 'RS256,HS256,none,XX1', GATEWAY_JWT_LEEWAY_SECONDS: '301', GATEWAY_JWT_CLAIMS: '{"name":"sub","group":"g"}' })).toEqual([
      'GATEWAY_JWT_LEEWAY_SECONDS: must be a whole number from 0 to 300',
      'GATEWAY_JWT_ISSUER: required when JWT callers are configured',
      'GATEWAY_JWT_AUDIENCE: required when JWT callers are configured',
      'GATEWAY_JWT_ALGORITHMS: HS256 is refused (HMAC: a shared secret, and the key confusion of verifying one with a public key)',
      'GATEWAY_JWT_ALGORITHMS: none is refused (an unsigned token)',
      expect.stringMatching(/^GATEWAY_JWT_ALGORITHMS: XX1 is not one of RS256/),
      'GATEWAY_JWT_CLAIMS.group: unknown field'
    ])
    expect(problems({ ...BASE, GATEWAY_JWT_CLAIMS: 'not json' })).toEqual(['GATEWAY_JWT_CLAIMS: not valid JSON'])
    expect(problems({ ...BASE, GATEWAY_JWT_JWKS_FILE: '/k.json' }, { '/k.json': JWKS })).toEqual([expect.stringMatching(/^GATEWAY_JWT_JWKS_URL, GATEWAY_JWT_JWKS_FILE: set exactly one/)])
    expect(problems({ GATEWAY_JWT_ISSUER: 'i', GATEWAY_JWT_AUDIENCE: 'a' })).toEqual([expect.stringMatching(/set exactly one/)])
  })

  it('the JWKS URL follows OPENOPERATOR_URL\'s rules: https, plain http to loopback only outside production', () => {
    expect(problems({ ...BASE, GATEWAY_JWT_JWKS_URL: 'http://idp.example/jwks' })).toEqual([expect.stringMatching(/^GATEWAY_JWT_JWKS_URL must be https:\/\//)])
    expect(loadConfig({ ...BASE, GATEWAY_JWT_JWKS_URL: 'http://127.0.0.1:9000/jwks' }).jwt?.jwks).toMatchObject({ url: 'http://127.0.0.1:9000/jwks' })
    expect(problems({ ...BASE, NODE_ENV: 'production', GATEWAY_JWT_JWKS_URL: 'http://127.0.0.1:9000/jwks' })).toContainEqual(expect.stringMatching(/^GATEWAY_JWT_JWKS_URL must be https:\/\//))
    expect(problems({ ...BASE, GATEWAY_JWT_JWKS_URL: 'https://user:pw@idp.example/jwks' })).toEqual(['GATEWAY_JWT_JWKS_URL must not contain userinfo'])
  })

  it('a JWKS file is checked at start: a secret or private key stops it', () => {
    const secret = JSON.stringify({ keys: [{ kty: 'oct', kid: 's', k: 'c2VjcmV0' }] })
    expect(problems({ ...FILE_BASE, GATEWAY_JWT_JWKS_FILE: '/k.json' }, { '/k.json': secret })).toEqual([expect.stringMatching(/^GATEWAY_JWT_JWKS_FILE: keys\[0\]: kty must be RSA, EC or OKP/)])
    expect(problems({ ...FILE_BASE, GATEWAY_JWT_JWKS_FILE: '/missing.json' })).toEqual(['GATEWAY_JWT_JWKS_FILE: cannot be read'])
  })

  // docs/design.md#production: "the callers" are static callers, JWT callers, or both
  it('in production JWT callers alone are the callers; with neither, the start is refused, naming both', () => {
    const prod = { NODE_ENV: 'production', OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 'a-random-upstream-secret-0123456789', GATEWAY_LEDGER_URL: 'sqlite:/data/l.db' }
    const jwtOnly = loadConfig({ ...prod, ...BASE })
    expect(jwtOnly.callers).toBeUndefined()
    expect(jwtOnly.jwt?.issuer).toBe('https://idp.example')
    expect(loadConfig({ ...prod, ...FILE_BASE, GATEWAY_JWT_JWKS_FILE: '/keys.json' }, { readFile: () => JWKS }).jwt?.jwks).toMatchObject({ file: '/keys.json' })
    expect(problems({ ...prod, ...BASE, GATEWAY_CALLERS: JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['admin'] }]) })).toEqual([])
    expect(problems(prod)).toEqual(['GATEWAY_CALLERS (or GATEWAY_CALLERS_FILE), or JWT callers (GATEWAY_JWT_*): required when NODE_ENV=production'])
    // JWT callers half configured are no callers: their own problems are named, and the callers' too
    expect(problems({ ...prod, GATEWAY_JWT_ISSUER: 'https://idp.example' })).toEqual([
      'GATEWAY_JWT_AUDIENCE: required when JWT callers are configured',
      expect.stringMatching(/^GATEWAY_JWT_JWKS_URL, GATEWAY_JWT_JWKS_FILE: set exactly one/),
      'GATEWAY_CALLERS (or GATEWAY_CALLERS_FILE), or JWT callers (GATEWAY_JWT_*): required when NODE_ENV=production'
    ])
  })
})

describe('what looks like a JWT', () => {
  it('three base64url segments whose header is a JSON object; anything else is a static token', () => {
    const head = b64({ alg: 'RS256' })
    expect(looksLikeJwt(`${head}.${b64({ sub: 'x' })}.c2ln`)).toBe(true)
    expect(looksLikeJwt(`${head}.${b64({})}.`)).toBe(true)
    for (const t of ['tok-abc', 'a.b', `${head}.x.y.z`, `${b64('[1]')}.eA.eA`, `${b64('not json')}.eA.eA`, `${head}.e+A.eA`, `.${head}.eA`]) expect(looksLikeJwt(t), t).toBe(false)
  })
})

describe('a verified payload as a caller', () => {
  const claims = JwtClaimsSchema.parse({})
  const none = new Set<string>()
  const iss = 'https://idp.test/realms/ml'
  it('named jwt:<sub>; only the gateway\'s scopes, from a space-separated scope or an array', () => {
    expect(callerOf({ sub: 'team-a', scope: 'openid read admin profile' }, claims, 't', none)).toEqual({ caller: expect.objectContaining({ name: 'jwt:team-a', scopes: ['read', 'admin'] }) })
    const roles = JwtClaimsSchema.parse({ scopes: 'roles' })
    expect(callerOf({ sub: 'b', roles: ['read', 'Admin', 7, 'read'] }, roles, 't', none)).toEqual({ caller: expect.objectContaining({ scopes: ['read'] }) })
    expect(callerOf({ scope: 'read' }, claims, 't', none)).toMatchObject({ reason: 'claims' })
    expect(callerOf({ sub: 'x'.repeat(125), scope: 'read' }, claims, 't', none)).toMatchObject({ reason: 'claims' })
  })

  it('control needs a controllerId claim; a controllerId without control is never used; a static caller\'s is refused', () => {
    const a = callerOf({ iss, sub: 'a', scope: 'read control' }, claims, 't', none)
    expect(a).toEqual({ caller: expect.objectContaining({ scopes: ['read'] }) })
    expect('caller' in a && a.caller.controllerId).toBeUndefined()
    const b = callerOf({ iss, sub: 'b', scope: 'read', oo_controller_id: 'ctl-b' }, claims, 't', none)
    expect('caller' in b && b.caller.controllerId).toBeUndefined()
    expect(callerOf({ iss, sub: 'c', scope: 'control', oo_controller_id: 'ctl-c' }, claims, 't', none)).toEqual({ caller: expect.objectContaining({ scopes: ['control'], controllerId: 'ctl-c' }) })
    expect(callerOf({ iss, sub: 'd', scope: 'control', oo_controller_id: 'ctl-1' }, claims, 't', new Set(['ctl-1']))).toMatchObject({ reason: 'controller_conflict' })
  })

  // docs/design.md#controller-bindings
  it('its identity is the issuer and the subject, never the name claim; without a subject, control is dropped', () => {
    const named = JwtClaimsSchema.parse({ name: 'username' })
    const one = callerOf({ iss, sub: 'u-1', username: 'ml', scope: 'read control', oo_controller_id: 'ctl-x' }, named, 't', none)
    const two = callerOf({ iss, sub: 'u-2', username: 'ml', scope: 'read control', oo_controller_id: 'ctl-x' }, named, 't', none)
    expect(one).toEqual({ caller: expect.objectContaining({ name: 'jwt:ml', identity: `jwt:${iss}#u-1`, controllerId: 'ctl-x' }) })
    expect(two).toEqual({ caller: expect.objectContaining({ name: 'jwt:ml', identity: `jwt:${iss}#u-2` }) })
    const noSub = callerOf({ iss, username: 'ml', scope: 'read control', oo_controller_id: 'ctl-x' }, named, 't', none)
    expect(noSub).toEqual({ caller: expect.objectContaining({ name: 'jwt:ml', scopes: ['read'] }) })
    expect('caller' in noSub && (noSub.caller.controllerId ?? noSub.caller.identity)).toBeUndefined()
    for (const sub of [7, '', 'x'.repeat(256), 'a\u202eb', 'a\u0000b']) expect(callerOf({ iss, sub: sub as string, username: 'ml', scope: 'read' }, named, 't', none), JSON.stringify(sub)).toMatchObject({ reason: 'claims' })
  })

  it('a controller id is ASCII [A-Za-z0-9][A-Za-z0-9._:-]{0,127}, else 401 claims; a static one in any letter case is a conflict', () => {
    const statics = new Set(['ctl-static'])
    const claimed = (id: unknown, scope = 'read control'): ReturnType<typeof callerOf> => callerOf({ iss, sub: 's', scope, oo_controller_id: id }, claims, 't', statics)
    for (const id of ['ctl-static ', ' ctl-static', 'ctl\u200b-static', '\uff43tl-static', 'ctl\u2013static', '-ctl', '', 'c'.repeat(129), 'ctl/x', 7, ['ctl-a']]) {
      expect(claimed(id), JSON.stringify(id)).toMatchObject({ reason: 'claims' })
    }
    for (const id of ['CTL-STATIC', 'Ctl-Static', 'ctl-static']) expect(claimed(id), id).toMatchObject({ reason: 'controller_conflict' })
    for (const id of ['a', 'Ctl.research_1:eu-west', 'c'.repeat(128)]) expect(claimed(id), id).toEqual({ caller: expect.objectContaining({ controllerId: id }) })
    // without control the claim is never used, so never judged
    expect(claimed('ctl-static ', 'read')).toEqual({ caller: expect.objectContaining({ scopes: ['read'] }) })
  })

  it('a name claim holding a control, format or bidirectional character: 401 claims', () => {
    for (const sub of ['a\u001b[2J', 'a\u202e', 'a\u200b', 'a\u2066b\u2069', 'a\u200e', 'a\u200f', 'a\u061c', 'a\u009b', 'a\ufeff', 'a\u2028', 'a\ud800']) {
      expect(callerOf({ iss, sub, scope: 'read' }, claims, 't', none), JSON.stringify(sub)).toMatchObject({ reason: 'claims' })
    }
    expect(callerOf({ iss, sub: 'équipe-α 1', scope: 'read' }, claims, 't', none)).toEqual({ caller: expect.objectContaining({ name: 'jwt:équipe-α 1' }) })
  })
})

describe('static callers', () => {
  const digest = 'a'.repeat(64)
  it('expiresAt is ISO 8601 with an offset, kept as ms since the epoch; a name may not start with jwt:', () => {
    expect(parseCallers(JSON.stringify([{ name: 'a', tokenSha256: digest, scopes: ['read'], expiresAt: '2027-01-31T00:00:00Z' }]))).toEqual({ callers: [expect.objectContaining({ expiresAt: Date.parse('2027-01-31T00:00:00Z') })] })
    expect(parseCallers(JSON.stringify([{ name: 'a', tokenSha256: digest, scopes: ['read'], expiresAt: 1801000000 }]))).toMatchObject({ problems: [expect.stringMatching(/^GATEWAY_CALLERS\[0\]\.expiresAt: /)] })
    expect(parseCallers(JSON.stringify([{ name: 'a', tokenSha256: digest, scopes: ['read'], expiresAt: '2027-01-31' }]))).toMatchObject({ problems: [expect.stringMatching(/expiresAt: must be an ISO 8601 date-time/)] })
    expect(parseCallers(JSON.stringify([{ name: 'jwt:a', tokenSha256: digest, scopes: ['read'] }]))).toMatchObject({ problems: [expect.stringMatching(/^GATEWAY_CALLERS\[0\]\.name: must not start with "jwt:"/)] })
  })

  // docs/design.md#controller-bindings
  it('controller ids are ASCII and unique letter case aside; names hold no control, format or bidirectional character; no identity field', () => {
    const ctl = (name: string, controllerId: string, i: number): object => ({ name, tokenSha256: String(i).repeat(64), scopes: ['control'], controllerId })
    for (const id of ['ctl 1', 'ctl\u200b1', '\uff43tl-1', '-ctl', 'c'.repeat(129)]) {
      expect(parseCallers(JSON.stringify([ctl('a', id, 1)])), JSON.stringify(id)).toEqual({ problems: [expect.stringMatching(/^GATEWAY_CALLERS\[0\]\.controllerId: must be 1–128 ASCII characters/)] })
    }
    expect(parseCallers(JSON.stringify([ctl('a', 'ctl-A', 1), ctl('b', 'CTL-a', 2)]))).toEqual({ problems: ['GATEWAY_CALLERS[1].controllerId: controllerId "CTL-a" is not unique (letter case aside)'] })
    for (const name of ['a\u001b[2J', 'a\u202e', 'a\u200b', 'a\u2069', 'a\u0085']) {
      expect(parseCallers(JSON.stringify([{ name, tokenSha256: digest, scopes: ['read'] }])), JSON.stringify(name)).toEqual({ problems: ['GATEWAY_CALLERS[0].name: must not hold control, format (zero-width, bidirectional) or line-separator characters'] })
    }
    // the identity is the authenticator's to set: a file cannot claim a JWT caller's
    expect(parseCallers(JSON.stringify([{ name: 'a', tokenSha256: digest, scopes: ['read'], identity: 'jwt:https://idp#x' }]))).toEqual({ problems: ['GATEWAY_CALLERS[0].identity: unknown field'] })
  })
})
