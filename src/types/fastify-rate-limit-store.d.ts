// @fastify/rate-limit's own Redis store, which the package ships but does not type; the
// gateway wraps it to count store errors (src/http/rate-limit-store.ts).
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis'

  type Callback = (err: Error | null, result?: { current: number; ttl: number }) => void
  export interface RedisStoreInstance {
    incr: (key: string, cb: Callback, timeWindow: number, max: number) => void
    read: (key: string, cb: Callback, timeWindow: number, max: number) => void
    child: (routeOptions: unknown) => RedisStoreInstance
  }
  const RedisStore: new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string) => RedisStoreInstance
  export default RedisStore
}

// Its in-memory store (a fixed window per key in an LRU of `cache` keys), which the gateway calls
// synchronously when there is no Redis (src/http/rate-limit.ts).
declare module '@fastify/rate-limit/store/LocalStore.js' {
  type Callback = (err: Error | null, result: { current: number; ttl: number }) => void
  export interface LocalStoreInstance {
    incr: (key: string, cb: Callback, timeWindow: number, max: number) => void
  }
  const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => LocalStoreInstance
  export default LocalStore
}
