// @fastify/rate-limit's own Redis store, which the package ships but does not type; the
// gateway wraps it to count store errors (src/rate-limit-store.ts).
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
