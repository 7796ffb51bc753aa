// Where a rate-limit counter lives (docs/design.md#rate-limits): with GATEWAY_REDIS_URL,
// @fastify/rate-limit's own Redis store, wrapped so that every failed call counts in
// gateway_rate_limit_store_errors_total (the plugin's `skipOnError` then serves the request:
// rate limiting fails open); without it, the plugin's in-memory LRU of `cache` keys, so many
// distinct keys cannot grow memory without bound.
import type { FastifyInstance } from 'fastify'
import type { RateLimitPluginOptions } from '@fastify/rate-limit'
import RedisStore, { type RedisStoreInstance } from '@fastify/rate-limit/store/RedisStore.js'

function counted (inner: RedisStoreInstance, onError: () => void): RedisStoreInstance {
  type Cb = Parameters<RedisStoreInstance['incr']>[1]
  const watch = (cb: Cb): Cb => (err, result) => { if (err !== null) onError(); cb(err, result) }
  return {
    incr: (key, cb, timeWindow, max) => { inner.incr(key, watch(cb), timeWindow, max) },
    read: (key, cb, timeWindow, max) => { inner.read(key, watch(cb), timeWindow, max) },
    child: (routeOptions) => counted(inner.child(routeOptions), onError)
  }
}

/** the store options of one @fastify/rate-limit registration: fail open, counted */
export function rateLimitStore (app: FastifyInstance, nameSpace: string, cache: number): Pick<RateLimitPluginOptions, 'store' | 'cache' | 'skipOnError'> {
  const redis = app.redis
  if (redis === undefined) return { cache, skipOnError: true }
  const onError = (): void => { app.metrics.rateLimitStoreErrors.inc() }
  // @fastify/rate-limit constructs the store with `new`; a constructor may return the object to use
  function Store (this: unknown, params: { continueExceeding?: boolean; exponentialBackoff?: boolean }): RedisStoreInstance {
    return counted(new RedisStore(params.continueExceeding === true, params.exponentialBackoff === true, redis!, nameSpace), onError)
  }
  return { store: Store as unknown as NonNullable<RateLimitPluginOptions['store']>, skipOnError: true }
}
