// Configuration (docs/design.md#configuration): the only reader of the environment. One zod schema,
// fail fast with a message naming every bad variable and never echoing a secret.
import { readFileSync } from 'node:fs'
import { FileTooLarge, readCappedFileSync } from '../core/operator-files.js'
import { isIP } from 'node:net'
import { z } from 'zod'
import type { Caller } from '../../schemas/callers.js'
import { CAMPAIGN_LOCK_WAIT_MS } from '../ledger/campaign-locks.js'
import { tracingEnabled } from '../tracing/env.js'
import { isLoopbackHost, parseOpenOperatorUrl } from '../upstream/url.js'
import { fileProblem, inlineOrFile, readSecretFile } from '../core/env-files.js'
import { MIN_SECRET_LENGTH, inFixedAnswers } from '../core/secret-match.js'
import { READABLE, configLines } from '../core/validation.js'
import type { JSONWebKeySet } from 'jose'
import { JwtClaimsSchema, type JwtConfig } from '../callers/jwt.js'
import { ASYMMETRIC_ALGORITHMS, parseJwks } from '../discovery/trusted-keys.js'
import { parseCallers } from '../callers/static.js'
import { frontCardConfig, type SigningKey } from '../front/signing-key.js'
import { simulatorEnvOptions, type SimulatorEnvOptions } from '../simulator/env-options.js'

export type Env = Record<string, string | undefined>

/** what the embedded simulator plays (docs/design.md#embedded-default-and-simulator); OpenOperator today by default */
export const SIMULATOR_PROFILES = ['openoperator', 'campaign-control', 'fasta2a', 'a2a-js'] as const
/** which A2A generation the embedded simulator speaks (docs/design.md#protocol-versions); 0.3, as OpenOperator today, by default */
export const EMBEDDED_SIMULATOR_PROTOCOLS = ['v0.3', 'v1.0', 'dual'] as const

