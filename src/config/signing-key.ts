// The front door's card-signing key and public URL as configuration (docs/api.md#a2a-front-door):
// GATEWAY_CARD_SIGNING_KEY is one private JWK (kty EC, RSA or OKP, with `kid` and an asymmetric
// `alg`), checked at start with Node's own importer; its public half is what GET
// /a2a/.well-known/jwks.json publishes. The key proves itself before the gateway serves
// (docs/design.md#front-door): the public members it states are its private half's, it fits its
// `alg` (the curve, an RSA modulus of 2048 bits at least, as jose requires), and a test signature
// made with it verifies with its public half — a key that cannot sign stops the start rather than
// fail every card request. A signed card must name a URL the operator chose, never one taken
// from a request's Host header (anyone could then fetch a signed card naming their own host),
// so the key requires GATEWAY_PUBLIC_URL; in production, an unsigned card without it is warned of.
import { constants, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { ASYMMETRIC_ALGORITHMS } from '../core/trusted-keys.js'

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
  let key: KeyObject
  try {
    key = createPrivateKey({ key: jwk as never, format: 'jwk' })
  } catch {
    return 'the JWK is not a key Node can import'
  }
  const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as Record<string, unknown>
  const problem = keyProblem(jwk, jwk.alg, key, publicJwk)
  if (problem !== undefined) return problem
  return { kid: jwk.kid, alg: jwk.alg, privateJwk: jwk, publicJwk: { ...publicJwk, kid: jwk.kid, alg: jwk.alg, use: 'sig' } }
}

/** the public members each key type states beside its private ones */
const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'], RSA: ['n', 'e'] }
const EC_CURVE: Readonly<Record<string, string>> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }
const OKP_CURVES: Readonly<Record<string, readonly string[]>> = { EdDSA: ['Ed25519', 'Ed448'], Ed25519: ['Ed25519'] }

/** why the key cannot sign as `alg`, or undefined: its halves agree, it fits the algorithm, a test signature verifies */
function keyProblem (jwk: Record<string, unknown>, alg: string, key: KeyObject, derived: Record<string, unknown>): string | undefined {
  const members = PUBLIC_MEMBERS[String(derived.kty)] ?? []
  const halves = `the JWK's public half (${members.join(', ')}) is not the public key of its private half`
  // where Node derives the public key from the private one, the JWK's own members must be it
  if (members.some((m) => jwk[m] !== undefined && jwk[m] !== derived[m])) return `${halves}: the card would be published with a key that does not verify it`
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('sign'))) return 'the JWK\'s key_ops does not allow "sign"'
  const family = alg.slice(0, 2)
  if (family === 'ES' && (derived.kty !== 'EC' || derived.crv !== EC_CURVE[alg])) return `alg ${alg} signs with an EC ${EC_CURVE[alg]} key; this key is ${describe(derived)}`
  if ((family === 'RS' || family === 'PS') && (derived.kty !== 'RSA' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048)) return `alg ${alg} signs with an RSA key of 2048 bits at least; this key is ${describe(derived, key)}`
  if (OKP_CURVES[alg] !== undefined && (derived.kty !== 'OKP' || !OKP_CURVES[alg].includes(String(derived.crv)))) return `alg ${alg} signs with an OKP ${OKP_CURVES[alg].join(' or ')} key; this key is ${describe(derived)}`
  const hash = OKP_CURVES[alg] !== undefined ? null : `sha${alg.slice(2)}`
  const probe = Buffer.from('openoperator-gateway: the card signing key proves itself')
  const pss = family === 'PS' ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : {}
  try {
    // Node keeps the public members as written, without checking them against d: a signature tells
    const signature = sign(hash, probe, { key, ...pss })
    if (verify(hash, probe, { key: createPublicKey(key), ...pss }, signature)) return undefined
  } catch {
    return `the key cannot sign with ${alg}`
  }
  return `${halves}: a test signature made with it does not verify`
}

function describe (jwk: Record<string, unknown>, key?: KeyObject): string {
  if (jwk.kty === 'RSA') return `RSA of ${key?.asymmetricKeyDetails?.modulusLength ?? '?'} bits`
  return `${String(jwk.kty)} ${String(jwk.crv)}`
}

/** both variables checked together; problems and warnings are pushed in the configuration's words */
export function frontCardConfig (keyText: string | undefined, url: string | undefined, production: boolean, problems: string[], warnings: string[]): { signingKey: SigningKey | undefined; publicUrl: string | undefined } {
  if (production && url === undefined) warnings.push('GATEWAY_PUBLIC_URL is unset: the A2A card at /a2a/.well-known/agent-card.json names the URL each request reached it by (its Host header); set GATEWAY_PUBLIC_URL to the URL callers use')
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
