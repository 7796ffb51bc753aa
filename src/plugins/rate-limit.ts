// Per-caller rate limits (docs/design.md#rate-limits): after authentication (a 401 never counts), a
// read budget and a control budget covering every POST under /v1/campaigns, each a fixed window of
// a minute. Shared through Redis when GATEWAY_REDIS_URL is set: @fastify/rate-limit with its Redis
// store (the `redis` plugin's client); a failing store serves the request and counts the error
// (src/http/rate-limit-store.ts): rate limiting fails open. Without Redis the same plugin's in-memory
// store (an LRU of 10,000 keys) is called from a callback hook, synchronously: the plugin's async
// hook cost a read ~3 % of its instructions for a count that never waits (docs/design.md#hot-path).
// Both answer the same headers and the same 429.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../core/errors.js'
import { rateLimitStore } from '../http/rate-limit-store.js'

export interface RateLimitOptions { read: number; control: number }

const WINDOW_MS = 60_000
const KEYS = 10_000

const isControl = (r: FastifyRequest): boolean => r.method === 'POST' && (r.routeOptions.url ?? '').startsWith('/v1/campaigns')

export default fp<RateLimitOptions>(async (app, opts) => {
  const limited = (r: FastifyRequest, ttl: number): GatewayError => {
    app.metrics.rateLimited.inc({ route: r.routeOptions.url ?? 'unmatched' })
    return new GatewayError('rate_limited', {
      message: `Too many requests; retry after ${Math.ceil(ttl / 1000)} s.`,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(ttl / 1000))) }
    })
  }
  if (app.redis !== undefined) {
    await app.register(rateLimit, {
      global: true,
      timeWindow: WINDOW_MS,
      ...rateLimitStore(app, 'oogw-rl-', KEYS),
      // routes without a scope (health, docs) are not limited; the others always have a caller here
      allowList: (r) => r.caller === null,
      keyGenerator: (r) => `${isControl(r) ? 'control' : 'read'}:${r.caller?.name ?? ''}`,
      max: (r) => isControl(r) ? opts.control : opts.read,
      errorResponseBuilder: (r, ctx) => limited(r, ctx.ttl)
    })
    return
  }
  const store = new LocalStore(false, false, KEYS)
  // the headers and the 429 of @fastify/rate-limit's hook, without its promises
  app.addHook('onRequest', (request, reply, done) => {
    const caller = request.caller
    if (caller === null) { done(); return }
    const control = isControl(request)
    const max = control ? opts.control : opts.read
    store.incr(`${control ? 'control' : 'read'}:${caller.name}`, (_err, res) => {
      const reset = Math.ceil(res.ttl / 1000)
      reply.header('x-ratelimit-limit', max)
      reply.header('x-ratelimit-reset', reset)
      if (res.current <= max) {
        reply.header('x-ratelimit-remaining', max - res.current)
        done()
        return
      }
      reply.header('x-ratelimit-remaining', 0)
      reply.header('retry-after', reset)
      done(limited(request, res.ttl))
    }, WINDOW_MS, max)
  })
}, { name: 'rate-limit', dependencies: ['auth', 'metrics', 'redis'] })
