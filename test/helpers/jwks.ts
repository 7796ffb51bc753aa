// An identity provider for tests: signing keys generated in the test (jose) and their JWKS served
// on loopback (node:http; plain http to loopback is allowed outside production), with a count of
// fetches. `sign` issues a token with the given claims and header; `rotate` adds a key.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose'

export interface TestKey { kid: string; alg: string; privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK }

export async function testKey (kid: string, alg = 'RS256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = { ...await exportJWK(publicKey), kid, alg, use: 'sig' }
  return { kid, alg, privateKey, publicKey, jwk }
}

export const ISSUER = 'https://idp.test/realms/ml'
export const AUDIENCE = 'openoperator-gateway'

/** a signed token: iss, aud, iat and a 5-minute exp by default, then the given claims (undefined removes one) */
export async function sign (key: TestKey, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const payload: Record<string, unknown> = { iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, sub: 'team-a', scope: 'openid read', ...claims }
  for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k]
  return await new SignJWT(payload as JWTPayload).setProtectedHeader({ alg: key.alg, kid: key.kid, ...header }).sign(key.privateKey)
}

export interface TestIdp { url: string; keys: TestKey[]; fetches: () => number; close: () => Promise<void> }

export async function startIdp (keys: TestKey[]): Promise<TestIdp> {
  let fetches = 0
  const idp: TestIdp = { url: '', keys, fetches: () => fetches, close: async () => {} }
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks') { res.writeHead(404).end(); return }
    fetches++
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: idp.keys.map((k) => k.jwk) }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  idp.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`
  idp.close = async () => { await new Promise<void>((resolve) => server.close(() => { resolve() })) }
  return idp
}

/** polls an async condition until it holds (waitFor's is synchronous) */
export async function eventually (fn: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms
  while (!await fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