const MiB = 1024 * 1024
const DEFAULT_MIN_DISCOVERY_INTERVAL_MS = 5000
const SHUTDOWN_MARGIN_MS = 1000
const int = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error })
}
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  OPENOPERATOR_URL: z.string().min(1).optional(),
  UPSTREAM_AUTH_SCHEME: z.enum(['bearer', 'x-api-key']).default('bearer'),
  UPSTREAM_CONNECT_TIMEOUT_MS: int(1, 600_000).default(5000),
  UPSTREAM_READ_TIMEOUT_MS: int(1, 600_000).default(15000),
  UPSTREAM_MUTATION_TIMEOUT_MS: int(1, 600_000).default(10000),
  UPSTREAM_MAX_RESPONSE_BYTES: int(1024, 1024 * MiB).default(4 * MiB),
  UPSTREAM_MAX_TASK_RESPONSE_BYTES: int(1024, 1024 * MiB).default(16 * MiB),
  // load shedding (docs/design.md#load-shedding)
  GATEWAY_UPSTREAM_QUEUE_MAX: int(1, 1_000_000).default(128),
  GATEWAY_TASK_BODY_BUDGET_BYTES: int(1024, 64 * 1024 * MiB).default(64 * MiB),
  // the circuit breaker on the upstream (docs/design.md#circuit-breaker)
  GATEWAY_UPSTREAM_BREAKER_FAILURES: int(1, 1000).default(5),
  GATEWAY_UPSTREAM_BREAKER_OPEN_MS: int(100, 600_000).default(10_000),
  GATEWAY_MAX_EVENT_LOOP_DELAY_MS: int(0, 60_000).default(200),
  GATEWAY_MAX_EVENT_LOOP_UTILIZATION: z.coerce.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be a number from 0 to 1').max(1, 'must be a number from 0 to 1').default(0),
  GATEWAY_CONTROL_ENABLED: bool.default(false),
  GATEWAY_LEASE_SAFETY_MS: int(0, 3_600_000).default(2000),
  GATEWAY_LEDGER_URL: z.string().min(1).optional(),
  // resolved records older than this are pruned (params, answers, notes), never deleted; 0 keeps them whole (docs/design.md#request-ids-are-forever)
  GATEWAY_LEDGER_RETENTION_DAYS: int(0, 36_500).default(90),
  GATEWAY_REDIS_URL: z.string().min(1).optional(),
  GATEWAY_RATE_LIMIT_READ: int(1, 10_000_000).default(600),
  GATEWAY_RATE_LIMIT_CONTROL: int(1, 10_000_000).default(60),
  GATEWAY_RATE_LIMIT_AUTH_FAILURES: int(1, 10_000_000).default(30),
  // unset: 0.0.0.0 in production, 127.0.0.1 otherwise (the dev start prints an all-scopes token)
  HOST: z.string().min(1).optional(),
  PORT: int(0, 65535).default(8080),
  METRICS_PORT: int(0, 65535).default(9464),
  METRICS_HOST: z.string().min(1).optional(),
  METRICS_MAX_CONNECTIONS: int(1, 1_000_000).default(64),
  GATEWAY_SHUTDOWN_GRACE_MS: int(0, 600_000).optional(),
  // false, true, a hop count or the ingress's addresses (parseTrustProxy)
  GATEWAY_TRUST_PROXY: z.string().default('false'),
  GATEWAY_DISCOVERY_INTERVAL_MS: int(100, 86_400_000).default(60000),
  // the shortest refresh period a card's Cache-Control may ask for (docs/design.md#card-caching)
  // unset: 5 s, or the interval when that is shorter
  GATEWAY_DISCOVERY_MIN_INTERVAL_MS: int(100, 86_400_000).optional(),
  GATEWAY_CARD_JWKS_FILE: z.string().min(1).optional(),
  // the A2A front door's own card (docs/api.md#a2a-front-door): its signing key (a private JWK),
  // and the public URL it names, required with the key so that no Host header is ever signed
  GATEWAY_CARD_SIGNING_KEY: z.string().min(1).optional(),
  GATEWAY_PUBLIC_URL: z.string().min(1).optional(),
  // callers from an identity provider (docs/design.md#authentication)
  GATEWAY_JWT_ISSUER: z.string().min(1).optional(),
  GATEWAY_JWT_AUDIENCE: z.string().min(1).optional(),
  GATEWAY_JWT_JWKS_URL: z.string().min(1).optional(),
  GATEWAY_JWT_JWKS_FILE: z.string().min(1).optional(),
  GATEWAY_JWT_ALGORITHMS: z.string().min(1).default('RS256,ES256'),
  GATEWAY_JWT_LEEWAY_SECONDS: int(0, 300).default(30),
  GATEWAY_JWT_CLAIMS: z.string().min(1).optional(),
  GATEWAY_JWT_JWKS_MIN_REFRESH_MS: int(100, 86_400_000).default(30_000),
  // the HTTP edges (docs/design.md#http-edges); the connection timeout's default is derived
  GATEWAY_HEADERS_TIMEOUT_MS: int(1, 600_000).default(10_000),
  GATEWAY_REQUEST_TIMEOUT_MS: int(1, 600_000).default(30_000),
  GATEWAY_CONNECTION_TIMEOUT_MS: int(1, 3_600_000).optional(),
  GATEWAY_KEEP_ALIVE_TIMEOUT_MS: int(1, 600_000).default(72_000),
  GATEWAY_MAX_CONNECTIONS: int(1, 1_000_000).default(4096),
  GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: int(0, 1_000_000).optional(),
  GATEWAY_MAX_REQUESTS_PER_SOCKET: int(0, 1_000_000).default(1000),
  GATEWAY_ACCESS_LOG: bool.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SIMULATOR_PROFILE: z.enum(SIMULATOR_PROFILES).default('openoperator'),
  SIMULATOR_PROTOCOL: z.enum(EMBEDDED_SIMULATOR_PROTOCOLS).default('v0.3'),
  // the embedded simulator's faults and task timing (docs/design.md#simulator-faults), checked below
  SIMULATOR_FAULTS: z.string().optional(),
  SIMULATOR_TASK_SECONDS: z.string().optional()
})

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

/**
 * The longest a legitimate request keeps its socket silent: a mutation that waits for its
 * campaign's lock, reads the lease, sends, then reads back (renew) or first reads the bound task
 * (cancel). A read is bounded by one read timeout, so it is always shorter.
 */
export function longestRequestMs (u: { readTimeoutMs: number; mutationTimeoutMs: number }): number {
  return CAMPAIGN_LOCK_WAIT_MS + 2 * u.readTimeoutMs + u.mutationTimeoutMs
}
const CONNECTION_TIMEOUT_MARGIN_MS = 5000

