// buildApp(deps): the gateway as a Fastify instance, one plugin per concern registered in
// order — infrastructure, domain, routes (STYLE). It reads no environment: everything comes
// from the Config it is given. Each plugin decorates what it owns, declares what it needs,
// and opens and closes its own resources.
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify'
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import type { Config } from './config/index.js'
import { AccessLog } from './http/access-log.js'
import { answerNodeRefusals, countRequests, createClientErrorHandler, createFrameworkErrors, guardConnections, serverBounds, trustProxyOption } from './http/edges.js'
import type { Caller } from '../schemas/callers.js'
import type { Tracing } from './tracing/sdk.js'
import type { MutationStep } from './control/pipeline.js'
import gatewayConfig from './plugins/config.js'
import errorHandler from './http/error-handler.js'
import { validatorCompiler } from './http/errors.js'
import requestId from './http/request-id-plugin.js'
import { genReqId } from './http/request-id.js'
import { installRequestChild } from './core/request-logger.js'
import lifecycle from './http/lifecycle.js'
import httpEdges from './http/edges-plugin.js'
import secretGuard from './http/secret-guard.js'
import loadShedding from './http/load-shedding.js'
import metricsPlugin, { createMetrics, type GatewayMetrics } from './http/metrics.js'
import authFailures from './http/auth-failures.js'
import auth from './http/auth.js'
import { createJwtVerifier } from './callers/jwt.js'
import type { FileRefusal } from './core/operator-files.js'
import { fixedCallers, type StaticCallers } from './callers/static.js'
import redis from './http/redis.js'
import rateLimit from './http/rate-limit.js'
import openapi from './plugins/openapi.js'
import upstream from './plugins/upstream.js'
import discovery from './plugins/discovery.js'
import argus from './plugins/argus.js'
import ledger from './plugins/ledger.js'
import control from './plugins/control.js'
import healthRoutes from '../routes/health.js'
import upstreamRoutes from '../routes/upstream.js'
import supervisorRoutes from '../routes/supervisor.js'
import tasksRoutes from '../routes/tasks.js'
import controlRoutes from '../routes/control.js'
import requestRoutes from '../routes/requests.js'
import ledgerRoutes from '../routes/ledger.js'
import adminRoutes from '../routes/admin.js'
import a2aRoutes from '../routes/a2a.js'
import operatorConsole from './console/plugin.js'

export const BODY_LIMIT = 64 * 1024

export interface AppDeps {
  config: Config
  /** static callers to authenticate: fixed, or re-read from GATEWAY_CALLERS_FILE; the dev start passes its generated one */
  callers: Caller[] | StaticCallers
  logger: Logger
  metrics?: GatewayMetrics
  /** started tracing (src/tracing/sdk.ts); absent when off, and then nothing of it is registered */
  tracing?: Tracing | undefined
  /** identical reads in flight share one upstream call (default); off only for the bench */
  coalesceReads?: boolean | undefined
  /** the control plane's clock, and the one a refused A2A version's back-off is judged by, ms since the epoch (default Date.now); tests move it */
  clock?: (() => number) | undefined
  /**
   * the ledger's clock in tests (docs/design.md#one-clock): an SQLite ledger's own (by default
   * `clock`, this process's); a PostgreSQL ledger's is the server's, shifted by as much as this
   * is off Date.now (by default not at all: a replica's skewed `clock` never moves the database's)
   */
  ledgerClock?: (() => number) | undefined
  /**
   * this process's monotonic clock (docs/design.md#one-clock), against which steps of `clock` are
   * seen; default performance.now, or — when a test gives `clock` alone — one that moves with it,
   * so that moving `clock` is time passing, never a step (a test of steps gives both)
   */
  monotonic?: (() => number) | undefined
  /** called synchronously at each step of a mutation (crash tests) */
  onMutationStep?: ((step: MutationStep, requestId: string) => void) | undefined
}

export type GatewayApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>

