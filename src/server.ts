// The one start path — the bin, the test helper and the bench all start the gateway here: builds
// the app from a Config, listens on the API and metrics ports, and returns an idempotent close.
// The dev start (docs/design.md#embedded-default-and-simulator) runs the simulator in-process on
// loopback with a random secret and prints one generated all-scopes token.
import { randomBytes } from 'node:crypto'
import { getHeapStatistics } from 'node:v8'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp, type GatewayApp } from './app.js'
import { redactUrl, type Config, type HttpEdgeConfig } from './config/index.js'
import { createClientErrorHandler, fitToDescriptors, guardConnections, listenerTimeouts, openFilesLimit } from './http/edges.js'
import { createLogger } from './core/logger.js'
import type { MutationStep } from './control/pipeline.js'
import { drainAndClose } from './shutdown.js'
import { startTracing } from './tracing/sdk.js'
import { createMetrics, type GatewayMetrics } from './http/metrics.js'
import { sha256Hex } from './callers/tokens.js'
import { startSimulator, type Simulator } from './simulator/index.js'
import type { Caller } from '../schemas/callers.js'
import { callersFromFile, fixedCallers, type StaticCallers } from './callers/static.js'

export interface RunningGateway {
  app: GatewayApp
  metricsServer: FastifyInstance
  simulator: Simulator | undefined
  url: string
  metricsUrl: string
  devToken: string | undefined
  logger: Logger
  /** re-reads GATEWAY_CALLERS_FILE now, off the event loop (the bin calls it on SIGHUP); false when refused or the callers are inline */
  reloadCallers: () => Promise<boolean>
  close: () => Promise<void>
}

export interface StartOptions {
  /** where the dev token line goes (stdout by default) */
  print?: (line: string) => void
  /** the app's logger; by default pino on stdout, scrubbed of the secrets this start knows */
  logger?: Logger
  /** share identical reads in flight (docs/design.md#coalescing); off only to measure what it saves (bench) */
  coalesceReads?: boolean
  /** the control plane's clock (docs/design.md#leases), also a refused A2A version's back-off's; tests move it to reach expiry and skew */
  clock?: () => number
  /** the ledger's clock (docs/design.md#one-clock); by default `clock` */
  ledgerClock?: () => number
  /** this process's monotonic clock (docs/design.md#one-clock); by default one that moves with `clock` when given, else performance.now */
  monotonic?: () => number
  /** called synchronously at each step of a mutation; crash tests stop the process there */
  onMutationStep?: (step: MutationStep, requestId: string) => void
}

/** how long one rendering of the metrics serves scrapes (docs/design.md#metrics) */
export const METRICS_CACHE_MS = 1000

/**
 * The registry's text, rendered at most once per `ttlMs` and shared by every scrape meanwhile,
 * those that arrive during the render included: a scrape flood costs the API's event loop one
 * render per interval, not one per scrape. A failed render is not kept.
 */
export function cachedRender (render: () => Promise<string>, ttlMs: number, clock = () => performance.now()): () => Promise<string> {
  let at = 0
  let text: Promise<string> | undefined
  return async () => {
    const now = clock()
    if (text === undefined || now - at >= ttlMs) {
      const p = render()
      at = now
      text = p
      p.catch(() => { if (text === p) text = undefined })
    }
    return await text
  }
}

/** the metrics listener's bounds (docs/design.md#http-edges): the API's timeouts, its own cap */
export interface MetricsEdges { http: HttpEdgeConfig; maxConnections: number; log: Logger }

export function buildMetricsServer (metrics: GatewayMetrics, cacheMs = METRICS_CACHE_MS, edges?: MetricsEdges): FastifyInstance {
  // a scrape is cheap to repeat: at close, connections are cut rather than waited for. Bounded
  // like the API, or half-sent requests held its sockets for Node's default 60 s and more
  const server = Fastify({
    logger: false,
    forceCloseConnections: true,
    ...(edges === undefined ? {} : { ...listenerTimeouts(edges.http), clientErrorHandler: createClientErrorHandler(edges.log, metrics, { count: false }) })
  })
  if (edges !== undefined) {
    // a sixteenth per address, as on the API: one client cannot lock the scraper out
    guardConnections(server.server, { listener: 'metrics', maxConnections: edges.maxConnections, perAddress: Math.ceil(edges.maxConnections / 16) }, metrics, edges.log)
  }
  const render = cachedRender(async () => await metrics.registry.metrics(), cacheMs)
  server.get('/metrics', async (_req, reply) => {
    reply.type(metrics.registry.contentType)
    return await render()
  })
  return server
}