/** event-loop shedding (the gateway's own sampler, src/plugins/load-shedding.ts); 0 turns a check off (docs/design.md#load-shedding) */
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

/** proxy-addr's named ranges, which Fastify accepts in a trust list */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])
const MAX_HOPS = 32

function isAddressOrCidr (entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const slash = entry.indexOf('/')
  const addr = slash < 0 ? entry : entry.slice(0, slash)
  const v = isIP(addr)
  if (v === 0) return false
  if (slash < 0) return true
  const bits = entry.slice(slash + 1)
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128)
}

/** GATEWAY_TRUST_PROXY: `false`/`0`, `true`, a hop count (1–32), or a comma-separated list of addresses and CIDRs */
export function parseTrustProxy (raw: string): TrustProxy | undefined {
  const v = raw.trim()
  if (v === 'false' || v === '0') return false
  if (v === 'true') return true
  if (/^\d+$/.test(v)) {
    const n = Number(v)
    return n >= 1 && n <= MAX_HOPS ? n : undefined
  }
  const list = v.split(',').map((x) => x.trim())
  return list.length > 0 && list.every(isAddressOrCidr) ? list : undefined
}

/** the per-address bound when none is set: a sixteenth of the cap, or no bound behind a trusted ingress */
export function defaultPerAddress (maxConnections: number, trustProxy: TrustProxy): number {
  return trustProxy === false ? Math.ceil(maxConnections / 16) : 0
}

export class ConfigError extends Error {
  constructor (readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

export { isLoopbackHost }

/** Parses OPENOPERATOR_URL into origin and A2A base path, or returns the problem. */
export function parseUpstreamUrl (raw: string, production: boolean): { origin: string; basePath: string; plainHttp: boolean } | string {
  const u = parseOpenOperatorUrl(raw, production)
  return typeof u === 'string' ? u : { origin: u.origin, basePath: `${u.path}/a2a`, plainHttp: u.plainHttp }
}

export interface LoadConfigDeps { readFile?: (path: string) => string }

export function loadConfig (env: Env, deps: LoadConfigDeps = {}): Config {
  const read = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'))
  // the files the gateway re-reads while it serves take the re-read's cap from the start (docs/design.md#operator-files)
  const readOperatorFile = deps.readFile ?? readCappedFileSync
  const problems: string[] = []
  const warnings: string[] = []
  // every problem is named at once (docs/design.md#configuration): a bad variable takes its
  // default for the checks below, and a check across variables skips one that is itself bad
  const parsed = EnvSchema.safeParse(env, READABLE)
  const bad = new Set<string>()
  if (!parsed.success) {
    problems.push(...configLines(parsed.error.issues))
    for (const issue of parsed.error.issues) bad.add(String(issue.path[0]))
  }
  const e = parsed.success ? parsed.data : EnvSchema.parse(Object.fromEntries(Object.entries(env).filter(([k]) => !bad.has(k))))
  const fine = (...names: string[]): boolean => names.every((n) => !bad.has(n))
  const production = e.NODE_ENV === 'production'

  const pick = (inline: string, file: string, reader = read): string | undefined => inlineOrFile(env, inline, file, problems, reader)

  const secret = pick('SPYNEL_AGENT_ZERO_API_KEY', 'SPYNEL_AGENT_ZERO_API_KEY_FILE')
  if (secret !== undefined && !/^[\x21-\x7e]+$/.test(secret)) problems.push('SPYNEL_AGENT_ZERO_API_KEY: must be printable ASCII without spaces')
  // shorter, it could be any word an answer holds, and the secret guard would refuse that answer (docs/design.md#secret-echo)
  else if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) problems.push(`SPYNEL_AGENT_ZERO_API_KEY: must be at least ${MIN_SECRET_LENGTH} characters (a random value: the gateway refuses any answer that contains it)`)
  else if (secret !== undefined && inFixedAnswers(secret)) problems.push('SPYNEL_AGENT_ZERO_API_KEY: occurs in one of the gateway\'s own answers (an error body or a probe\'s answer), which the secret guard would then refuse; use a random value')

  let callers: Caller[] | undefined
  const callersRaw = pick('GATEWAY_CALLERS', 'GATEWAY_CALLERS_FILE', readOperatorFile)
  if (callersRaw !== undefined) {
    const c = parseCallers(callersRaw)
    if ('callers' in c) callers = c.callers
    else problems.push(...c.problems)
  }
  const callersFile = callers !== undefined && (env.GATEWAY_CALLERS === undefined || env.GATEWAY_CALLERS === '') ? env.GATEWAY_CALLERS_FILE : undefined

  let caPem: string | undefined
  if (env.UPSTREAM_CA_FILE !== undefined && env.UPSTREAM_CA_FILE !== '') {
    caPem = readSecretFile(env.UPSTREAM_CA_FILE, 'UPSTREAM_CA_FILE', problems, read)
    if (caPem !== undefined && !caPem.includes('-----BEGIN CERTIFICATE-----')) problems.push('UPSTREAM_CA_FILE: not a PEM certificate bundle')
  }

  let origin = 'http://127.0.0.1'
  let basePath = '/a2a'
  let plainHttp = true
  if (e.OPENOPERATOR_URL !== undefined) {
    const u = parseUpstreamUrl(e.OPENOPERATOR_URL, production)
    if (typeof u === 'string') problems.push(u)
    else {
      ({ origin, basePath, plainHttp } = u)
      if (plainHttp) warnings.push('OPENOPERATOR_URL uses plain http to a loopback host; never do this in production')
    }
  }

  // Node's TLS reads it at each connection: the upstream client sets rejectUnauthorized itself,
  // but every other TLS connection of the process (Redis, the OTLP exporter) would go unchecked
  // (docs/design.md#production)
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    if (production) problems.push('NODE_TLS_REJECT_UNAUTHORIZED: must not be 0 when NODE_ENV=production (it turns off certificate checks for every TLS connection of the process); unset it')
    else warnings.push('NODE_TLS_REJECT_UNAUTHORIZED=0 is set: the upstream\'s certificate is verified regardless, but other TLS connections of this process (Redis, the OTLP exporter) are not; never do this in production')
  }