export async function buildApp (deps: AppDeps): Promise<GatewayApp> {
  const { config } = deps
  const metrics = deps.metrics ?? createMetrics()
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId,
    requestIdHeader: false,
    // slow clients and what the parser and router refuse (docs/design.md#http-edges)
    ...serverBounds(config.http),
    clientErrorHandler: createClientErrorHandler(deps.logger, metrics),
    frameworkErrors: createFrameworkErrors(metrics),
    // the 503 while closing comes from the lifecycle plugin, in the contract's shape
    return503OnClosing: false,
    // one access line per request instead of Fastify's two, or none (src/http/access-log.ts)
    logController: new AccessLog(config.accessLog)
  }).withTypeProvider<ZodTypeProvider>()
  // a request's logger made directly, as pino's child would make it (src/core/request-logger.ts)
  installRequestChild(app.log as Logger)
  guardConnections(app.server, { listener: 'api', maxConnections: config.http.maxConnections, perAddress: config.http.maxConnectionsPerAddress }, metrics, deps.logger)
  answerNodeRefusals(app.server, metrics, deps.logger)
  countRequests(app.server, config.http.maxRequestsPerSocket)
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)

  // infrastructure; the server span first, so that every later hook runs inside it (docs/design.md#tracing)
  if (deps.tracing !== undefined) await app.register(deps.tracing.plugin)
  await app.register(gatewayConfig, { config })
  await app.register(errorHandler)
  await app.register(requestId)
  await app.register(lifecycle)
  await app.register(httpEdges)
  await app.register(secretGuard)
  await app.register(metricsPlugin, { metrics })
  // shed before authentication: a saturated loop spends nothing more on the request
  await app.register(loadShedding)
  await app.register(redis)
  await app.register(authFailures, { perMinute: config.rateLimitAuthFailures })
  const jwtBounds = { caPem: config.upstream.caPem, connectTimeoutMs: config.upstream.connectTimeoutMs, readTimeoutMs: config.upstream.readTimeoutMs }
  const onKeyFileRefused = (reason: FileRefusal): void => { metrics.operatorFileRefusals.inc({ file: 'GATEWAY_JWT_JWKS_FILE', reason }) }
  const jwt = config.jwt === undefined ? undefined : createJwtVerifier(config.jwt, jwtBounds, deps.logger, { onKeyFileRefused })
  await app.register(auth, { callers: Array.isArray(deps.callers) ? fixedCallers(deps.callers) : deps.callers, jwt })
  await app.register(rateLimit, { read: config.rateLimitRead, control: config.rateLimitControl })
  await app.register(openapi)

  // domain: the durable record of mutations, first so that it closes last (onClose hooks run in
  // reverse order), after everything that could still write to it (docs/design.md#shutdown)
  await app.register(ledger, { now: deps.ledgerClock ?? deps.clock, serverClock: deps.ledgerClock })
  // domain: the remote as the gateway sees it
  await app.register(upstream, { wrap: deps.tracing?.wrapUpstream })
  await app.register(discovery, { now: deps.clock })
  await app.register(argus, { coalesce: deps.coalesceReads ?? true })
  // domain: the control plane, which writes the ledger
  const clock = deps.clock
  const monotonic = deps.monotonic ?? (clock === undefined ? undefined : () => performance.now() + (clock() - Date.now()))
  await app.register(control, { now: clock, monotonic, onStep: deps.onMutationStep })

  // routes
  await app.register(healthRoutes)
  await app.register(upstreamRoutes)
  await app.register(supervisorRoutes)
  await app.register(tasksRoutes)
  await app.register(controlRoutes)
  await app.register(requestRoutes)
  await app.register(ledgerRoutes)
  await app.register(adminRoutes)
  // the A2A front door: the REST surface's twin on the same core (docs/api.md#a2a-front-door)
  await app.register(a2aRoutes, { traceFrontDoor: deps.tracing?.traceFrontDoor })
  // the operator's console: static files that call the routes above with the operator's token (docs/operating.md#console)
  if (config.console) await app.register(operatorConsole)
  return app
}
