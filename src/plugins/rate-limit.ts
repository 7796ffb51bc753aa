// Per-caller rate limits (docs/design.md#rate-limits): after authentication (a 401 never counts), a
// read budget and a control budget covering every POST under /v1/campaigns; shared through
// Redis when GATEWAY_REDIS_URL is set (the `redis` plugin's client). A failing store serves the
// request and counts the error (src/rate-limit-store.ts): rate limiting fails open.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.js'
import { rateLimitStore } from '../rate-limit-store.js'

export interface RateLimitOptions { read: number; control: number }

const isControl = (r: FastifyRequest): boolean => r.method === 'POST' && (r.routeOptions.url ?? '').startsWith('/v1/campaigns')

export default fp<RateLimitOptions>(async (app, opts) => {
  await app.register(rateLimit, {
    global: true,
    timeWindow: 60_000,
    ...rateLimitStore(app, 'oogw-rl-', 10_000),
    // routes without a scope (health, docs) are not limited; the others always have a caller here
    allowList: (r) => r.caller === null,
    keyGenerator: (r) => `${isControl(r) ? 'control' : 'read'}:${r.caller?.name ?? ''}`,
    max: (r) => isControl(r) ? opts.control : opts.read,
    onExceeded: (r) => app.metrics.rateLimited.inc({ route: r.routeOptions.url ?? 'unmatched' }),
    errorResponseBuilder: (_r, ctx) => new GatewayError('rate_limited', {
      message: `Too many requests; retry after ${Math.ceil(ctx.ttl / 1000)} s.`,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(ctx.ttl / 1000))) }
    })
  })
}, { name: 'rate-limit', dependencies: ['auth', 'metrics', 'redis'] })
