// Callers from the identity provider (docs/design.md#authentication): a bearer token that is a
// JWT, verified by jose's jwtVerify against the IdP's keys — a JWKS file re-read on change, or a
// JWKS URL fetched on undici with the gateway's outbound bounds, cached, refreshed when a token
// names an unknown kid at most once per GATEWAY_JWT_JWKS_MIN_REFRESH_MS. The algorithms are an
// explicit list (never `none`, never HMAC); iss, aud, exp (required), nbf and iat are checked
// with a small leeway. A verified token becomes a caller named `jwt:<name claim>` with the
// gateway's scopes it holds, whose identity is its issuer and subject (`jwt:<iss>#<sub>`,
// docs/design.md#controller-bindings); the control scope needs a controllerId claim and a
// subject, and a controllerId claim without it is ignored. Every refusal has a reason, for the
// metric and a debug line only.
import { Agent, request } from 'undici'
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import { CONTROLLER_ID_PATTERN, CONTROLLER_ID_RULE, JWT_NAME_PREFIX, NAME_RULE, ScopeSchema, controllerKey, safeName, type Caller, type Grants, type JwtClaims, type Scope } from '../../schemas/callers.js'
import type { JwtConfig } from '../config/types.js'
import { BodyTooLarge, discardBody, readCappedBody } from '../core/capped-body.js'
import { sha256Hex } from './tokens.js'
import { grantsFromClaims } from './grants.js'
import { parseJwks, trustedKeysFromFile } from '../core/trusted-keys.js'
import type { FileRefusal } from '../core/operator-files.js'
import { tlsOptionsFor } from '../upstream/client.js'

/** why a token was refused: a small fixed set, the label of gateway_auth_refused_total */
export const REFUSAL_REASONS = ['missing', 'unknown_token', 'expired', 'not_yet_valid', 'malformed', 'algorithm', 'unknown_kid', 'signature', 'claims', 'no_keys', 'controller_conflict'] as const
export type RefusalReason = typeof REFUSAL_REASONS[number]

/** bounds of the JWKS fetch, the upstream's own (docs/design.md#upstream-wire-rules) */
export interface JwksFetchBounds { caPem: string | undefined; connectTimeoutMs: number; readTimeoutMs: number }
export const JWKS_MAX_BYTES = 1024 * 1024

const SEGMENT = /^[A-Za-z0-9_-]+$/

/** three base64url segments whose first is a JSON object: anything else is a static token */
export function looksLikeJwt (token: string): boolean {
  const a = token.indexOf('.')
  if (a <= 0) return false
  const b = token.indexOf('.', a + 1)
  if (b < 0 || token.indexOf('.', b + 1) >= 0) return false
  const head = token.slice(0, a)
  if (!SEGMENT.test(head) || !SEGMENT.test(token.slice(a + 1, b)) || !/^[A-Za-z0-9_-]*$/.test(token.slice(b + 1))) return false
  try {
    const h: unknown = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'))
    return typeof h === 'object' && h !== null && !Array.isArray(h)
  } catch {
    return false
  }
}

/** one JWKS fetch: verified TLS, connect and read timeouts, at most 1 MiB, no redirect followed */
export async function fetchJwks (url: string, dispatcher: Agent, readTimeoutMs: number): Promise<JSONWebKeySet> {
  const res = await request(url, { dispatcher, method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(readTimeoutMs) })
  if (res.statusCode !== 200) {
    discardBody(res.body)
    throw new Error(`the JWKS URL answered ${res.statusCode}`)
  }
  let body: Buffer
  try {
    body = await readCappedBody(res, JWKS_MAX_BYTES)
  } catch (err) {
    throw err instanceof BodyTooLarge ? new Error('the JWKS is larger than 1 MiB') : err
  }
  const parsed = parseJwks(body.toString('utf8'))
  if ('problems' in parsed) throw new Error(`the JWKS is refused: ${parsed.problems.join('; ')}`)
  return parsed.jwks
}