const MiB = 1024 * 1024

/**
 * Whether the V8 heap holds the body budget's answers (docs/design.md#hot-path): each held answer
 * lives on it as text and parsed objects, about four times its bytes; five times the budget plus
 * 128 MiB of baseline is the margin asked. The problem, in words, or undefined.
 */
export function heapBudgetProblem (heapLimitBytes: number, budgetBytes: number): string | undefined {
  const needed = 5 * budgetBytes + 128 * MiB
  if (heapLimitBytes >= needed) return undefined
  return `GATEWAY_TASK_BODY_BUDGET_BYTES (${Math.round(budgetBytes / MiB)} MiB) needs a V8 heap of at least ${Math.ceil(needed / MiB)} MiB and this process has ${Math.floor(heapLimitBytes / MiB)} MiB: large task answers could exhaust it; start node with --max-old-space-size=${Math.ceil(needed / MiB)} or lower the budget`
}

export async function startGatewayServer (base: Config, opts: StartOptions = {}): Promise<RunningGateway> {
  const secrets = new Set<string>()
  // once per process, before the logger: its lines carry the trace id (docs/design.md#tracing)
  const tracing = base.tracing ? await startTracing() : undefined
  const logger = opts.logger ?? createLogger({ level: base.logLevel, secrets, pretty: process.stdout.isTTY && !base.production, mixin: tracing?.logMixin })
  for (const w of base.warnings) logger.warn(w)
  const heapProblem = heapBudgetProblem(getHeapStatistics().heap_size_limit, base.upstream.bodyBudgetBytes)
  if (heapProblem !== undefined) logger.warn(heapProblem)

  const embedded = await withEmbeddedSimulator(base, logger)
  const simulator = embedded.simulator
  let config = embedded.config
  if (config.upstream.secret !== undefined) secrets.add(config.upstream.secret)

  const metrics = createMetrics()
  const { callers, devToken } = startCallers(config, metrics, logger)

  // the listeners' caps within the open-file limit (docs/design.md#http-edges)
  const fit = fitToDescriptors(config.http.maxConnections, config.metricsMaxConnections, openFilesLimit())
  if (fit.warning !== undefined) {
    logger.warn(fit.warning)
    config = { ...config, http: { ...config.http, maxConnections: fit.api }, metricsMaxConnections: fit.metrics }
  }

  const staticCallers = Array.isArray(callers) ? fixedCallers(callers) : callers
  const app = await buildApp({ config, callers: staticCallers, logger, metrics, coalesceReads: opts.coalesceReads, tracing, clock: opts.clock, ledgerClock: opts.ledgerClock, monotonic: opts.monotonic, onMutationStep: opts.onMutationStep })
  const metricsServer = buildMetricsServer(metrics, METRICS_CACHE_MS, { http: config.http, maxConnections: config.metricsMaxConnections, log: logger })
  let closing: Promise<void> | undefined
  // idempotent: a test may close explicitly and again when it finishes. It drains: the API
  // listener first (docs/design.md#shutdown), then metrics, which Prometheus may scrape meanwhile
  const close = async (): Promise<void> => {
    closing ??= (async () => {
      const started = performance.now()
      staticCallers.close()
      const { inFlight, cut } = await drainAndClose(app, config.shutdownGraceMs, logger)
      await metricsServer.close()
      await simulator?.close()
      // the spans of the last requests go out before the process ends
      await tracing?.flush().catch(() => {})
      logger.info({ inFlight, cut, ms: Math.round(performance.now() - started) }, 'drained')
    })()
    await closing
  }
  try {
    await app.listen({ host: config.host, port: config.port })
    await metricsServer.listen({ host: config.metricsHost, port: config.metricsPort })
  } catch (err) {
    // a port in use must not leave the other listener, the pools or the simulator behind
    await close().catch(() => {})
    throw err
  }
  const url = listenUrl(app)
  const metricsUrl = listenUrl(metricsServer)
  logger.info({ url, metricsUrl, ledger: redactUrl(config.ledgerUrl), upstream: config.upstream.origin }, 'gateway listening')
  printStart(opts.print ?? ((line: string) => { process.stdout.write(`${line}\n`) }), url, devToken, simulator, secrets, config.console && devToken !== undefined)

  return { app, metricsServer, simulator, url, metricsUrl, devToken, logger, reloadCallers: staticCallers.reload, close }
}

