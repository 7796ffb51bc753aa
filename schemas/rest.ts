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
export const ErrorBodySchema = z.object({ error: ErrorDetailSchema })

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
    refusedVersion: z.enum(['0.3', '1.0']).nullable().describe('A version the remote refused with -32009: not spoken until refusedUntil, another the card offers meanwhile.'),
    refusedUntil: z.string().nullable().describe('When the refused version is spoken again (its back-off doubles while each retry is refused).'),
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
  capabilities: z.record(z.string(), CapabilitySchema).describe('Every capability by name (argus.*, a2a.*, control.*), with its state and why.'),
  missingPrerequisites: z.array(z.string()).describe('What controller mode misses; empty in controller mode.')
}).meta({
  id: 'Upstream',
  example: {
    mode: 'controller',
    card: { name: 'OpenOperator', version: '1.0.0', protocolVersion: '0.3', path: '/.well-known/agent-card.json', sha256: '784d0014ab14dbe58387857a3032cf8057c5d9c8c8fe3cf61d85dcc6a662521c', skillIds: ['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'] },
    cardUrlMismatch: false,
    protocol: { version: '0.3', reason: 'a card without supportedInterfaces (protocolVersion 0.3): A2A 0.3', refusedVersion: null, refusedUntil: null, interfaces: [] },
    signature: { state: 'absent', keyId: null, algorithm: null, reason: 'the card carries no signature (none required: GATEWAY_CARD_JWKS_FILE is not set)' },
    nextRefreshAt: '2026-12-01T23:51:00.000Z',
    lastRefreshAt: '2026-12-01T23:50:00.000Z',
    lastSuccessAt: '2026-12-01T23:50:00.000Z',
    consecutiveFailures: 0,
    lastError: null,
    capabilities: {
      'argus.supervisor.health': { state: 'available', reason: 'card advertises skill id argus_supervisor_health' },
      'a2a.tasks.get': { state: 'tentative', reason: 'not yet confirmed by a valid result' },
      'control.claim_control': { state: 'available', reason: 'advertised as campaign/claim_control' }
    },
    missingPrerequisites: []
  }
})

export const ArgusReadResponseSchema = z.object({
  operation: z.string(),
  requestId: z.string().describe('The id the read carried upstream (JSON-RPC id and messageId).'),
  result: z.record(z.string(), z.unknown()).describe('The remote\'s payload, as it answered it.')
}).meta({
  id: 'ArgusRead',
  example: { operation: 'supervisor.health', requestId: 'argus-4288e9d3-2eae-4915-a832-db7207d901a5', result: { ok: true, backend: 'openoperator', checkedAt: '2026-12-01T23:50:01.207Z' } }
})

export const HealthSchema = z.object({ status: z.literal('ok') })
export const ReadySchema = z.object({
  ready: z.boolean(),
  /** true from SIGTERM on (docs/design.md#shutdown): never ready again */
  draining: z.boolean(),
  // redis only when GATEWAY_REDIS_URL is set; reported, never a reason to be unready (rate limits fail open)
  // the upstream circuit breaker's state, reported only (docs/design.md#circuit-breaker)
  // jwtKeys only with JWT callers: whether the identity provider's keys are held, reported only
  // clock only with the control plane: this replica's offsets to the ledger's and the remote's
  // clocks (ms, peer minus local; null until measured) — past marginMs mutations are 503 clock_skew, reads go on (docs/design.md#one-clock)
  checks: z.object({
    card: z.boolean(),
    ledger: z.boolean(),
    upstreamCircuit: z.enum(['closed', 'open', 'half_open']),
    redis: z.boolean().optional(),
    jwtKeys: z.boolean().optional(),
    clock: z.object({ ok: z.boolean(), ledgerOffsetMs: z.number().nullable(), remoteOffsetMs: z.number().nullable(), marginMs: z.number() }).optional()
  }),
  mode: z.enum(['controller', 'observer'])
})
