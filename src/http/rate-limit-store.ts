// Where a rate-limit counter lives (docs/design.md#rate-limits): with GATEWAY_REDIS_URL,
// @fastify/rate-limit's own Redis store, wrapped so that every failed call counts in
// gateway_rate_limit_store_errors_total (the plugin's `skipOnError` then serves the request:
// rate limiting fails open); without it, the plugin's in-memory LRU of `cache` keys, so many
// distinct keys cannot grow memory without bound. After a failure the store is skipped for a
// back-off (2 s, doubling to 30 s while it keeps failing, reset when Redis is ready again): a
// hung Redis costs one command timeout per back-off, not two per request.
import type { FastifyInstance } from 'fastify'
import type { RateLimitPluginOptions } from '@fastify/rate-limit'
import RedisStore, { type RedisStoreInstance } from '@fastify/rate-limit/store/RedisStore.js'
import type { Redis } from 'ioredis'

export const STORE_BACKOFF_MIN_MS = 2000
export const STORE_BACKOFF_MAX_MS = 30_000

/** one back-off per Redis client: every limiter of the app skips it together */
interface Backoff { skipUntil: number; nextMs: number }
const backoffs = new WeakMap<Redis, Backoff>()

function backoffOf (redis: Redis): Backoff {
  let b = backoffs.get(redis)
  if (b === undefined) {
    const state: Backoff = { skipUntil: 0, nextMs: STORE_BACKOFF_MIN_MS }
    // reachable again: no reason to keep serving without the shared counts
    redis.on('ready', () => { state.skipUntil = 0; state.nextMs = STORE_BACKOFF_MIN_MS })
    backoffs.set(redis, state)
    b = state
  }
  return b
}

const SKIPPED = new Error('rate-limit store skipped while Redis backs off')

function guarded (inner: RedisStoreInstance, b: Backoff, onError: () => void): RedisStoreInstance {
  type Cb = Parameters<RedisStoreInstance['incr']>[1]
  const watch = (cb: Cb): Cb => (err, result) => {
    if (err !== null) {
      onError()
      b.skipUntil = Date.now() + b.nextMs
      b.nextMs = Math.min(b.nextMs * 2, STORE_BACKOFF_MAX_MS)
    } else {
      b.nextMs = STORE_BACKOFF_MIN_MS
    }
    cb(err, result)
  }
  // skipped calls are counted as failed: the request was served without the store either way
  const skip = (cb: Cb): boolean => {
    if (Date.now() >= b.skipUntil) return false
    onError()
    cb(SKIPPED, undefined as unknown as Parameters<Cb>[1])
    return true
  }
  return {
    incr: (key, cb, timeWindow, max) => { if (!skip(cb)) inner.incr(key, watch(cb), timeWindow, max) },
    read: (key, cb, timeWindow, max) => { if (!skip(cb)) inner.read(key, watch(cb), timeWindow, max) },
    child: (routeOptions) => guarded(inner.child(routeOptions), b, onError)
  }
}

/** the store options of one @fastify/rate-limit registration: fail open, counted */
export function rateLimitStore (app: FastifyInstance, nameSpace: string, cache: number): Pick<RateLimitPluginOptions, 'store' | 'cache' | 'skipOnError'> {
  const redis = app.redis
  if (redis === undefined) return { cache, skipOnError: true }
  const onError = (): void => { app.metrics.rateLimitStoreErrors.inc() }
  // @fastify/rate-limit constructs the store with `new`; a constructor may return the object to use
  function Store (this: unknown, params: { continueExceeding?: boolean; exponentialBackoff?: boolean }): RedisStoreInstance {
    return guarded(new RedisStore(params.continueExceeding === true, params.exponentialBackoff === true, redis!, nameSpace), backoffOf(redis!), onError)
  }
  return { store: Store as unknown as NonNullable<RateLimitPluginOptions['store']>, skipOnError: true }
}