function listenUrl (server: FastifyInstance): string {
  const addr = server.server.address()
  if (addr === null || typeof addr === 'string') return String(addr)
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${addr.port}`
}

/** with OPENOPERATOR_URL unset, the embedded simulator started and the configuration pointed at it (development only) */
async function withEmbeddedSimulator (base: Config, logger: Logger): Promise<{ config: Config; simulator: Simulator | undefined }> {
  if (!base.embeddedSimulator) return { config: base, simulator: undefined }
  const secret = randomBytes(24).toString('base64url')
  const { faults, completeAfterMs } = base.simulatorOptions
  const campaignControl = base.simulatorProfile === 'campaign-control' ? { completeAfterMs } : undefined
  const simulator = await startSimulator({ secret, host: '127.0.0.1', port: 0, profile: base.simulatorProfile, protocol: base.simulatorProtocol, faults, campaignControl })
  const config = { ...base, upstream: { ...base.upstream, origin: simulator.url, basePath: '/a2a', secret, plainHttp: true } }
  logger.warn({ upstream: simulator.url, profile: config.simulatorProfile, protocol: config.simulatorProtocol, faults: faults.map((f) => f.text) }, 'OPENOPERATOR_URL is unset: using the embedded simulator (development only)')
  return { config, simulator }
}

/** the static callers: re-read from their file, fixed, none (JWT callers alone), or a development token of all scopes */
function startCallers (config: Config, metrics: GatewayMetrics, logger: Logger): { callers: Caller[] | StaticCallers; devToken: string | undefined } {
  if (config.callers !== undefined && config.callersFile !== undefined) {
    return {
      callers: callersFromFile({
        path: config.callersFile,
        initial: config.callers,
        initialGrants: config.identityGrants,
        log: logger,
        onRefused: (reason) => { metrics.operatorFileRefusals.inc({ file: 'GATEWAY_CALLERS_FILE', reason }) }
      }),
      devToken: undefined
    }
  }
  if (config.callers !== undefined) return { callers: fixedCallers(config.callers, config.identityGrants), devToken: undefined }
  // JWT callers alone (loadConfig refuses production with neither): no static caller, no token
  if (config.production) return { callers: [], devToken: undefined }
  const devToken = `dev-${randomBytes(24).toString('base64url')}`
  return { callers: [{ name: 'dev', tokenSha256: sha256Hex(devToken), scopes: ['read', 'control', 'admin'], controllerId: 'dev' }], devToken }
}

/** what a person starting the gateway needs on stdout: the development token, once, and where the simulator's faults are set */
function printStart (print: (line: string) => void, url: string, devToken: string | undefined, simulator: Simulator | undefined, secrets: Set<string>, consoleOn: boolean): void {
  if (devToken !== undefined) {
    // printed once, on stdout, never logged: the scrubber also keeps it out of the log
    print(`dev token (all scopes, this run only): ${devToken}`)
    print(`try: curl -H "Authorization: Bearer ${devToken}" ${url}/v1/supervisor/health`)
    secrets.add(devToken)
  }
  // beside the development token only: a production start writes nothing to stdout but its log
  if (consoleOn) print(`operator console: ${url}/console/ (sign in with the token above)`)
  if (simulator !== undefined) {
    // where a person sets faults at run time (docs/operating.md#simulator-faults); its port is random
    print(`embedded simulator: ${simulator.url} (faults, from this machine only: curl ${simulator.url}/_sim/faults)`)
  }
}
