// Signed agent cards (docs/design.md#signed-cards, A2A v1.0 §8.4). A signature is a JWS with a
// detached payload: one of the card's canonical forms (card-canonical.ts — §8.4.1's ProtoJSON
// form, the one @a2a-js/sdk computes, or the whole card; each without `signatures`). Its protected
// header names `alg`, `kid` and `typ: JOSE`; the key comes from the operator's JWKS by kid, never
// from the card (`jku`, `jwk` and `x5u` are not followed), and only asymmetric algorithms are
// accepted. A verified card is read in the form its verifying signature covers (`signedForm`).
import { base64url, createLocalJWKSet, decodeProtectedHeader, errors, flattenedVerify, type JSONWebKeySet } from 'jose'
import { cardPayload, coveredCard, type CardForm } from './card-canonical.js'
import { ASYMMETRIC_ALGORITHMS } from '../core/trusted-keys.js'

export type SignatureReport =
  | { state: 'absent'; reason: string }
  | { state: 'present'; count: number; reason: string }
  | { state: 'verified'; keyId: string; algorithm: string; reason: string; form: CardForm }
  | { state: 'failed'; reason: string }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The card as a signature in `form` covers it (docs/design.md#signed-cards), its `signatures`
 * kept. A verified card is read in this form, so that nothing its signature does not cover — a
 * member added after signing, or one outside the form — changes what it says.
 */
export function signedForm (card: Record<string, unknown>, form: CardForm): Record<string, unknown> {
  const covered = coveredCard(card, form)
  return card.signatures === undefined ? covered : { ...covered, signatures: card.signatures }
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
  // the widest form first: a signature that covers the whole card is read as the whole card
  const payloads: Array<{ form: CardForm; payload: string }> = []
  try {
    for (const form of ['whole', 'proto', 'sdk'] as const) {
      const payload = base64url.encode(cardPayload(card, form))
      if (!payloads.some((p) => p.payload === payload)) payloads.push({ form, payload })
    }
  } catch {
    return { state: 'failed', reason: 'the card cannot be put in canonical form' }
  }
  const keys = createLocalJWKSet(jwks)
  // each signature's reason it did not verify, or the header it is checked with
  const checked: Array<{ at: string; why?: string; s?: { protected: string; signature: string }; kid?: string; alg?: string }> = []
  for (const [i, s] of sigs.entries()) {
    const at = `signature ${i + 1}`
    if (!isRecord(s) || typeof s.protected !== 'string' || typeof s.signature !== 'string') {
      checked.push({ at, why: 'not a JWS (protected and signature)' })
      continue
    }
    let header: ReturnType<typeof decodeProtectedHeader>
    try {
      header = decodeProtectedHeader({ protected: s.protected })
    } catch {
      checked.push({ at, why: 'its protected header is not base64url JSON' })
      continue
    }
    if (typeof header.kid !== 'string' || typeof header.alg !== 'string') checked.push({ at, why: 'its protected header lacks kid or alg' })
    else if (header.typ !== 'JOSE') checked.push({ at, why: 'typ is not JOSE' })
    else checked.push({ at, s: { protected: s.protected, signature: s.signature }, kid: header.kid, alg: header.alg })
  }
  // the widest form first, over every signature: a card signed over its whole form is read whole
  for (const { form, payload } of payloads) {
    for (const c of checked) {
      if (c.s === undefined) continue
      try {
        // the unprotected header is not passed: nothing in it is signed, so nothing of it is used
        await flattenedVerify({ payload, ...c.s }, keys, { algorithms: [...ASYMMETRIC_ALGORITHMS] })
        return { state: 'verified', keyId: c.kid!, algorithm: c.alg!, form, reason: `${c.at} verified with trusted key ${c.kid!} (${c.alg!})` }
      } catch (err) {
        c.why = failure(err, c.kid!, c.alg!)
        // a key, algorithm or format refusal is the same for every form
        if (!(err instanceof errors.JWSSignatureVerificationFailed)) c.s = undefined
      }
    }
  }
  return { state: 'failed', reason: `no signature verified: ${checked.map((c) => `${c.at}: ${c.why ?? 'not checked'}`).join('; ')}` }
}

function failure (err: unknown, kid: string, alg: string): string {
  if (err instanceof errors.JOSEAlgNotAllowed) return `algorithm ${alg} is not accepted`
  if (err instanceof errors.JWKSNoMatchingKey) return `no trusted key has kid ${kid} for ${alg}`
  if (err instanceof errors.JWKSMultipleMatchingKeys) return `several trusted keys match kid ${kid}`
  if (err instanceof errors.JWSSignatureVerificationFailed) return `the signature does not match the card (key ${kid})`
  return 'the signature is malformed'
}
