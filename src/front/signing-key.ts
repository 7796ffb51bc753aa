// The front door's card-signing key and public URL as configuration (docs/api.md#a2a-front-door):
// GATEWAY_CARD_SIGNING_KEY is one private JWK (kty EC, RSA or OKP, with `kid` and an asymmetric
// `alg`), checked at start with Node's own importer; its public half is what GET
// /a2a/.well-known/jwks.json publishes. A signed card must name a URL the operator chose,
// never one taken from a request's Host header (anyone could then fetch a signed card naming
// their own host), so the key requires GATEWAY_PUBLIC_URL.
import { createPrivateKey, createPublicKey } from 'node:crypto'
import { ASYMMETRIC_ALGORITHMS } from '../discovery/trusted-keys.js'

export interface SigningKey {
  kid: string
  alg: string
  /** the private JWK as given */
  privateJwk: Record<string, unknown>
  /** its public half, with kid, alg and use, as the JWKS route publishes it */
  publicJwk: Record<string, unknown>
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function parseSigningKey (text: string): SigningKey | string {
  let jwk: unknown
  try {
    jwk = JSON.parse(text)
  } catch {
    return 'must be a private JWK as JSON'
  }
  if (!isRecord(jwk)) return 'must be a private JWK as JSON'
  if (typeof jwk.kid !== 'string' || jwk.kid === '') return 'the JWK must have a kid'
  if (typeof jwk.alg !== 'string' || !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(jwk.alg)) return `the JWK's alg must be one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`
  if (jwk.d === undefined) return 'the JWK must be a private key (it has no d)'
  let publicJwk: Record<string, unknown>
  try {
    publicJwk = createPublicKey(createPrivateKey({ key: jwk as never, format: 'jwk' })).export({ format: 'jwk' }) as Record<string, unknown>
  } catch {
    return 'the JWK is not a key Node can import'
  }
  return { kid: jwk.kid, alg: jwk.alg, privateJwk: jwk, publicJwk: { ...publicJwk, kid: jwk.kid, alg: jwk.alg, use: 'sig' } }
}

/** both variables checked together; problems are pushed in the configuration's words */
export function frontCardConfig (keyText: string | undefined, url: string | undefined, problems: string[]): { signingKey: SigningKey | undefined; publicUrl: string | undefined } {
  let publicUrl: string | undefined
  if (url !== undefined) {
    let u: URL | undefined
    try { u = new URL(url) } catch { u = undefined }
    if (u === undefined || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '') {
      problems.push('GATEWAY_PUBLIC_URL: must be an http(s) URL without credentials, query or fragment')
    } else publicUrl = u.origin + u.pathname.replace(/\/+$/, '')
  }
  if (keyText === undefined) return { signingKey: undefined, publicUrl }
  const parsed = parseSigningKey(keyText)
  if (typeof parsed === 'string') {
    problems.push(`GATEWAY_CARD_SIGNING_KEY: ${parsed}`)
    return { signingKey: undefined, publicUrl }
  }
  if (url === undefined) problems.push('GATEWAY_CARD_SIGNING_KEY: requires GATEWAY_PUBLIC_URL (a signed card names the URL the operator chose, never a request\'s Host)')
  return { signingKey: parsed, publicUrl }
}