  const jwt = jwtConfig(e, production, problems, readOperatorFile)

  if (production) {
    const missing: string[] = []
    if (e.OPENOPERATOR_URL === undefined && fine('OPENOPERATOR_URL')) missing.push('OPENOPERATOR_URL')
    if (secret === undefined && !problems.some((p) => p.startsWith('SPYNEL_AGENT_ZERO_API_KEY'))) missing.push('SPYNEL_AGENT_ZERO_API_KEY (or SPYNEL_AGENT_ZERO_API_KEY_FILE)')
    // the callers: static ones, JWT callers from an identity provider, or both (docs/design.md#production)
    if (callers === undefined && jwt === undefined && !problems.some((p) => p.startsWith('GATEWAY_CALLERS'))) missing.push('GATEWAY_CALLERS (or GATEWAY_CALLERS_FILE), or JWT callers (GATEWAY_JWT_*)')
    if (e.GATEWAY_LEDGER_URL === undefined && fine('GATEWAY_LEDGER_URL')) missing.push('GATEWAY_LEDGER_URL')
    for (const m of missing) problems.push(`${m}: required when NODE_ENV=production`)
  } else if (e.OPENOPERATOR_URL !== undefined && secret === undefined) {
    warnings.push('no upstream secret is configured; upstream calls carry no credential')
  }

