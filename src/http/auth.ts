// Inbound authentication and scopes (docs/design.md#authentication): a bearer token is hashed once
// (SHA-256) and its digest looked up among the callers' digests; 401 with WWW-Authenticate, 403 on
// a missing scope. Routes declare `config: { scope }`; routes without one are public. Failed logins
// are limited per client address (src/http/auth-failures.ts, docs/design.md#rate-limits). The
// digest and the lookup are src/callers/tokens.ts. A token that is no static caller's and is a
// JWT is verified against the identity provider's keys (src/callers/jwt.ts). Every refusal is the
// same 401, counted by reason in gateway_auth_refused_total; the reason goes to a debug line only.
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Caller, Scope } from '../../schemas/callers.js'
import { bearerToken, callerOfTokenOn, rememberedCaller } from '../callers/tokens.js'
import { GatewayError } from '../core/errors.js'
import { routeOf } from '../core/route-of.js'
import type { JwtVerifier, RefusalReason } from '../callers/jwt.js'
import { looksLikeJwt } from '../callers/jwt.js'
import type { StaticCallers } from '../callers/static.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** whether JWT callers have keys to be verified with; undefined without GATEWAY_JWT_* (/readyz reports it) */
    jwtKeysHeld: (() => boolean) | undefined
    /** the static callers in use and the grants table keyed by JWT identity (the admins' listing, docs/design.md#grants) */
    staticCallers: StaticCallers
  }
  interface FastifyRequest { caller: Caller | null }
  interface FastifyContextConfig { scope?: Scope }
}

export interface AuthOptions {
  callers: StaticCallers
  /** JWT callers, when GATEWAY_JWT_* is configured */
  jwt?: JwtVerifier
  /** the clock static callers' expiresAt is judged by */
  now?: () => number
}

/** how many Authorization headers the request carried (`request.headers` keeps only the first) */
export function authorizationHeaders (rawHeaders: readonly string[]): number {
  let n = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const k = rawHeaders[i]!
    if (k.length === 13 && k.toLowerCase() === 'authorization') n++
  }
  return n
}

const unauthorized = (): GatewayError => new GatewayError('unauthorized', {
  headers: { 'www-authenticate': 'Bearer realm="openoperator-gateway"' }
})

type Outcome = { caller: Caller } | { reason: RefusalReason; detail?: string } | { pending: Promise<{ caller: Caller } | { reason: RefusalReason; detail?: string }> }

export default fp<AuthOptions>(async (app, opts) => {
  app.decorateRequest('caller', null)
  const now = opts.now ?? Date.now
  const jwt = opts.jwt
  if (jwt !== undefined) app.addHook('onClose', async () => { await jwt.close() })
  app.decorate('jwtKeysHeld', jwt === undefined ? undefined : jwt.hasKeys)
  app.decorate('staticCallers', opts.callers)
  /** who the token is, synchronously for a static token; throws on two Authorization headers */
  const identify = (request: FastifyRequest): Outcome => {
    // Node keeps the first of two Authorization headers; which one a proxy on the way used is
    // unknowable, so neither is taken
    if (authorizationHeaders(request.raw.rawHeaders) > 1) throw new GatewayError('invalid_request', { message: 'The request carries more than one Authorization header.' })
    const header = request.headers.authorization
    // one reference read: the set in use when the request arrived, old or new, never a mix
    const set = opts.callers.current()
    const socket = request.raw.socket
    const known = header === undefined ? undefined : rememberedCaller(socket, set.index, header)
    if (known !== undefined) return unexpired(known)
    const token = bearerToken(header)
    if (token === undefined) return { reason: header === undefined ? 'missing' : 'malformed' }
    const found = callerOfTokenOn(socket, set.index, header!, token)
    if (found !== null) return unexpired(found)
    if (jwt !== undefined && looksLikeJwt(token)) return { pending: jwt.verify(token, set.controllerIds, set.identityGrants) }
    return { reason: 'unknown_token' }
  }
  const unexpired = (found: Caller): Outcome =>
    found.expiresAt !== undefined && now() >= found.expiresAt ? { reason: 'expired', detail: 'static token past its expiresAt' } : { caller: found }
  const scoped = (caller: Caller, scope: Scope): void => {
    if (!caller.scopes.includes(scope)) throw new GatewayError('forbidden', { message: `This route requires the ${scope} scope.` })
  }
  const refused = async (request: FastifyRequest, reason: RefusalReason, detail: string | undefined): Promise<never> => {
    app.metrics.authRefused.inc({ reason })
    request.log.debug({ reason, detail }, 'authentication refused')
    await app.authFailures.record(request)
    throw unauthorized()
  }
  const settle = (request: FastifyRequest, scope: Scope, o: { caller: Caller } | { reason: RefusalReason; detail?: string }, done: (err?: Error) => void): void => {
    if ('reason' in o) {
      refused(request, o.reason, o.detail).catch(done)
      return
    }
    try {
      scoped(o.caller, scope)
    } catch (err) {
      done(err as Error)
      return
    }
    request.caller = o.caller
    done()
  }
  const finish = (request: FastifyRequest, scope: Scope, done: (err?: Error) => void): void => {
    let o: Outcome
    try {
      o = identify(request)
    } catch (err) {
      done(err as Error)
      return
    }
    if ('pending' in o) {
      o.pending.then((r) => { settle(request, scope, r, done) }, done)
      return
    }
    settle(request, scope, o, done)
  }
  // callback style, and no promise at all for a static token from an address that cannot be
  // over its failure budget (docs/design.md#hot-path)
  app.addHook('onRequest', (request, _reply, done) => {
    const scope = routeOf(request).config.scope
    if (scope === undefined) { done(); return }
    // an address past its failed-login budget is refused before its token is looked at
    if (app.authFailures.mayBeOver(request)) {
      app.authFailures.refuseIfOver(request).then(() => { finish(request, scope, done) }, done)
      return
    }
    finish(request, scope, done)
  })
}, { name: 'auth', dependencies: ['error-handler', 'auth-failures', 'metrics'] })
