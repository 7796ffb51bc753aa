// A caller's token as the gateway knows it (docs/design.md#authentication): only its SHA-256
// digest, and the lookup from a bearer `Authorization` value to the caller it belongs to — the
// token itself only as long as the connection that presented it lives (callerOfTokenOn). Plain
// functions, apart from the auth plugin that calls them per request, because the start path
// (the dev token's digest), the test helpers and the bench compute the same digests.
import { hash } from 'node:crypto'
import type { Caller } from '../../schemas/callers.js'

/**
 * one-shot `crypto.hash` (Node ≥ 20.12), run once per authenticated request: it makes no Hash
 * object per digest, as `createHash(…).update(…).digest()` does (what it saves:
 * BENCHMARKS.md#hot-path-choices)
 */
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

/** what a connection last authenticated as: the caller set it was found in, the Authorization value, the caller */
interface Remembered { index: CallerIndex; authorization: string; caller: Caller }
const REMEMBERED = Symbol('oogw.remembered-caller')
type Connection = object & { [REMEMBERED]?: Remembered }

/**
 * The static caller a connection last authenticated as, when `authorization` is the value it
 * presented then, within the same caller set; else undefined (docs/design.md#authentication). A
 * client sends the same Authorization value on every request of a keep-alive connection, so a
 * request that presents its connection's last value skips the bearer pattern that takes the token
 * out of it and the token's digest (what they cost: BENCHMARKS.md#hot-path-choices). The value is
 * compared with the last one found on this connection in time that depends on its own length
 * only (an ingress carries many callers' requests on one connection, so the last value may be
 * another caller's), and only within the same caller set: a reload that removes a caller is
 * obeyed at its next request. The caller's expiresAt is judged by the caller of this, every time.
 */
export function rememberedCaller (connection: object, callers: CallerIndex, authorization: string): Caller | undefined {
  const last = (connection as Connection)[REMEMBERED]
  return last !== undefined && last.index === callers && sameText(authorization, last.authorization) ? last.caller : undefined
}

/**
 * callerOfToken for the bearer token of `authorization`, remembered for the connection it came on
 * (rememberedCaller). Only a value whose token found a caller is remembered, on the connection
 * itself, for as long as it lives, as its parser's buffers hold the header anyway.
 */
export function callerOfTokenOn (connection: object, callers: CallerIndex, authorization: string, token: string): Caller | null {
  const conn = connection as Connection
  const found = callerOfToken(callers, token)
  if (found === null) return null
  // the object is changed, not replaced: a socket lives long, so what it points at is promoted
  // into the old generation; a new object for each change of caller would be garbage there
  const last = conn[REMEMBERED]
  if (last === undefined) conn[REMEMBERED] = { index: callers, authorization, caller: found }
  else {
    last.index = callers
    last.authorization = authorization
    last.caller = found
  }
  return found
}

/**
 * Whether `presented` equals `known`, in time that depends on `presented`'s length only: every
 * character is compared, none ends the loop early. `charCodeAt` past `known`'s end is NaN, which
 * `^` reads as 0, so a longer presented string still differs (and its length already did).
 */
export function sameText (presented: string, known: string): boolean {
  let diff = presented.length ^ known.length
  for (let i = 0; i < presented.length; i++) diff |= presented.charCodeAt(i) ^ known.charCodeAt(i)
  return diff === 0
}

export function findCaller (callers: CallerIndex, authorization: string | undefined): Caller | null {
  const token = bearerToken(authorization)
  return token === undefined ? null : callerOfToken(callers, token)
}
