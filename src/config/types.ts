// What the configuration hands the gateway (docs/design.md#configuration): the Config and its
// parts, types only. The modules that take a part of it (src/http/edges.ts, src/callers/jwt.ts)
// import its type from here, never the loader, so none of them can end up in a circle with it.
import type { JSONWebKeySet } from 'jose'
import type { SigningKey } from './signing-key.js'
import type { Caller, Grants, JwtClaims } from '../../schemas/callers.js'
import type { SimulatorEnvOptions } from '../simulator/env-options.js'
import type { EMBEDDED_SIMULATOR_PROTOCOLS, SIMULATOR_PROFILES } from './env.js'

export interface UpstreamConfig {
  /** origin of OPENOPERATOR_URL: the only place traffic and the secret may go */
  origin: string
  /** A2A base path, e.g. `/a2a` or `/prefix/a2a`; the JSON-RPC endpoint is `${basePath}/` */
  basePath: string
  secret: string | undefined
  authScheme: 'bearer' | 'x-api-key'
  caPem: string | undefined
  connectTimeoutMs: number
  readTimeoutMs: number
  mutationTimeoutMs: number
  maxResponseBytes: number
  maxTaskResponseBytes: number
  cardMaxBytes: number
  /** reads in flight plus reads waiting for an upstream socket; past it a read is shed */
  readQueueMax: number
  /** consecutive timeouts or connect failures that open the circuit breaker */
  breakerFailures: number
  /** how long the breaker stays open before one read probes */
  breakerOpenMs: number
  /** bytes of `tasks/get` answers held at once; past it one is shed */
  bodyBudgetBytes: number
  plainHttp: boolean
}

/** bounds on the API's inbound connections (docs/design.md#http-edges) */
export interface HttpEdgeConfig {
  /** the request line and headers must have arrived within this */
  headersTimeoutMs: number
  /** the whole request, headers and body, must have arrived within this */
  requestTimeoutMs: number
  /** a socket with no byte in either direction for this long is destroyed */
  connectionTimeoutMs: number
  /** an idle keep-alive socket between requests is closed after this */
  keepAliveTimeoutMs: number
  /** past this many open API sockets, new ones are dropped */
  maxConnections: number
  /** past this many open API sockets from one address (IPv6: one /64), its new ones are dropped; 0: no such bound */
  maxConnectionsPerAddress: number
  /** requests on one socket before it is closed (0: no limit) */
  maxRequestsPerSocket: number
}

/** event-loop shedding (the gateway's own sampler, src/http/load-shedding.ts); 0 turns a check off (docs/design.md#load-shedding) */
export interface PressureConfig {
  maxEventLoopDelayMs: number
  maxEventLoopUtilization: number
}

export interface Config {
  pressure: PressureConfig
  production: boolean
  /** no OPENOPERATOR_URL outside production: run the bundled simulator in-process */
  embeddedSimulator: boolean
  /** the embedded simulator's profile (development only) */
  simulatorProfile: typeof SIMULATOR_PROFILES[number]
  simulatorProtocol: typeof EMBEDDED_SIMULATOR_PROTOCOLS[number]
  /** the embedded simulator's faults from the start and a submission's time to `completed` */
  simulatorOptions: SimulatorEnvOptions
  upstream: UpstreamConfig
  /** undefined when no static callers are configured: outside production a dev token is generated; in production the callers are JWT callers alone */
  callers: Caller[] | undefined
  /** grants keyed by the identity of a caller from the identity provider, from the callers text's object form (docs/design.md#grants) */
  identityGrants: ReadonlyMap<string, Grants> | undefined
  /** GATEWAY_REQUIRE_GRANTS: a caller without grants reaches no campaign (docs/design.md#grants) */
  requireGrants: boolean
  /** GATEWAY_CALLERS_FILE's path when the callers came from it: re-read on SIGHUP and on change */
  callersFile: string | undefined
  /** callers from an identity provider (docs/design.md#authentication) */
  jwt: JwtConfig | undefined
  controlEnabled: boolean
  leaseSafetyMs: number
  ledgerUrl: string
  /** resolved records older than this many ms are pruned, never deleted; undefined: kept whole */
  ledgerRetentionMs: number | undefined
  redisUrl: string | undefined
  rateLimitRead: number
  rateLimitControl: number
  /** failed authentications per client address per minute (docs/design.md#rate-limits) */
  rateLimitAuthFailures: number
  host: string
  port: number
  metricsPort: number
  /** the metrics listener's address; HOST unless METRICS_HOST is set */
  metricsHost: string
  /** open sockets on the metrics listener (docs/design.md#http-edges) */
  metricsMaxConnections: number
  /** how long a SIGTERM waits for requests in flight (docs/design.md#shutdown) */
  shutdownGraceMs: number
  /** Fastify's `trustProxy`: which hops may name the client in X-Forwarded-For (docs/design.md#rate-limits) */
  trustProxy: TrustProxy
  discoveryIntervalMs: number
  discoveryMinIntervalMs: number
  /** the trusted card-signing keys (docs/design.md#signed-cards), checked at start */
  cardJwks: { path: string; jwks: JSONWebKeySet } | undefined
  /** the key the front door signs its card with, and the URL the card names (docs/api.md#a2a-front-door) */
  frontCard: { signingKey: SigningKey | undefined; publicUrl: string | undefined }
  http: HttpEdgeConfig
  logLevel: string
  /** the `request completed` line per request (GATEWAY_ACCESS_LOG); error and mutation lines are written regardless */
  accessLog: boolean
  /** the operator's console at /console/ (GATEWAY_CONSOLE; docs/operating.md#console) */
  console: boolean
  /** OpenTelemetry tracing: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER is set (docs/design.md#tracing) */
  tracing: boolean
  warnings: string[]
}

/**
 * What GATEWAY_TRUST_PROXY may say (docs/design.md#rate-limits): nothing is trusted, every hop is
 * (only safe behind an ingress that overwrites X-Forwarded-For), the last n hops (an ingress that
 * appends), or the hops whose address is in a list.
 */
export type TrustProxy = boolean | number | string[]

/** the JWT callers' settings (docs/design.md#authentication), read by jwt.ts, used by src/callers/jwt.ts */
export interface JwtConfig {
  issuer: string
  audience: string
  algorithms: string[]
  leewaySeconds: number
  claims: JwtClaims
  jwks: { file: string; initial: JSONWebKeySet } | { url: string; minRefreshMs: number }
}