export interface JwtVerifier {
  /**
   * the caller a JWT stands for, or why it is refused; never throws. `identityGrants`: the callers
   * file's grants by identity, which replace the claims' (docs/design.md#grants)
   */
  verify: (token: string, staticControllerIds: ReadonlySet<string>, identityGrants?: ReadonlyMap<string, Grants>) => Promise<{ caller: Caller } | { reason: RefusalReason; detail?: string }>
  /** whether a key set is held (a JWKS URL not yet fetched holds none: every JWT is refused) */
  hasKeys: () => boolean
  close: () => Promise<void>
}

interface Log { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }

export interface JwtVerifierOptions {
  /** the clock tokens are judged by (default Date.now) */
  now?: () => number
  /** a refused re-read of GATEWAY_JWT_JWKS_FILE, for gateway_operator_file_refusals_total */
  onKeyFileRefused?: (reason: FileRefusal) => void
}

export function createJwtVerifier (c: JwtConfig, bounds: JwksFetchBounds, log: Log, o: JwtVerifierOptions = {}): JwtVerifier {
  const now = o.now ?? Date.now
  let getKey: JWTVerifyGetKey
  let close = async (): Promise<void> => {}
  // a key file is validated at start and a bad new one keeps the old keys: always some held
  let hasKeys = (): boolean => true
  if ('file' in c.jwks) {
    const keys = trustedKeysFromFile('GATEWAY_JWT_JWKS_FILE', c.jwks.file, c.jwks.initial, { log, onRefused: o.onKeyFileRefused ?? (() => {}) })
    close = async () => { keys.close() }
    let seen = keys.current()
    let local = createLocalJWKSet(seen)
    getKey = async (header, token) => {
      const k = keys.current()
      if (k !== seen) { seen = k; local = createLocalJWKSet(k) }
      return await local(header, token)
    }
  } else {
    const { url, minRefreshMs } = c.jwks
    const dispatcher = new Agent({
      connect: { ...tlsOptionsFor(bounds.caPem), timeout: bounds.connectTimeoutMs },
      headersTimeout: bounds.readTimeoutMs,
      bodyTimeout: bounds.readTimeoutMs,
      connections: 2
    })
    let local: JWTVerifyGetKey | undefined
    let lastFetchAt = -Infinity
    let inFlight: Promise<void> | undefined
    /** one fetch at a time, and none sooner than minRefreshMs after the last began */
    const refresh = (): Promise<void> | undefined => {
      if (inFlight !== undefined) return inFlight
      if (now() - lastFetchAt < minRefreshMs) return undefined
      lastFetchAt = now()
      inFlight = fetchJwks(url, dispatcher, bounds.readTimeoutMs).then((jwks) => {
        local = createLocalJWKSet(jwks)
        log.info({ keys: jwks.keys.length }, 'JWKS fetched from GATEWAY_JWT_JWKS_URL')
      }, (err: unknown) => {
        log.warn({ detail: err instanceof Error ? err.message : String(err) }, 'JWKS fetch from GATEWAY_JWT_JWKS_URL failed: JWTs signed with keys not yet fetched are refused')
      }).finally(() => { inFlight = undefined })
      return inFlight
    }
    // at start, in the background: a failure is logged and JWTs wait for the next fetch
    void refresh()
    getKey = async (header, token) => {
      if (local !== undefined) {
        try {
          return await local(header, token)
        } catch (err) {
          if (!(err instanceof errors.JWKSNoMatchingKey)) throw err
        }
      }
      // an unknown kid: the IdP may have rotated. At most one fetch per window, a flood included
      await refresh()
      if (local === undefined) throw new NoKeys()
      return await local(header, token)
    }
    hasKeys = () => local !== undefined
    close = async () => { await dispatcher.close() }
  }

  const verify: JwtVerifier['verify'] = async (token, staticControllerIds, identityGrants) => {
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        issuer: c.issuer,
        audience: c.audience,
        algorithms: c.algorithms,
        clockTolerance: c.leewaySeconds,
        requiredClaims: ['exp'],
        currentDate: new Date(now())
      }))
    } catch (err) {
      return { reason: reasonOf(err), detail: err instanceof Error ? err.message : undefined }
    }
    // jose checks iat only against a maximum age: a token issued in the future is not yet valid
    if (typeof payload.iat === 'number' && payload.iat > now() / 1000 + c.leewaySeconds) return { reason: 'not_yet_valid', detail: 'iat is in the future' }
    return callerOf(payload, c.claims, token, staticControllerIds, identityGrants)
  }
  return { verify, hasKeys: () => hasKeys(), close: async () => { await close() } }
}

