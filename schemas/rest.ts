// REST bodies of the gateway (docs/design.md#rest-interface): one schema gives validation, the
// type and OpenAPI.
import { z } from 'zod'

/** every failure's `error` (docs/design.md#errors); each operation's document narrows `code` to its own codes */
export const ErrorDetailSchema = z.object({
  code: z.string().describe('A code of the gateway\'s error table; each operation lists the codes it can answer, by status.'),
  message: z.string().describe('The gateway\'s own words: never a remote message, a stack or a secret.'),
  requestId: z.string().optional().describe('The request id of the mutation or Argus read the error is about.'),
  retryable: z.boolean().describe('True only where the same request, sent again (after Retry-After when given), may succeed.'),
  missingPrerequisites: z.array(z.string()).optional().describe('What is missing for the capability (503 capability_unavailable).'),
  reconcile: z.string().optional().describe('The path that reconciles the request (504 ambiguous_write, 409 ambiguity_unresolved).')
}).meta({
  id: 'ErrorDetail',
  example: { code: 'ambiguous_write', message: 'The outcome of the mutation is unknown; reconcile it.', requestId: 'iv-2026-12-01-a1', retryable: false, reconcile: '/v1/campaigns/camp-2026-q4/requests/iv-2026-12-01-a1/reconcile' }
})
export const ErrorBodySchema = z.object({ error: ErrorDetailSchema }).meta({ id: 'Error' })

export const CapabilitySchema = z.object({
  state: z.enum(['available', 'tentative', 'unavailable']),
  reason: z.string()
})

export const UpstreamViewSchema = z.object({
  mode: z.enum(['controller', 'observer']),
  card: z.object({
    name: z.string(),
    version: z.string().nullable(),
    protocolVersion: z.string().nullable(),
    path: z.string(),
    sha256: z.string(),
    skillIds: z.array(z.string())
  }).nullable(),
  cardUrlMismatch: z.boolean(),
  // the protocol generation chosen from the card, and why (docs/design.md#protocol-versions)
  protocol: z.object({
    version: z.enum(['0.3', '1.0']).nullable(),
    reason: z.string(),
    refusedVersion: z.enum(['0.3', '1.0']).nullable(),
    interfaces: z.array(z.object({ protocolBinding: z.string(), protocolVersion: z.string(), url: z.string(), atEndpoint: z.boolean() }))
  }).nullable(),
  // the held card's signature (docs/design.md#signed-cards): verified only against GATEWAY_CARD_JWKS_FILE
  signature: z.object({
    state: z.enum(['absent', 'present', 'verified', 'failed']),
    keyId: z.string().nullable(),
    algorithm: z.string().nullable(),
    reason: z.string()
  }).nullable(),
  nextRefreshAt: z.string().nullable(),
  lastRefreshAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  consecutiveFailures: z.number().int(),
  lastError: z.string().nullable(),
  capabilities: z.record(z.string(), CapabilitySchema),
  missingPrerequisites: z.array(z.string())
}).meta({ id: 'Upstream' })

export const ArgusReadResponseSchema = z.object({
  operation: z.string(),
  requestId: z.string(),
  result: z.record(z.string(), z.unknown())
}).meta({ id: 'ArgusRead' })

export const HealthSchema = z.object({ status: z.literal('ok') })
export const ReadySchema = z.object({
  ready: z.boolean(),
  /** true from SIGTERM on (docs/design.md#shutdown): never ready again */
  draining: z.boolean(),
  // redis only when GATEWAY_REDIS_URL is set; reported, never a reason to be unready (rate limits fail open)
  // the upstream circuit breaker's state, reported only (docs/design.md#circuit-breaker)
  checks: z.object({ card: z.boolean(), ledger: z.boolean(), upstreamCircuit: z.enum(['closed', 'open', 'half_open']), redis: z.boolean().optional() }),
  mode: z.enum(['controller', 'observer'])
})
