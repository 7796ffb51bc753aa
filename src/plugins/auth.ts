// Inbound authentication and scopes (docs/design.md#authentication): a bearer token is hashed once
// (SHA-256) and its digest looked up among the callers' digests; 401 with WWW-Authenticate, 403 on
// a missing scope. Routes declare `config: { scope }`; routes without one are public. Failed logins
// are limited per client address (src/plugins/auth-failures.ts, docs/design.md#rate-limits). The
// digest and the lookup are src/caller-tokens.ts.
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Caller, Scope } from '../../schemas/callers.js'
import { findCaller, indexCallers } from '../caller-tokens.js'
import { GatewayError } from '../errors.js'

declare module 'fastify' {
  interface FastifyRequest { caller: Caller | null }
  interface FastifyContextConfig { scope?: Scope }
}

export interface AuthOptions { callers: Caller[] }

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

export default fp<AuthOptions>(async (app, opts) => {
  app.decorateRequest('caller', null)
  const index = indexCallers(opts.callers)
  /** the caller of a request, or null for no valid token; throws on two Authorization headers and a missing scope */
  const authenticate = (request: FastifyRequest, scope: Scope): Caller | null => {
    // Node keeps the first of two Authorization headers; which one a proxy on the way used is
    // unknowable, so neither is taken
    if (authorizationHeaders(request.raw.rawHeaders) > 1) throw new GatewayError('invalid_request', { message: 'The request carries more than one Authorization header.' })
    const caller = findCaller(index, request.headers.authorization)
    if (caller !== null && !caller.scopes.includes(scope)) throw new GatewayError('forbidden', { message: `This route requires the ${scope} scope.` })
    return caller
  }
  const refused = async (request: FastifyRequest): Promise<never> => {
    await app.authFailures.record(request)
    throw unauthorized()
  }
  const finish = (request: FastifyRequest, scope: Scope, done: (err?: Error) => void): void => {
    let caller: Caller | null
    try {
      caller = authenticate(request, scope)
    } catch (err) {
      done(err as Error)
      return
    }
    if (caller === null) {
      refused(request).catch(done)
      return
    }
    request.caller = caller
    done()
  }
  // callback style, and no promise at all for an address that cannot be over its failure budget
  // (docs/design.md#hot-path)
  app.addHook('onRequest', (request, _reply, done) => {
    const scope = request.routeOptions.config.scope
    if (scope === undefined) { done(); return }
    // an address past its failed-login budget is refused before its token is looked at
    if (app.authFailures.mayBeOver(request)) {
      app.authFailures.refuseIfOver(request).then(() => { finish(request, scope, done) }, done)
      return
    }
    finish(request, scope, done)
  })
}, { name: 'auth', dependencies: ['error-handler', 'auth-failures'] })
