// The deployment secret check of POST /a2a/: `Authorization: Bearer <secret>` or
// `X-API-KEY: <secret>`, whichever schemes are enabled. Compared in constant time; the
// refusal never says what was received.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { AuthScheme } from '../types.js'

export function isAuthorized (headers: IncomingHttpHeaders, secret: string | undefined, schemes: AuthScheme[]): boolean {
  if (secret === undefined) return true
  const candidates: string[] = []
  if (schemes.includes('bearer')) {
    const match = /^Bearer +(\S+) *$/i.exec(single(headers.authorization) ?? '')
    if (match?.[1] !== undefined) candidates.push(match[1])
  }
  if (schemes.includes('x-api-key')) {
    const key = single(headers['x-api-key'])
    if (key !== undefined) candidates.push(key)
  }
  return candidates.some((candidate) => sameSecret(candidate, secret))
}

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? undefined : value
}

// Hashing first gives equal-length inputs, so the comparison leaks neither content nor length.
function sameSecret (candidate: string, secret: string): boolean {
  const a = createHash('sha256').update(candidate).digest()
  const b = createHash('sha256').update(secret).digest()
  return timingSafeEqual(a, b)
}
