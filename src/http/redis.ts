// The Redis client as `app.redis`, only when GATEWAY_REDIS_URL is set
// (docs/design.md#rate-limits): the rate-limit counters are then shared by every replica.
// Redis is never allowed to make a request slow or fail: connect and command timeouts are
// short, nothing queues while the client is disconnected, and the rate limits fail open.
// Its errors go through pino, rate-limited so a Redis that stays down cannot flood the log.
// Disconnected when the app closes. ioredis itself is imported only then.
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance { redis: Redis | undefined }
}

export const REDIS_CONNECT_TIMEOUT_MS = 1000
export const REDIS_COMMAND_TIMEOUT_MS = 250
/** while Redis stays down, at most one error line per this interval */
export const REDIS_ERROR_LOG_INTERVAL_MS = 30_000

export default fp(async (app) => {
  const url = app.gatewayConfig.redisUrl
  if (url === undefined) {
    app.decorate('redis', undefined)
    return
  }
  // loaded only when configured: ioredis and its dependencies take resident memory that a gateway
  // without Redis (the single-replica default) never uses (BENCHMARKS.md#hot-path-choices)
  const { Redis: RedisClient } = await import('ioredis')
  const redis = new RedisClient(url, {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // fail fast rather than queue: a command while disconnected errors at once, and one in
    // flight when the connection drops is not retried (the request is served regardless)
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0
  })
  app.decorate('redis', redis)

  let lastLogged = 0
  let suppressed = 0
  let down = false
  redis.on('error', (err: Error & { code?: string }) => {
    down = true
    const now = Date.now()
    if (now - lastLogged < REDIS_ERROR_LOG_INTERVAL_MS) { suppressed++; return }
    app.log.warn({ code: err.code, message: err.message, suppressed }, 'redis unavailable')
    lastLogged = now
    suppressed = 0
  })
  redis.on('ready', () => {
    if (!down) return
    down = false
    app.log.info({ suppressed }, 'redis reachable again')
    lastLogged = 0
    suppressed = 0
  })

  // start with the counters in force when Redis answers, but never wait long for it
  app.addHook('onReady', async () => {
    if (redis.status === 'ready') return
    await new Promise<void>((resolve) => {
      const done = (): void => { clearTimeout(timer); redis.off('ready', done); redis.off('error', done); resolve() }
      const timer = setTimeout(done, REDIS_CONNECT_TIMEOUT_MS)
      redis.once('ready', done)
      redis.once('error', done)
    })
  })
  app.addHook('onClose', async () => { redis.disconnect() })
}, { name: 'redis', dependencies: ['gateway-config'] })
