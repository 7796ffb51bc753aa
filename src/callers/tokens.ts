// A caller's token as the gateway knows it (docs/design.md#authentication): only its SHA-256
// digest, and the lookup from a bearer `Authorization` value to the caller it belongs to. Plain
// functions, apart from the auth plugin that calls them per request, because the start path
// (the dev token's digest), the test helpers and the bench compute the same digests.
import { hash } from 'node:crypto'
import type { Caller } from '../../schemas/callers.js'

/** one-shot `crypto.hash` (Node ≥ 20.12): a third of `createHash(…).update(…).digest()`'s time, once per authenticated request */
export function sha256Hex (s: string): string {
  return hash('sha256', s, 'hex')
}

/**
 * The callers by the hex SHA-256 of their token. Looking a digest up in a Map is safe against
 * timing (docs/design.md#authentication): what the lookup's time depends on is the digest of the
 * token presented, which a guesser cannot steer towards a stored digest without a SHA-256
 * preimage, never the token itself; and the token is hashed whatever it is, so the time taken
 * does not tell a near guess from a far one.
 */
export type CallerIndex = ReadonlyMap<string, Caller>

export function indexCallers (callers: readonly Caller[]): CallerIndex {
  return new Map(callers.map((c) => [c.tokenSha256.toLowerCase(), c]))
}

/** a static token is 1–512 printable ASCII characters; a JWT (src/callers/jwt.ts) may be longer */
export const MAX_STATIC_TOKEN = 512
const BEARER = /^Bearer ([\x21-\x7e]{1,8192})$/i

/** the bearer token of an Authorization value, or undefined when it is not one */
export function bearerToken (authorization: string | undefined): string | undefined {
  return BEARER.exec(authorization ?? '')?.[1]
}

/** the static caller a token belongs to, whether or not it has expired (the caller judges expiresAt) */
export function callerOfToken (callers: CallerIndex, token: string): Caller | null {
  if (token.length > MAX_STATIC_TOKEN) return null
  return callers.get(sha256Hex(token)) ?? null
}

export function findCaller (callers: CallerIndex, authorization: string | undefined): Caller | null {
  const token = bearerToken(authorization)
  return token === undefined ? null : callerOfToken(callers, token)
}
