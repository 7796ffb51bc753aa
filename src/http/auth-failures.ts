// Failed logins per client address (docs/design.md#rate-limits): at most
// GATEWAY_RATE_LIMIT_AUTH_FAILURES failed authentications per address (request.ip, so the
// forwarded address behind GATEWAY_TRUST_PROXY) per minute. Past that, the address is refused
// with 429 before its token is looked at — a valid token included, or the 429 would tell a
// guesser which guess was right. The counters are a @fastify/rate-limit instance of their own:
// in Redis when configured (shared by replicas, failing open like the caller limits), else in
// its bounded in-memory LRU. Registered before `auth` (which calls it) and before `rate-limit`.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { makeRoom } from '../core/bounded-map.js'
import { GatewayError } from '../core/errors.js'
import { rateLimitStore } from './rate-limit-store.js'

export interface AuthFailures {
  /** false when the address cannot be over its budget, known without a store call (no Redis, no recent failure) */
  mayBeOver: (request: FastifyRequest) => boolean
  /** throws 429 when the request's address has used its failure budget */
  refuseIfOver: (request: FastifyRequest) => Promise<void>
  /** counts one failed authentication; throws 429 when this one is past the budget */
  record: (request: FastifyRequest) => Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance { authFailures: AuthFailures }
}

/**
 * distinct addresses kept in memory without Redis, in the store's LRU and in `failureMemory`; the
 * least recently seen are forgotten first (docs/design.md#bounded-maps)
 */
export const MEMORY_ADDRESSES = 10_000
const WINDOW_MS = 60_000

export interface FailureMemory {
  /** false when the address has no failure remembered within the window and none was forgotten early */
  mayBeOver: (ip: string, now: number) => boolean
  note: (ip: string, now: number) => void
  /** addresses remembered (tests: at most MEMORY_ADDRESSES) */
  size: () => number
}

/**
 * The last failure per address, oldest first, so that an address with none in the window skips the
 * store (docs/design.md#hot-path). Past MEMORY_ADDRESSES the oldest quarter is forgotten
 * (`makeRoom`); until the windows of those forgotten end (more than MEMORY_ADDRESSES failing within
 * one), every address may be over and asks the store again: forgetting never lets a refused
 * address past.
 */
export function failureMemory (): FailureMemory {
  const failedAt = new Map<string, number>()
  let forgotUntil = 0
  return {
    mayBeOver: (ip, now) => {
      if (now < forgotUntil) return true
      const at = failedAt.get(ip)
      if (at === undefined) return false
      if (now - at < WINDOW_MS) return true
      failedAt.delete(ip)
      return false
    },
    note: (ip, now) => {
      failedAt.delete(ip)
      if (failedAt.size >= MEMORY_ADDRESSES) makeRoom(failedAt, MEMORY_ADDRESSES, (at) => { forgotUntil = Math.max(forgotUntil, at + WINDOW_MS) })
      failedAt.set(ip, now)
    },
    size: () => failedAt.size
  }
}

export default fp<{ perMinute: number }>(async (app, opts) => {
  // a second @fastify/rate-limit instance decorates its own scope only while the root has none
  if (app.hasDecorator('createRateLimit')) throw new Error('auth-failures must be registered before rate-limit')
  let limiter: ReturnType<FastifyInstance['createRateLimit']> | undefined
  await app.register(async (scope) => {
    await scope.register(rateLimit, { global: false, max: opts.perMinute, timeWindow: WINDOW_MS, ...rateLimitStore(app, 'oogw-authfail-', MEMORY_ADDRESSES) })
    limiter = scope.createRateLimit()
  })
  const limit = limiter!

  const refuse = (request: FastifyRequest, ttlMs: number): GatewayError => {
    app.metrics.rateLimited.inc({ route: request.routeOptions.url ?? 'unmatched' })
    const seconds = Math.max(1, Math.ceil(ttlMs / 1000))
    return new GatewayError('rate_limited', {
      message: `Too many failed authentications from this address; retry after ${seconds} s.`,
      headers: { 'retry-after': String(seconds) }
    })
  }

  // Without Redis the counts live in this process (@fastify/rate-limit's in-memory store), so an
  // address with no failure recorded in the last window cannot be over its budget: its check
  // skips the store (docs/design.md#hot-path). The check still comes before the token is looked at.
  const memory = app.redis === undefined ? failureMemory() : undefined
  const mayBeOver = (ip: string, now: number): boolean => memory === undefined || memory.mayBeOver(ip, now)
  const noteFailure = (ip: string, now: number): void => { memory?.note(ip, now) }

  app.decorate('authFailures', {
    mayBeOver: (request) => mayBeOver(request.ip, Date.now()),
    async refuseIfOver (request) {
      if (!mayBeOver(request.ip, Date.now())) return
      const r = await limit(request, { increment: false })
      if (!r.isAllowed && r.remaining === 0) throw refuse(request, r.ttl)
    },
    async record (request) {
      noteFailure(request.ip, Date.now())
      const r = await limit(request)
      if (r.isAllowed || !r.isExceeded) return
      throw refuse(request, r.ttl)
    }
  } satisfies AuthFailures)
}, { name: 'auth-failures', dependencies: ['error-handler', 'metrics', 'redis'] })