  const ledgerUrl = e.GATEWAY_LEDGER_URL ?? 'sqlite:./data/ledger.db'
  if (!/^sqlite:.+/.test(ledgerUrl) && !/^postgres(ql)?:\/\//.test(ledgerUrl)) problems.push('GATEWAY_LEDGER_URL: must be sqlite:<path> or postgres://…')

  const trustProxy = parseTrustProxy(e.GATEWAY_TRUST_PROXY)
  if (trustProxy === undefined) {
    problems.push(`GATEWAY_TRUST_PROXY: must be false, true, a hop count (1–${MAX_HOPS}) or a comma-separated list of addresses or CIDRs (e.g. 10.0.0.0/8,fd00::/8)`)
  } else if (trustProxy === true) {
    warnings.push('GATEWAY_TRUST_PROXY=true trusts every X-Forwarded-For entry, the ones a client wrote included: safe only behind an ingress that overwrites the header; behind one that appends, give the ingress\'s addresses or its hop count (1)')
  } else if (typeof trustProxy === 'number') {
    warnings.push(`GATEWAY_TRUST_PROXY=${trustProxy} trusts the last ${trustProxy} hop(s) whoever connects: a client that reaches the gateway directly, past the ingress, chooses its own address; safe only if nothing but the ingress reaches PORT, else give the ingress's addresses`)
  }

  if (fine('GATEWAY_HEADERS_TIMEOUT_MS', 'GATEWAY_REQUEST_TIMEOUT_MS') && e.GATEWAY_HEADERS_TIMEOUT_MS > e.GATEWAY_REQUEST_TIMEOUT_MS) problems.push('GATEWAY_HEADERS_TIMEOUT_MS: must not exceed GATEWAY_REQUEST_TIMEOUT_MS')
  const longest = longestRequestMs({ readTimeoutMs: e.UPSTREAM_READ_TIMEOUT_MS, mutationTimeoutMs: e.UPSTREAM_MUTATION_TIMEOUT_MS })
  const connectionTimeoutMs = e.GATEWAY_CONNECTION_TIMEOUT_MS ?? longest + CONNECTION_TIMEOUT_MARGIN_MS
  if (connectionTimeoutMs <= longest) warnings.push(`GATEWAY_CONNECTION_TIMEOUT_MS is not above the longest legitimate request (${longest} ms): a slow mutation may lose its socket before it answers`)

  if (fine('GATEWAY_DISCOVERY_MIN_INTERVAL_MS', 'GATEWAY_DISCOVERY_INTERVAL_MS') && e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS !== undefined && e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS > e.GATEWAY_DISCOVERY_INTERVAL_MS) problems.push('GATEWAY_DISCOVERY_MIN_INTERVAL_MS: must not exceed GATEWAY_DISCOVERY_INTERVAL_MS (the two bound the refresh period a card\'s Cache-Control may ask for)')

  const { signingKey, publicUrl } = frontCardConfig(e.GATEWAY_CARD_SIGNING_KEY, e.GATEWAY_PUBLIC_URL, problems)
  let cardJwks: Config['cardJwks']
  if (e.GATEWAY_CARD_JWKS_FILE !== undefined) {
    let text: string | undefined
    try {
      text = readOperatorFile(e.GATEWAY_CARD_JWKS_FILE)
    } catch (err) {
      problems.push(err instanceof FileTooLarge ? fileProblem('GATEWAY_CARD_JWKS_FILE', err) : 'GATEWAY_CARD_JWKS_FILE: cannot be read')
    }
    if (text !== undefined) {
      const parsed = parseJwks(text)
      if ('jwks' in parsed) cardJwks = { path: e.GATEWAY_CARD_JWKS_FILE, jwks: parsed.jwks }
      else for (const p of parsed.problems) problems.push(`GATEWAY_CARD_JWKS_FILE: ${p}`)
    }
  }

  if (fine('GATEWAY_TASK_BODY_BUDGET_BYTES', 'UPSTREAM_MAX_TASK_RESPONSE_BYTES') && e.GATEWAY_TASK_BODY_BUDGET_BYTES < e.UPSTREAM_MAX_TASK_RESPONSE_BYTES) {
    // a budget smaller than one allowed answer would shed that answer every time
    problems.push('GATEWAY_TASK_BODY_BUDGET_BYTES: must be at least UPSTREAM_MAX_TASK_RESPONSE_BYTES')
  }

  // a development start answers an all-scopes token it printed: only this machine reaches it
  // unless HOST says otherwise; production (the image, the manifests) listens on every interface
  const host = e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1')
  if (e.HOST === undefined && !production) warnings.push('HOST is unset: both listeners bind 127.0.0.1, reachable from this machine only (the development default); set HOST=0.0.0.0 to listen on every interface')

  // read only where the embedded simulator runs; elsewhere a leftover value is said, not refused
  let simulatorOptions: SimulatorEnvOptions = { faults: [], completeAfterMs: undefined }
  const simulatorEnv = { SIMULATOR_FAULTS: e.SIMULATOR_FAULTS, SIMULATOR_TASK_SECONDS: e.SIMULATOR_TASK_SECONDS }
  if (e.OPENOPERATOR_URL === undefined && !production) {
    const sim = simulatorEnvOptions(simulatorEnv, e.SIMULATOR_PROFILE === 'campaign-control')
    if (sim.ok) simulatorOptions = sim.options
    else problems.push(...sim.problems)
  } else {
    for (const name of Object.keys(simulatorEnv) as Array<keyof typeof simulatorEnv>) {
      if (simulatorEnv[name] !== undefined) warnings.push(`${name} is set but ignored: it is for the embedded simulator, which runs only when OPENOPERATOR_URL is unset outside production`)
    }
  }

  if (problems.length > 0) throw new ConfigError(problems)

  return {
    production,
    embeddedSimulator: e.OPENOPERATOR_URL === undefined,
    simulatorProfile: e.SIMULATOR_PROFILE,
    simulatorProtocol: e.SIMULATOR_PROTOCOL,
    simulatorOptions,
    upstream: {
      origin,
      basePath,
      secret,
      authScheme: e.UPSTREAM_AUTH_SCHEME,
      caPem,
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      readTimeoutMs: e.UPSTREAM_READ_TIMEOUT_MS,
      mutationTimeoutMs: e.UPSTREAM_MUTATION_TIMEOUT_MS,
      maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
      maxTaskResponseBytes: e.UPSTREAM_MAX_TASK_RESPONSE_BYTES,
      cardMaxBytes: MiB,
      readQueueMax: e.GATEWAY_UPSTREAM_QUEUE_MAX,
      breakerFailures: e.GATEWAY_UPSTREAM_BREAKER_FAILURES,
      breakerOpenMs: e.GATEWAY_UPSTREAM_BREAKER_OPEN_MS,
      bodyBudgetBytes: e.GATEWAY_TASK_BODY_BUDGET_BYTES,
      plainHttp
    },
    callers,
    callersFile,
    jwt,
    controlEnabled: e.GATEWAY_CONTROL_ENABLED,
    leaseSafetyMs: e.GATEWAY_LEASE_SAFETY_MS,
    ledgerUrl,
    ledgerRetentionMs: e.GATEWAY_LEDGER_RETENTION_DAYS === 0 ? undefined : e.GATEWAY_LEDGER_RETENTION_DAYS * 86_400_000,
    redisUrl: e.GATEWAY_REDIS_URL,
    rateLimitRead: e.GATEWAY_RATE_LIMIT_READ,
    rateLimitControl: e.GATEWAY_RATE_LIMIT_CONTROL,
    pressure: { maxEventLoopDelayMs: e.GATEWAY_MAX_EVENT_LOOP_DELAY_MS, maxEventLoopUtilization: e.GATEWAY_MAX_EVENT_LOOP_UTILIZATION },
    rateLimitAuthFailures: e.GATEWAY_RATE_LIMIT_AUTH_FAILURES,
    host,
    port: e.PORT,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST ?? host,
    metricsMaxConnections: e.METRICS_MAX_CONNECTIONS,
    // the drain waits for the longest legitimate request, plus a margin (docs/design.md#shutdown)
    shutdownGraceMs: e.GATEWAY_SHUTDOWN_GRACE_MS ?? longest + SHUTDOWN_MARGIN_MS,
    trustProxy: trustProxy!,
    discoveryIntervalMs: e.GATEWAY_DISCOVERY_INTERVAL_MS,
    discoveryMinIntervalMs: Math.min(e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS ?? DEFAULT_MIN_DISCOVERY_INTERVAL_MS, e.GATEWAY_DISCOVERY_INTERVAL_MS),
    cardJwks,
    frontCard: { signingKey, publicUrl },
    http: {
      headersTimeoutMs: e.GATEWAY_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
      connectionTimeoutMs,
      keepAliveTimeoutMs: e.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.GATEWAY_MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.GATEWAY_MAX_CONNECTIONS_PER_ADDRESS ?? defaultPerAddress(e.GATEWAY_MAX_CONNECTIONS, trustProxy!),
      maxRequestsPerSocket: e.GATEWAY_MAX_REQUESTS_PER_SOCKET
    },
    logLevel: e.LOG_LEVEL,
    accessLog: e.GATEWAY_ACCESS_LOG,
    tracing: tracingEnabled(env),
    warnings
  }
}

const JWT_VARIABLES = ['GATEWAY_JWT_ISSUER', 'GATEWAY_JWT_AUDIENCE', 'GATEWAY_JWT_JWKS_URL', 'GATEWAY_JWT_JWKS_FILE', 'GATEWAY_JWT_CLAIMS'] as const

/** the JWT callers' settings, or undefined when none is set; problems named as the others */
function jwtConfig (e: z.infer<typeof EnvSchema>, production: boolean, problems: string[], read: (p: string) => string): JwtConfig | undefined {
  if (JWT_VARIABLES.every((v) => e[v] === undefined)) return undefined
  const before = problems.length
  if (e.GATEWAY_JWT_ISSUER === undefined) problems.push('GATEWAY_JWT_ISSUER: required when JWT callers are configured')
  if (e.GATEWAY_JWT_AUDIENCE === undefined) problems.push('GATEWAY_JWT_AUDIENCE: required when JWT callers are configured')
  const algorithms = e.GATEWAY_JWT_ALGORITHMS.split(',').map((a) => a.trim())
  for (const a of algorithms) {
    if (/^HS/i.test(a)) problems.push(`GATEWAY_JWT_ALGORITHMS: ${a} is refused (HMAC: a shared secret, and the key confusion of verifying one with a public key)`)
    else if (a.toLowerCase() === 'none') problems.push('GATEWAY_JWT_ALGORITHMS: none is refused (an unsigned token)')
    else if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a)) problems.push(`GATEWAY_JWT_ALGORITHMS: ${a === '' ? 'an empty entry' : a} is not one of ${ASYMMETRIC_ALGORITHMS.join(', ')}`)
  }
  let claims = JwtClaimsSchema.parse({})
  if (e.GATEWAY_JWT_CLAIMS !== undefined) {
    let json: unknown
    try {
      json = JSON.parse(e.GATEWAY_JWT_CLAIMS)
    } catch {
      problems.push('GATEWAY_JWT_CLAIMS: not valid JSON')
    }
    if (json !== undefined) {
      const c = JwtClaimsSchema.safeParse(json, READABLE)
      if (c.success) claims = c.data
      else problems.push(...configLines(c.error.issues, 'GATEWAY_JWT_CLAIMS'))
    }
  }
  let jwks: JwtConfig['jwks'] | undefined
  if ((e.GATEWAY_JWT_JWKS_URL === undefined) === (e.GATEWAY_JWT_JWKS_FILE === undefined)) {
    problems.push('GATEWAY_JWT_JWKS_URL, GATEWAY_JWT_JWKS_FILE: set exactly one (where the identity provider\'s keys are)')
  } else if (e.GATEWAY_JWT_JWKS_URL !== undefined) {
    const u = parseOpenOperatorUrl(e.GATEWAY_JWT_JWKS_URL, production)
    if (typeof u === 'string') problems.push(u.replaceAll('OPENOPERATOR_URL', 'GATEWAY_JWT_JWKS_URL'))
    else jwks = { url: new URL(e.GATEWAY_JWT_JWKS_URL).href, minRefreshMs: e.GATEWAY_JWT_JWKS_MIN_REFRESH_MS }
  } else {
    let text: string | undefined
    try {
      text = read(e.GATEWAY_JWT_JWKS_FILE!)
    } catch (err) {
      problems.push(err instanceof FileTooLarge ? fileProblem('GATEWAY_JWT_JWKS_FILE', err) : 'GATEWAY_JWT_JWKS_FILE: cannot be read')
    }
    if (text !== undefined) {
      const parsed = parseJwks(text)
      if ('jwks' in parsed) jwks = { file: e.GATEWAY_JWT_JWKS_FILE!, initial: parsed.jwks }
      else for (const p of parsed.problems) problems.push(`GATEWAY_JWT_JWKS_FILE: ${p}`)
    }
  }
  if (problems.length > before || jwks === undefined) return undefined
  return { issuer: e.GATEWAY_JWT_ISSUER!, audience: e.GATEWAY_JWT_AUDIENCE!, algorithms, leewaySeconds: e.GATEWAY_JWT_LEEWAY_SECONDS, claims, jwks }
}

export { redactUrl } from '../http/redact-url.js'
