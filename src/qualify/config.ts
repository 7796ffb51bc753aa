// The qualify command's configuration (docs/design.md#qualification): the few variables it
// reads, validated with zod. It receives the environment from the CLI and never reads
// process.env itself. It imports nothing of the gateway's configuration (src/config/): the
// qualification stands apart from the gateway it qualifies (docs/design.md#walls,
// test/qualify/import-wall.test.ts); the URL rules are the gateway's own (src/core/upstream-url.ts).
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { inlineOrFile, readSecretFile } from '../core/env-files.js'
import { parseOpenOperatorUrl } from '../core/upstream-url.js'
import type { JSONWebKeySet } from 'jose'
import { parseJwks } from '../core/trusted-keys.js'

export type QualifyEnv = Record<string, string | undefined>

const MiB = 1024 * 1024
const SHA_PATTERN = /^[0-9a-f]{40}$/
const unsetIfEmpty = (v: unknown): unknown => (v === '' ? undefined : v)
const int = (min: number, max: number, fallback: number) => z.preprocess(unsetIfEmpty, z.coerce.number().int().min(min).max(max).default(fallback))

const QualifyEnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  OPENOPERATOR_URL: z.preprocess(unsetIfEmpty, z.string({ error: 'required: the deployment to qualify' })),
  EXPECTED_SOURCE_SHA: z.preprocess(unsetIfEmpty, z.string({ error: 'required: the full 40-hex commit the deployment must run' })
    .regex(SHA_PATTERN, 'must be a full 40-hex commit in lower case (as git prints it), compared exactly')),
  UPSTREAM_AUTH_SCHEME: z.preprocess(unsetIfEmpty, z.enum(['bearer', 'x-api-key']).default('bearer')),
  UPSTREAM_CONNECT_TIMEOUT_MS: int(1, 600_000, 5000),
  UPSTREAM_READ_TIMEOUT_MS: int(1, 600_000, 15_000),
  UPSTREAM_MAX_RESPONSE_BYTES: int(1024, 1024 * MiB, 4 * MiB),
  UPSTREAM_MAX_TASK_RESPONSE_BYTES: int(1024, 1024 * MiB, 16 * MiB)
})

export interface QualifyConfig {
  /** origin of OPENOPERATOR_URL: the only place probes and the secret go */
  origin: string
  /** the URL's path without a trailing slash ('' at the root); /health is `${prefix}/health` */
  prefix: string
  secret: string
  authScheme: 'bearer' | 'x-api-key'
  caPem: string | undefined
  expectedSourceSha: string
  connectTimeoutMs: number
  /** the bound of one assertion, every request and poll in it included */
  assertionTimeoutMs: number
  maxResponseBytes: number
  maxTaskResponseBytes: number
  /** GATEWAY_CARD_JWKS_FILE's keys: the card's signature is then verified, else only reported */
  cardJwks: JSONWebKeySet | undefined
  warnings: string[]
}

export class QualifyConfigError extends Error {
  constructor (readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'QualifyConfigError'
  }
}

export function loadQualifyConfig (env: QualifyEnv, deps: { readFile?: (path: string) => string } = {}): QualifyConfig {
  const read = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'))
  const problems: string[] = []
  const warnings: string[] = []
  const parsed = QualifyEnvSchema.safeParse(env)
  if (!parsed.success) for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}: ${issue.message}`)

  const readFile = (file: string, variable: string): string | undefined => readSecretFile(file, variable, problems, read)

  const before = problems.length
  const secret = inlineOrFile(env, 'SPYNEL_AGENT_ZERO_API_KEY', 'SPYNEL_AGENT_ZERO_API_KEY_FILE', problems, read)
  if (secret === undefined && problems.length === before) problems.push('SPYNEL_AGENT_ZERO_API_KEY (or SPYNEL_AGENT_ZERO_API_KEY_FILE): required, the qualification checks that the deployment accepts it')
  if (secret !== undefined && !/^[\x21-\x7e]+$/.test(secret)) problems.push('SPYNEL_AGENT_ZERO_API_KEY: must be printable ASCII without spaces')

  let caPem: string | undefined
  if (env.UPSTREAM_CA_FILE !== undefined && env.UPSTREAM_CA_FILE !== '') {
    caPem = readFile(env.UPSTREAM_CA_FILE, 'UPSTREAM_CA_FILE')
    if (caPem !== undefined && !caPem.includes('-----BEGIN CERTIFICATE-----')) problems.push('UPSTREAM_CA_FILE: not a PEM certificate bundle')
  }

  let cardJwks: JSONWebKeySet | undefined
  if (env.GATEWAY_CARD_JWKS_FILE !== undefined && env.GATEWAY_CARD_JWKS_FILE !== '') {
    const text = readFile(env.GATEWAY_CARD_JWKS_FILE, 'GATEWAY_CARD_JWKS_FILE')
    if (text !== undefined) {
      const keys = parseJwks(text)
      if ('jwks' in keys) cardJwks = keys.jwks
      else for (const p of keys.problems) problems.push(`GATEWAY_CARD_JWKS_FILE: ${p}`)
    }
  }

  let target: { origin: string; prefix: string } | undefined
  if (parsed.success) {
    const u = parseOpenOperatorUrl(parsed.data.OPENOPERATOR_URL, parsed.data.NODE_ENV === 'production')
    if (typeof u === 'string') problems.push(u)
    else {
      target = { origin: u.origin, prefix: u.path }
      if (u.plainHttp) warnings.push('OPENOPERATOR_URL uses plain http to a loopback host')
    }
  }

  if (problems.length > 0 || !parsed.success || target === undefined || secret === undefined) throw new QualifyConfigError(problems)
  const e = parsed.data
  return {
    origin: target.origin,
    prefix: target.prefix,
    secret,
    authScheme: e.UPSTREAM_AUTH_SCHEME,
    caPem,
    expectedSourceSha: e.EXPECTED_SOURCE_SHA,
    connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
    assertionTimeoutMs: e.UPSTREAM_READ_TIMEOUT_MS,
    maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    maxTaskResponseBytes: e.UPSTREAM_MAX_TASK_RESPONSE_BYTES,
    cardJwks,
    warnings
  }
}
