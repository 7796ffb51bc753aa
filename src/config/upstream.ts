// The upstream's settings (docs/design.md#upstream-wire-rules, docs/design.md#production): its
// URL (one origin, https unless loopback in development), the secret's own rules
// (docs/design.md#secret-echo), the CA bundle, and Node's process-wide TLS switch.
import { readSecretFile, type ReadFile } from '../core/env-files.js'
import { MIN_SECRET_LENGTH, inFixedAnswers } from '../core/secret-match.js'
import { parseOpenOperatorUrl } from '../core/upstream-url.js'
import { MiB, type Env, type ParsedEnv } from './env.js'
import type { UpstreamConfig } from './types.js'

/** Parses OPENOPERATOR_URL into origin and A2A base path, or returns the problem. */
export function parseUpstreamUrl (raw: string, production: boolean): { origin: string; basePath: string; plainHttp: boolean } | string {
  const u = parseOpenOperatorUrl(raw, production)
  return typeof u === 'string' ? u : { origin: u.origin, basePath: `${u.path}/a2a`, plainHttp: u.plainHttp }
}

/** the secret's problems: printable, long enough, in none of the gateway's own answers */
export function checkSecret (secret: string | undefined, problems: string[]): void {
  if (secret !== undefined && !/^[\x21-\x7e]+$/.test(secret)) problems.push('SPYNEL_AGENT_ZERO_API_KEY: must be printable ASCII without spaces')
  // shorter, it could be any word an answer holds, and the secret guard would refuse that answer (docs/design.md#secret-echo)
  else if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) problems.push(`SPYNEL_AGENT_ZERO_API_KEY: must be at least ${MIN_SECRET_LENGTH} characters (a random value: the gateway refuses any answer that contains it)`)
  else if (secret !== undefined && inFixedAnswers(secret)) problems.push('SPYNEL_AGENT_ZERO_API_KEY: occurs in one of the gateway\'s own answers (an error body or a probe\'s answer), which the secret guard would then refuse; use a random value')
}

/** UPSTREAM_CA_FILE's bundle, when set */
export function upstreamCa (env: Env, problems: string[], read: ReadFile): string | undefined {
  if (env.UPSTREAM_CA_FILE === undefined || env.UPSTREAM_CA_FILE === '') return undefined
  const caPem = readSecretFile(env.UPSTREAM_CA_FILE, 'UPSTREAM_CA_FILE', problems, read)
  if (caPem !== undefined && !caPem.includes('-----BEGIN CERTIFICATE-----')) problems.push('UPSTREAM_CA_FILE: not a PEM certificate bundle')
  return caPem
}

export interface UpstreamTarget { origin: string; basePath: string; plainHttp: boolean }

/** where the upstream is; the embedded simulator's loopback address when OPENOPERATOR_URL is unset */
export function upstreamTarget (e: ParsedEnv, production: boolean, problems: string[], warnings: string[]): UpstreamTarget {
  const target = { origin: 'http://127.0.0.1', basePath: '/a2a', plainHttp: true }
  if (e.OPENOPERATOR_URL === undefined) return target
  const u = parseUpstreamUrl(e.OPENOPERATOR_URL, production)
  if (typeof u === 'string') {
    problems.push(u)
    return target
  }
  if (u.plainHttp) warnings.push('OPENOPERATOR_URL uses plain http to a loopback host; never do this in production')
  return u
}

/**
 * Node's TLS reads it at each connection: the upstream client sets rejectUnauthorized itself,
 * but every other TLS connection of the process (Redis, the OTLP exporter) would go unchecked
 * (docs/design.md#production)
 */
export function checkTlsRejectUnauthorized (env: Env, production: boolean, problems: string[], warnings: string[]): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED !== '0') return
  if (production) problems.push('NODE_TLS_REJECT_UNAUTHORIZED: must not be 0 when NODE_ENV=production (it turns off certificate checks for every TLS connection of the process); unset it')
  else warnings.push('NODE_TLS_REJECT_UNAUTHORIZED=0 is set: the upstream\'s certificate is verified regardless, but other TLS connections of this process (Redis, the OTLP exporter) are not; never do this in production')
}

export function upstreamConfig (e: ParsedEnv, target: UpstreamTarget, secret: string | undefined, caPem: string | undefined): UpstreamConfig {
  return {
    origin: target.origin,
    basePath: target.basePath,
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
    plainHttp: target.plainHttp
  }
}
