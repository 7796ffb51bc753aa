// The environment the gateway reads (docs/design.md#configuration): its type, and the one zod
// schema of every plain variable with its bounds and default. A leaf (zod alone), so the modules
// that read a variable of their own (src/config/tracing.ts) take the type from here, not from the
// configuration that imports them. The checks across variables and the files are in load.ts.
import { z } from 'zod'

export type Env = Record<string, string | undefined>

/** what the embedded simulator plays (docs/design.md#embedded-default-and-simulator); OpenOperator today by default */
export const SIMULATOR_PROFILES = ['openoperator', 'campaign-control', 'fasta2a', 'a2a-js'] as const
/** which A2A generation the embedded simulator speaks (docs/design.md#protocol-versions); 0.3, as OpenOperator today, by default */
export const EMBEDDED_SIMULATOR_PROTOCOLS = ['v0.3', 'v1.0', 'dual'] as const

export const MiB = 1024 * 1024
const int = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error })
}
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')

export const EnvSchema = z.object({
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
  // a caller without grants reaches no campaign (docs/design.md#grants); unset, every campaign
  GATEWAY_REQUIRE_GRANTS: bool.default(false),
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
  // the operator's console at /console/ (docs/operating.md#console): on unless set false
  GATEWAY_CONSOLE: bool.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SIMULATOR_PROFILE: z.enum(SIMULATOR_PROFILES).default('openoperator'),
  SIMULATOR_PROTOCOL: z.enum(EMBEDDED_SIMULATOR_PROTOCOLS).default('v0.3'),
  // the embedded simulator's faults and task timing (docs/design.md#simulator-faults), checked in simulator.ts
  SIMULATOR_FAULTS: z.string().optional(),
  SIMULATOR_TASK_SECONDS: z.string().optional()
})

/** the environment once the schema has read it: defaults filled, numbers and flags parsed */
export type ParsedEnv = z.infer<typeof EnvSchema>
