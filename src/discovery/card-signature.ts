// Signed agent cards (docs/design.md#signed-cards, A2A v1.0 §8.4). A signature is a JWS with a
// detached payload: the RFC 8785 canonical JSON of the card without `signatures`, members whose
// value is null, "", [] or {} left out (unset and default are one thing to a protobuf-defined
// card; the @a2a-js/sdk signs this form). Its protected header names `alg`, `kid` and
// `typ: JOSE`; the key comes from the operator's JWKS by kid, never from the card (`jku`, `jwk`
// and `x5u` are not followed), and only asymmetric algorithms are accepted. A verified card is
// read in the form its signatures cover (`signedForm`).
import canonicalize from 'canonicalize'
import { base64url, createLocalJWKSet, decodeProtectedHeader, errors, flattenedVerify, type JSONWebKeySet } from 'jose'
import { ASYMMETRIC_ALGORITHMS } from './trusted-keys.js'

export type SignatureReport =
  | { state: 'absent'; reason: string }
  | { state: 'present'; count: number; reason: string }
  | { state: 'verified'; keyId: string; algorithm: string; reason: string }
  | { state: 'failed'; reason: string }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function dropEmpty (v: unknown): unknown {
  if (v === null || v === '' || v === undefined) return undefined
  if (Array.isArray(v)) {
    const kept = v.map(dropEmpty).filter((x) => x !== undefined)
    return kept.length > 0 ? kept : undefined
  }
  if (isRecord(v)) {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const kept = dropEmpty(x)
      if (kept !== undefined) out[k] = kept
    }
    return Object.keys(out).length > 0 ? out : undefined
  }
  return v
}

/** the bytes a card's signatures sign */
export function canonicalCardPayload (card: Record<string, unknown>): string {
  const { signatures: _signatures, ...rest } = card
  return canonicalize(dropEmpty(rest) ?? {}) ?? '{}'
}

/**
 * The card as its signatures cover it (docs/design.md#signed-cards): without the members the
 * canonical form drops, its `signatures` kept. A verified card is read in this form, so that
 * nothing added after signing — an empty list, object or string, a null — changes what it says.
 */
export function signedForm (card: Record<string, unknown>): Record<string, unknown> {
  const { signatures, ...rest } = card
  const covered = (dropEmpty(rest) ?? {}) as Record<string, unknown>
  return signatures === undefined ? covered : { ...covered, signatures }
}

const signaturesOf = (card: Record<string, unknown>): unknown[] => Array.isArray(card.signatures) ? card.signatures : []

/** signatures reported, not trusted: no key is configured */
export function reportSignatures (card: Record<string, unknown>): SignatureReport {
  const n = signaturesOf(card).length
  return n === 0
    ? { state: 'absent', reason: 'the card carries no signature (none required: GATEWAY_CARD_JWKS_FILE is not set)' }
    : { state: 'present', count: n, reason: `the card carries ${n} signature(s), not verified: GATEWAY_CARD_JWKS_FILE is not set` }
}

/** verified when one signature verifies with a trusted key; otherwise why none did */
export async function verifyCard (card: Record<string, unknown>, jwks: JSONWebKeySet): Promise<SignatureReport> {
  const sigs = signaturesOf(card)
  if (sigs.length === 0) return { state: 'failed', reason: 'the card is unsigned and GATEWAY_CARD_JWKS_FILE requires a signature' }
  let payload: string
  try {
    payload = base64url.encode(canonicalCardPayload(card))
  } catch {
    return { state: 'failed', reason: 'the card cannot be put in canonical form' }
  }
  const keys = createLocalJWKSet(jwks)
  const why: string[] = []
  for (const [i, s] of sigs.entries()) {
    const at = `signature ${i + 1}`
    if (!isRecord(s) || typeof s.protected !== 'string' || typeof s.signature !== 'string') {
      why.push(`${at}: not a JWS (protected and signature)`)
      continue
    }
    let header: ReturnType<typeof decodeProtectedHeader>
    try {
      header = decodeProtectedHeader({ protected: s.protected })
    } catch {
      why.push(`${at}: its protected header is not base64url JSON`)
      continue
    }
    if (typeof header.kid !== 'string' || typeof header.alg !== 'string') {
      why.push(`${at}: its protected header lacks kid or alg`)
      continue
    }
    if (header.typ !== 'JOSE') {
      why.push(`${at}: typ is not JOSE`)
      continue
    }
    try {
      // the unprotected header is not passed: nothing in it is signed, so nothing of it is used
      await flattenedVerify({ payload, protected: s.protected, signature: s.signature }, keys, { algorithms: [...ASYMMETRIC_ALGORITHMS] })
      return { state: 'verified', keyId: header.kid, algorithm: header.alg, reason: `signature ${i + 1} verified with trusted key ${header.kid} (${header.alg})` }
    } catch (err) {
      why.push(`${at}: ${failure(err, header.kid, header.alg)}`)
    }
  }
  return { state: 'failed', reason: `no signature verified: ${why.join('; ')}` }
}

function failure (err: unknown, kid: string, alg: string): string {
  if (err instanceof errors.JOSEAlgNotAllowed) return `algorithm ${alg} is not accepted`
  if (err instanceof errors.JWKSNoMatchingKey) return `no trusted key has kid ${kid} for ${alg}`
  if (err instanceof errors.JWKSMultipleMatchingKeys) return `several trusted keys match kid ${kid}`
  if (err instanceof errors.JWSSignatureVerificationFailed) return `the signature does not match the card (key ${kid})`
  return 'the signature is malformed'
}
