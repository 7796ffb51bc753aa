// Who may call (docs/design.md#authentication): the static callers of GATEWAY_CALLERS or
// GATEWAY_CALLERS_FILE, and the JWT callers' settings (GATEWAY_JWT_*), each problem named as
// the others. The callers' own modules (src/callers/) verify and re-read them at run time.
import { CallersDocumentSchema, CallersSchema, JwtClaimsSchema, type Caller, type Grants } from '../../schemas/callers.js'
import { READABLE, configLines } from '../core/validation.js'
import { ASYMMETRIC_ALGORITHMS } from '../core/trusted-keys.js'
import { parseOpenOperatorUrl } from '../core/upstream-url.js'
import type { Env, ParsedEnv } from './env.js'
import { jwksFile } from './jwks-file.js'
import type { JwtConfig } from './types.js'

/** what a callers text holds: the static callers, and the grants table of its object form */
export interface ParsedCallers { callers: Caller[]; identityGrants?: ReadonlyMap<string, Grants> }

/** the callers a text holds, or every problem with it (named like the start's) */
export function parseCallers (text: string, variable = 'GATEWAY_CALLERS'): ParsedCallers | { problems: string[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problems: [`${variable}: not valid JSON`] }
  }
  // each form its own schema, so a refusal names the member at fault rather than "no form matched"
  if (typeof json === 'object' && json !== null && !Array.isArray(json) && ('callers' in json || 'grants' in json)) {
    const d = CallersDocumentSchema.safeParse(json, READABLE)
    return d.success ? { callers: d.data.callers, identityGrants: new Map(Object.entries(d.data.grants ?? {})) } : { problems: configLines(d.error.issues, variable) }
  }
  const c = CallersSchema.safeParse(json, READABLE)
  return c.success ? { callers: c.data } : { problems: configLines(c.error.issues, variable) }
}

/**
 * the static callers from their text (GATEWAY_CALLERS, else the file's), the grants table keyed by
 * JWT identity it may hold (docs/design.md#grants), and the file's path when they came from it:
 * re-read on SIGHUP and on change
 */
export function staticCallers (env: Env, text: string | undefined, problems: string[]): { callers: Caller[] | undefined; identityGrants: ReadonlyMap<string, Grants> | undefined; callersFile: string | undefined } {
  let callers: Caller[] | undefined
  let identityGrants: ReadonlyMap<string, Grants> | undefined
  if (text !== undefined) {
    const c = parseCallers(text)
    if ('callers' in c) ({ callers, identityGrants } = c)
    else problems.push(...c.problems)
  }
  const callersFile = callers !== undefined && (env.GATEWAY_CALLERS === undefined || env.GATEWAY_CALLERS === '') ? env.GATEWAY_CALLERS_FILE : undefined
  return { callers, identityGrants, callersFile }
}

const JWT_VARIABLES = ['GATEWAY_JWT_ISSUER', 'GATEWAY_JWT_AUDIENCE', 'GATEWAY_JWT_JWKS_URL', 'GATEWAY_JWT_JWKS_FILE', 'GATEWAY_JWT_CLAIMS'] as const

/** the JWT callers' settings, or undefined when none is set; problems named as the others */
export function jwtConfig (e: ParsedEnv, production: boolean, problems: string[], read: (p: string) => string): JwtConfig | undefined {
  if (JWT_VARIABLES.every((v) => e[v] === undefined)) return undefined
  const before = problems.length
  if (e.GATEWAY_JWT_ISSUER === undefined) problems.push('GATEWAY_JWT_ISSUER: required when JWT callers are configured')
  if (e.GATEWAY_JWT_AUDIENCE === undefined) problems.push('GATEWAY_JWT_AUDIENCE: required when JWT callers are configured')
  const algorithms = e.GATEWAY_JWT_ALGORITHMS.split(',').map((a) => a.trim())
  for (const a of algorithms) {
    if (/^HS/i.test(a)) problems.push(`GATEWAY_JWT_ALGORITHMS: ${a} is refused (HMAC: a shared secret, and the key confusion of verifying one with a public key)`)
    else if (a.toLowerCase() === 'none') problems.push('GATEWAY_JWT_ALGORITHMS: none is refused (an unsigned token)')
    else if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a)) problems.push(`GATEWAY_JWT_ALGORITHMS: ${a === '' ? 'an empty entry' : a} is not one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`)
  }
  let claims = JwtClaimsSchema.parse({})
  if (e.GATEWAY_JWT_CLAIMS !== undefined) {
    let json: unknown
    try {
      json = JSON.parse(e.GATEWAY_JWT_CLAIMS)
    } catch {
      problems.push('GATEWAY_JWT_CLAIMS: not valid JSON')
    }
    if (json !== undefined) {
      const c = JwtClaimsSchema.safeParse(json, READABLE)
      if (c.success) claims = c.data
      else problems.push(...configLines(c.error.issues, 'GATEWAY_JWT_CLAIMS'))
    }
  }
  let jwks: JwtConfig['jwks'] | undefined
  if ((e.GATEWAY_JWT_JWKS_URL === undefined) === (e.GATEWAY_JWT_JWKS_FILE === undefined)) {
    problems.push('GATEWAY_JWT_JWKS_URL, GATEWAY_JWT_JWKS_FILE: set exactly one (where the identity provider\'s keys are)')
  } else if (e.GATEWAY_JWT_JWKS_URL !== undefined) {
    const u = parseOpenOperatorUrl(e.GATEWAY_JWT_JWKS_URL, production)
    if (typeof u === 'string') problems.push(u.replaceAll('OPENOPERATOR_URL', 'GATEWAY_JWT_JWKS_URL'))
    else jwks = { url: new URL(e.GATEWAY_JWT_JWKS_URL).href, minRefreshMs: e.GATEWAY_JWT_JWKS_MIN_REFRESH_MS }
  } else {
    const initial = jwksFile('GATEWAY_JWT_JWKS_FILE', e.GATEWAY_JWT_JWKS_FILE!, read, problems)
    if (initial !== undefined) jwks = { file: e.GATEWAY_JWT_JWKS_FILE!, initial }
  }
  if (problems.length > before || jwks === undefined) return undefined
  return { issuer: e.GATEWAY_JWT_ISSUER!, audience: e.GATEWAY_JWT_AUDIENCE!, algorithms, leewaySeconds: e.GATEWAY_JWT_LEEWAY_SECONDS, claims, jwks }
}
