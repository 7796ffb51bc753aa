// The operator's trusted card-signing keys (docs/design.md#signed-cards): a JWKS of public keys
// read from GATEWAY_CARD_JWKS_FILE, checked whole before it is used — at start (a bad file stops
// the process) and at each refresh when the file changed (a bad file keeps the keys in use and
// says why). Only asymmetric public keys: no secret (`oct`) key, no private key material, each
// with a unique `kid`.
import { createPublicKey, type JsonWebKeyInput } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileStamp } from '../file-stamp.js'
import type { JSONWebKeySet } from 'jose'

/**
 * the JWS algorithms a public key may verify — card signatures and GATEWAY_JWT_ALGORITHMS alike:
 * never `none`, never HMAC (a trusted key is public, so a shared-secret algorithm could be
 * forged with it)
 */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const
const KEY_TYPES = new Set(['RSA', 'EC', 'OKP'])

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** the JWKS, or every problem with it (never key material) */
export function parseJwks (text: string): { jwks: JSONWebKeySet } | { problems: string[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problems: ['not valid JSON'] }
  }
  if (!isRecord(json) || !Array.isArray(json.keys) || json.keys.length === 0) return { problems: ['must be a JWKS: an object whose "keys" is a non-empty array'] }
  const problems: string[] = []
  const kids = new Set<string>()
  json.keys.forEach((k: unknown, i: number) => {
    const at = `keys[${i}]`
    if (!isRecord(k)) return problems.push(`${at}: not an object`)
    if (typeof k.kid !== 'string' || k.kid === '') problems.push(`${at}: needs a "kid" (a card's signature names its key by kid)`)
    else if (kids.has(k.kid)) problems.push(`${at}: kid "${k.kid}" is used twice`)
    else kids.add(k.kid)
    if (typeof k.kty !== 'string' || !KEY_TYPES.has(k.kty)) return problems.push(`${at}: kty must be RSA, EC or OKP (public keys; never a shared secret)`)
    if (PRIVATE_MEMBERS.some((m) => m in k)) return problems.push(`${at}: holds private key material; give the public key only`)
    try {
      createPublicKey({ key: k, format: 'jwk' } as JsonWebKeyInput)
    } catch {
      problems.push(`${at}: not a usable ${k.kty} public key`)
    }
  })
  return problems.length > 0 ? { problems } : { jwks: json as unknown as JSONWebKeySet }
}

export interface TrustedKeys {
  /** the keys in use; re-read first when the file changed since the last call */
  current: () => JSONWebKeySet
}

/**
 * keys from a file checked at start: re-read on change (rotation without a restart); a refused
 * re-read is told to `onRefused`, named by the variable that gave the path
 */
export function trustedKeysFromFile (variable: string, path: string, initial: JSONWebKeySet, onRefused: (problem: string) => void): TrustedKeys {
  let keys = initial
  let stamp = fileStamp(path)
  return {
    current: () => {
      const now = fileStamp(path)
      if (now !== stamp) {
        stamp = now
        let parsed: ReturnType<typeof parseJwks>
        try {
          parsed = parseJwks(readFileSync(path, 'utf8'))
        } catch {
          parsed = { problems: ['cannot be read'] }
        }
        if ('jwks' in parsed) keys = parsed.jwks
        else onRefused(`${variable}: ${parsed.problems.join('; ')}; the previous keys stay in use`)
      }
      return keys
    }
  }
}
