// The Redis client as `app.redis`, only when GATEWAY_REDIS_URL is set
// (docs/design.md#rate-limits): the rate-limit counters are then shared by every replica.
// Disconnected when the app closes.
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance { redis: Redis | undefined }
}

export default fp(async (app) => {
  const url = app.gatewayConfig.redisUrl
  const redis = url !== undefined ? new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined
  app.decorate('redis', redis)
  if (redis !== undefined) app.addHook('onClose', async () => { redis.disconnect() })
}, { name: 'redis', dependencies: ['gateway-config'] })
