// loadConfig (docs/design.md#configuration): the only reader of the environment. One zod schema
// (env.ts), then the checks across variables and the files named, concern by concern, in the
// order their problems are told; it fails fast with a message naming every bad variable and
// never echoing a secret.
import { readFileSync } from 'node:fs'
import { inlineOrFile } from '../core/env-files.js'
import { readCappedFileSync } from '../core/operator-files.js'
import { READABLE, configLines } from '../core/validation.js'
import { tracingEnabled } from './tracing.js'
import { jwtConfig, staticCallers } from './callers.js'
import { discoverySettings } from './discovery.js'
import { EnvSchema, type Env, type ParsedEnv } from './env.js'
import { httpEdgeConfig, requestBounds, shutdownGraceMs } from './http.js'
import { simulatorSettings } from './simulator.js'
import { trustProxySetting } from './trust-proxy.js'
import type { Config } from './types.js'
import { checkSecret, checkTlsRejectUnauthorized, upstreamCa, upstreamConfig, upstreamTarget } from './upstream.js'

export class ConfigError extends Error {
  constructor (readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

export interface LoadConfigDeps { readFile?: (path: string) => string }

export function loadConfig (env: Env, deps: LoadConfigDeps = {}): Config {
  const read = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'))
  // the files the gateway re-reads while it serves take the re-read's cap from the start (docs/design.md#operator-files)
  const readOperatorFile = deps.readFile ?? readCappedFileSync
  const problems: string[] = []
  const warnings: string[] = []
  const { e, fine } = parseEnv(env, problems)
  const production = e.NODE_ENV === 'production'

  const pick = (inline: string, file: string, reader = read): string | undefined => inlineOrFile(env, inline, file, problems, reader)

  const secret = pick('SPYNEL_AGENT_ZERO_API_KEY', 'SPYNEL_AGENT_ZERO_API_KEY_FILE')
  checkSecret(secret, problems)
  const { callers, identityGrants, callersFile } = staticCallers(env, pick('GATEWAY_CALLERS', 'GATEWAY_CALLERS_FILE', readOperatorFile), problems)
  const caPem = upstreamCa(env, problems, read)
  const target = upstreamTarget(e, production, problems, warnings)
  checkTlsRejectUnauthorized(env, production, problems, warnings)
  const jwt = jwtConfig(e, production, problems, readOperatorFile)
  // the object form may hold a grants table and no static caller: it is for JWT callers' grants
  if (callers !== undefined && callers.length === 0 && jwt === undefined && !problems.some((p) => p.startsWith('GATEWAY_JWT'))) {
    problems.push(`${env.GATEWAY_CALLERS === undefined || env.GATEWAY_CALLERS === '' ? 'GATEWAY_CALLERS_FILE' : 'GATEWAY_CALLERS'}: holds no static caller, and no JWT callers (GATEWAY_JWT_*) are configured to use its grants`)
  }

  requiredVariables({ e, fine, production, secret, callers, jwt }, problems, warnings)

  const ledgerUrl = ledgerUrlOf(e, problems)

  const trustProxy = trustProxySetting(e.GATEWAY_TRUST_PROXY, problems, warnings)
  const bounds = requestBounds(e, fine, problems, warnings)
  const discovery = discoverySettings(e, fine, problems, warnings, readOperatorFile)

  if (fine('GATEWAY_TASK_BODY_BUDGET_BYTES', 'UPSTREAM_MAX_TASK_RESPONSE_BYTES') && e.GATEWAY_TASK_BODY_BUDGET_BYTES < e.UPSTREAM_MAX_TASK_RESPONSE_BYTES) {
    // a budget smaller than one allowed answer would shed that answer every time
    problems.push('GATEWAY_TASK_BODY_BUDGET_BYTES: must be at least UPSTREAM_MAX_TASK_RESPONSE_BYTES')
  }

  const host = listenHost(e, production, warnings)

  const simulatorOptions = simulatorSettings(e, production, problems, warnings)

  if (problems.length > 0 || trustProxy === undefined) throw new ConfigError(problems)

  return {
    production,
    embeddedSimulator: e.OPENOPERATOR_URL === undefined,
    simulatorProfile: e.SIMULATOR_PROFILE,
    simulatorProtocol: e.SIMULATOR_PROTOCOL,
    simulatorOptions,
    upstream: upstreamConfig(e, target, secret, caPem),
    callers,
    identityGrants,
    callersFile,
    jwt,
    requireGrants: e.GATEWAY_REQUIRE_GRANTS,
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
    shutdownGraceMs: shutdownGraceMs(e, bounds),
    trustProxy,
    ...discovery,
    http: httpEdgeConfig(e, bounds, trustProxy),
    logLevel: e.LOG_LEVEL,
    accessLog: e.GATEWAY_ACCESS_LOG,
    console: e.GATEWAY_CONSOLE,
    tracing: tracingEnabled(env),
    warnings
  }
}

/**
 * the environment through the one schema. Every problem is named at once (docs/design.md#configuration):
 * a bad variable takes its default for the checks after it, and `fine` tells a check across
 * variables to skip one that is itself bad
 */
function parseEnv (env: Env, problems: string[]): { e: ParsedEnv; fine: (...names: string[]) => boolean } {
  const parsed = EnvSchema.safeParse(env, READABLE)
  const bad = new Set<string>()
  if (!parsed.success) {
    problems.push(...configLines(parsed.error.issues))
    for (const issue of parsed.error.issues) bad.add(String(issue.path[0]))
  }
  const e = parsed.success ? parsed.data : EnvSchema.parse(Object.fromEntries(Object.entries(env).filter(([k]) => !bad.has(k))))
  return { e, fine: (...names) => names.every((n) => !bad.has(n)) }
}

interface Required {
  e: ParsedEnv
  fine: (...names: string[]) => boolean
  production: boolean
  secret: string | undefined
  callers: Config['callers']
  jwt: Config['jwt']
}

/** what production cannot start without (docs/design.md#production), each missing one named; a warning for a credential-less remote elsewhere */
function requiredVariables ({ e, fine, production, secret, callers, jwt }: Required, problems: string[], warnings: string[]): void {
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
}

/** the ledger's URL: SQLite in ./data by default, else sqlite:<path> or postgres://… */
function ledgerUrlOf (e: ParsedEnv, problems: string[]): string {
  const ledgerUrl = e.GATEWAY_LEDGER_URL ?? 'sqlite:./data/ledger.db'
  if (!/^sqlite:.+/.test(ledgerUrl) && !/^postgres(ql)?:\/\//.test(ledgerUrl)) problems.push('GATEWAY_LEDGER_URL: must be sqlite:<path> or postgres://…')
  return ledgerUrl
}

function listenHost (e: ParsedEnv, production: boolean, warnings: string[]): string {
  // a development start answers an all-scopes token it printed: only this machine reaches it
  // unless HOST says otherwise; production (the image, the manifests) listens on every interface
  if (e.HOST === undefined && !production) warnings.push('HOST is unset: both listeners bind 127.0.0.1, reachable from this machine only (the development default); set HOST=0.0.0.0 to listen on every interface')
  return e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1')
}
