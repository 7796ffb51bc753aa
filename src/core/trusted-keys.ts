// The operator's trusted keys (docs/design.md#signed-cards): a JWKS of public keys read from
// GATEWAY_CARD_JWKS_FILE (card signatures) or GATEWAY_JWT_JWKS_FILE (JWT callers), checked whole
// before it is used — at start (a bad file stops the process) and when the file changed
// (src/core/operator-files.ts: off the event loop, capped at 1 MiB; a bad file keeps the keys in use
// and says why). Only asymmetric public keys: no secret (`oct`) key, no private key material,
// each with a unique `kid`.
import { createPublicKey, type JsonWebKeyInput } from 'node:crypto'
import type { JSONWebKeySet } from 'jose'
import { watchOperatorFile, type FileRefusal, type OperatorFile } from './operator-files.js'

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
  /** the keys in force */
  current: () => JSONWebKeySet
  close: () => void
}

export interface TrustedKeysOptions {
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
  /** a refused re-read, for gateway_operator_file_refusals_total */
  onRefused: (reason: FileRefusal) => void
  pollMs?: number
}

/** keys from a file checked at start, re-read once a change has held still for a poll: rotation without a restart */
export function trustedKeysFromFile (variable: Extract<OperatorFile, 'GATEWAY_CARD_JWKS_FILE' | 'GATEWAY_JWT_JWKS_FILE'>, path: string, initial: JSONWebKeySet, o: TrustedKeysOptions): TrustedKeys {
  const file = watchOperatorFile<JSONWebKeySet>({
    variable,
    path,
    initial,
    parse: (text) => {
      const parsed = parseJwks(text)
      return 'jwks' in parsed ? { value: parsed.jwks } : { problems: parsed.problems.map((p) => `${variable}: ${p}`) }
    },
    describe: (jwks) => ({ keys: jwks.keys.length }),
    ...o
  })
  return { current: file.current, close: file.close }
}
