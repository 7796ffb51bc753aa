// Inbound authentication and scopes (docs/design.md#authentication): bearer tokens compared by
// SHA-256 digest in constant time against every caller; 401 with WWW-Authenticate, 403 on a
// missing scope. Routes declare `config: { scope }`; routes without one are public. Failed logins
// are limited per client address (src/plugins/auth-failures.ts, docs/design.md#rate-limits).
import { createHash, timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import type { Caller, Scope } from '../../schemas/callers.js'
import { GatewayError } from '../errors.js'

declare module 'fastify' {
  interface FastifyRequest { caller: Caller | null }
  interface FastifyContextConfig { scope?: Scope }
}

export interface AuthOptions { callers: Caller[] }

export function sha256Hex (s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex')
}

export function findCaller (callers: readonly Caller[], authorization: string | undefined): Caller | null {
  const m = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(authorization ?? '')
  if (m?.[1] === undefined) return null
  const digest = createHash('sha256').update(m[1], 'utf8').digest()
  let found: Caller | null = null
  for (const c of callers) {
    // compare against every caller so timing does not tell which one matched
    if (timingSafeEqual(digest, Buffer.from(c.tokenSha256, 'hex')) && found === null) found = c
  }
  return found
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

export default fp<AuthOptions>(async (app, opts) => {
  app.decorateRequest('caller', null)
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope
    if (scope === undefined) return
    // an address past its failed-login budget is refused before its token is looked at
    await app.authFailures.refuseIfOver(request)
    // Node keeps the first of two Authorization headers; which one a proxy on the way used is
    // unknowable, so neither is taken
    if (authorizationHeaders(request.raw.rawHeaders) > 1) throw new GatewayError('invalid_request', { message: 'The request carries more than one Authorization header.' })
    const caller = findCaller(opts.callers, request.headers.authorization)
    if (caller === null) {
      await app.authFailures.record(request)
      throw unauthorized()
    }
    if (!caller.scopes.includes(scope)) throw new GatewayError('forbidden', { message: `This route requires the ${scope} scope.` })
    request.caller = caller
  })
}, { name: 'auth', dependencies: ['error-handler', 'auth-failures'] })