class NoKeys extends Error {}

function reasonOf (err: unknown): RefusalReason {
  if (err instanceof NoKeys) return 'no_keys'
  if (err instanceof errors.JWTExpired) return 'expired'
  if (err instanceof errors.JWTClaimValidationFailed) return err.claim === 'nbf' ? 'not_yet_valid' : 'claims'
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm'
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return 'unknown_kid'
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature'
  return 'malformed'
}

const SCOPES: ReadonlySet<string> = new Set(ScopeSchema.options)

/** the longest subject taken into an identity (OpenID Connect's bound: 255 characters) */
const MAX_SUBJECT = 255

/**
 * The caller a verified payload stands for under the claim mapping. Its identity is the issuer
 * and the subject, never the mapped name claim: a name is whatever the IdP lets a user pick, a
 * subject is the IdP's own key for the principal (docs/design.md#controller-bindings).
 */
export function callerOf (payload: JWTPayload, claims: JwtClaims, token: string, staticControllerIds: ReadonlySet<string>, identityGrants?: ReadonlyMap<string, Grants>): { caller: Caller } | { reason: RefusalReason; detail: string } {
  const name = payload[claims.name]
  if (typeof name !== 'string' || name === '' || name.length > 128 - JWT_NAME_PREFIX.length) return { reason: 'claims', detail: `the ${claims.name} claim must be a string of 1–${128 - JWT_NAME_PREFIX.length} characters` }
  // a name is written to the ledger, the logs and an operator's terminal (docs/design.md#callers)
  if (!safeName(name)) return { reason: 'claims', detail: `the ${claims.name} claim ${NAME_RULE}` }
  const { sub, iss } = payload
  if (sub !== undefined && (typeof sub !== 'string' || sub === '' || sub.length > MAX_SUBJECT || !safeName(sub))) return { reason: 'claims', detail: `the sub claim must be a string of 1–${MAX_SUBJECT} characters, and ${NAME_RULE}` }
  const raw = payload[claims.scopes]
  const listed = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : []
  // only the gateway's scopes are taken; an IdP's other scopes and roles are ignored
  const scopes = [...new Set(listed.filter((s): s is Scope => typeof s === 'string' && SCOPES.has(s)))]
  // jwtVerify has checked iss against GATEWAY_JWT_ISSUER; a token without sub has no identity
  const identity = typeof iss === 'string' && sub !== undefined ? `jwt:${iss}#${sub}` : undefined
  const caller: Caller = { name: `${JWT_NAME_PREFIX}${name}`, tokenSha256: sha256Hex(token), scopes, ...(identity !== undefined && { identity }) }
  if (scopes.includes('control')) {
    const id = payload[claims.controllerId]
    // control needs a controller id from the verified token, and an identity to bind it to;
    // without either the scope is dropped
    if (id === undefined || identity === undefined) caller.scopes = scopes.filter((s) => s !== 'control')
    else if (typeof id !== 'string' || !CONTROLLER_ID_PATTERN.test(id)) return { reason: 'claims', detail: `the ${claims.controllerId} claim ${CONTROLLER_ID_RULE}` }
    // a static caller's id in any letter case: the two would be one controller on the remote
    else if (staticControllerIds.has(controllerKey(id))) return { reason: 'controller_conflict', detail: 'the controllerId claim is a static caller\'s' }
    else caller.controllerId = id
  }
  // the operator's table for this identity is the deliberate statement: it replaces what the
  // IdP's claims say, so a group added at the IdP cannot widen a pinned identity
  const grants = (identity === undefined ? undefined : identityGrants?.get(identity)) ?? grantsFromClaims(payload, claims, caller.scopes)
  if (grants !== undefined) caller.grants = grants
  return { caller }
}
