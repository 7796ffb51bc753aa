// buildApp(deps): the gateway as a Fastify instance, plugins in order — infrastructure, domain,
// routes (STYLE). It reads no environment: everything comes from the Config it is given.
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Caller } from '../schemas/callers.js'
import { createUpstreamClient, type UpstreamClient } from './upstream/client.js'
import { createDiscovery, type Discovery } from './discovery/discovery.js'
import { createArgusReader, type ArgusReader } from './argus/reader.js'
import { createMetrics, type GatewayMetrics } from './plugins/metrics.js'
import metricsPlugin from './plugins/metrics.js'
import errorHandler from './plugins/error-handler.js'
import requestId, { genReqId } from './plugins/request-id.js'
import auth from './plugins/auth.js'
import rateLimit from './plugins/rate-limit.js'
import healthRoutes from '../routes/health.js'
import upstreamRoutes from '../routes/upstream.js'
import supervisorRoutes from '../routes/supervisor.js'
import tasksRoutes from '../routes/tasks.js'

export const BODY_LIMIT = 64 * 1024

declare module 'fastify' {
  interface FastifyInstance {
    discovery: Discovery
    argus: ArgusReader
    upstream: UpstreamClient
    ledgerReachable: () => Promise<boolean>
    gatewayConfig: Config
  }
}

export interface AppDeps {
  config: Config
  /** callers to authenticate; the dev start passes its generated one */
  callers: Caller[]
  logger: Logger
  metrics?: GatewayMetrics
}

export type GatewayApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>

export async function buildApp (deps: AppDeps): Promise<GatewayApp> {
  const { config } = deps
  const metrics = deps.metrics ?? createMetrics()
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    genReqId,
    requestIdHeader: false,
    return503OnClosing: true
  }).withTypeProvider<ZodTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)

  const upstream = createUpstreamClient({
    ...config.upstream,
    logger: deps.logger.child({ component: 'upstream' }),
    observe: (op, outcome, seconds) => {
      metrics.upstreamRequests.inc({ rpc_method: op, outcome })
      metrics.upstreamDuration.observe({ rpc_method: op }, seconds)
    }
  })
  const discovery = createDiscovery({
    client: upstream,
    origin: config.upstream.origin,
    cardMaxBytes: config.upstream.cardMaxBytes,
    controlEnabled: config.controlEnabled,
    intervalMs: config.discoveryIntervalMs,
    logger: deps.logger.child({ component: 'discovery' }),
    onRefresh: (outcome) => metrics.discovery.inc({ outcome })
  })
  const argus = createArgusReader({
    client: upstream,
    discovery,
    readTimeoutMs: config.upstream.readTimeoutMs,
    maxTaskResponseBytes: config.upstream.maxTaskResponseBytes,
    onCoalesced: () => metrics.readCoalesced.inc()
  })
  metrics.bindDiscovery(() => discovery.snapshot())

  app.decorate('gatewayConfig', config)
  app.decorate('upstream', upstream)
  app.decorate('discovery', discovery)
  app.decorate('argus', argus)
  app.decorate('ledgerReachable', async () => true)

  // infrastructure
  await app.register(errorHandler)
  await app.register(requestId)
  await app.register(metricsPlugin, { metrics })
  await app.register(auth, { callers: deps.callers })
  // rate-limit counters shared by every replica when Redis is configured
  const redis = config.redisUrl !== undefined ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined
  await app.register(rateLimit, { read: config.rateLimitRead, control: config.rateLimitControl, redis })
  await app.register(swagger, {
    openapi: {
      info: { title: 'openoperator-gateway', version: '0.1.0', description: 'Supervise and control OpenOperator training campaigns over A2A.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }]
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  // routes
  await app.register(healthRoutes)
  await app.register(upstreamRoutes)
  await app.register(supervisorRoutes)
  await app.register(tasksRoutes)

  app.addHook('onReady', async () => {
    // a failed first discovery is not fatal: /readyz reports it and the timer retries
    await discovery.refresh()
    discovery.start()
  })
  app.addHook('onClose', async () => {
    discovery.stop()
    await upstream.close()
    redis?.disconnect()
  })
  return app
}
