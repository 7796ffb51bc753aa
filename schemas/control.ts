// REST bodies of campaign control (docs/design.md#rest-interface): strict request bodies
// (unknown keys are 400), the lease and request views, and each route's answer.
import { z } from 'zod'
import { TaskStateSchema } from './a2a.js'
import { MUTATION_OPERATIONS, RECORD_STATES, UNRESOLVED_STATES } from './mutations.js'

// the messages follow the field's path (src/core/validation.ts): `ttlSeconds: must be between 15 and 3600`
export const CampaignIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 characters of [A-Za-z0-9._:-]')
export const RequestIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{8,128}$/, 'must be 8-128 characters of [A-Za-z0-9._:-]')
const TTL_RANGE = 'must be between 15 and 3600'
const TtlSchema = z.number().int('must be a whole number of seconds').min(15, TTL_RANGE).max(3600, TTL_RANGE)

const INTERVENTION_MAX_BYTES = 16 * 1024

const PartSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), text: z.string().min(1) }),
  z.strictObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) })
])

// the document's examples (src/openapi/document.ts): one campaign's evening, 2026-12-01, lease
// claimed at 23:50 UTC for 600 s; test/integration/openapi.test.ts sends them to a gateway
/** each mutation's example request id: its body's requestId and its Idempotency-Key header's (routes/control.ts) */
export const EXAMPLE_REQUEST_IDS = {
  claim: 'claim-2026-12-01-a1',
  renew: 'renew-2026-12-01-a2',
  submit: 'submit-2026-12-01-a3',
  cancel: 'cancel-2026-12-01-a4',
  release: 'release-2026-12-01-a5',
  intervene: 'iv-2026-12-01-a6',
  fence: 'fence-2026-12-02-ops1'
} as const
const BodyRequestId = RequestIdSchema.optional().describe('The mutation\'s request id, unique across the ledger and sent upstream as request_id; or the Idempotency-Key header. Repeating it replays the stored answer.')
const BodyTtl = TtlSchema.describe('How long the lease lasts from now, in seconds.')
export const ClaimBodySchema = z.strictObject({ requestId: BodyRequestId, ttlSeconds: BodyTtl })
  .meta({ id: 'ClaimBody', example: { requestId: EXAMPLE_REQUEST_IDS.claim, ttlSeconds: 600 } })
export const RenewBodySchema = z.strictObject({ requestId: BodyRequestId, ttlSeconds: BodyTtl })
  .meta({ id: 'RenewBody', example: { requestId: EXAMPLE_REQUEST_IDS.renew, ttlSeconds: 600 } })
export const FenceBodySchema = z.strictObject({ requestId: BodyRequestId, ttlSeconds: BodyTtl })
  .meta({ id: 'FenceBody', example: { requestId: EXAMPLE_REQUEST_IDS.fence, ttlSeconds: 300 } })
export const ReleaseBodySchema = z.strictObject({ requestId: BodyRequestId })
  .meta({ id: 'ReleaseBody', example: { requestId: EXAMPLE_REQUEST_IDS.release } })
export const CancelBodySchema = z.strictObject({ requestId: BodyRequestId })
  .meta({ id: 'CancelBody', example: { requestId: EXAMPLE_REQUEST_IDS.cancel } })
const PARTS_COUNT = 'must hold 1 to 16 parts'
export const SubmitBodySchema = z.strictObject({
  requestId: BodyRequestId,
  parts: z.array(PartSchema).min(1, PARTS_COUNT).max(16, PARTS_COUNT).describe('The work, as the message\'s parts: text or a JSON object each.'),
  project: z.string().min(1).max(256).optional().describe('The project to run it in; only where the remote advertises project selection.')
}).meta({
  id: 'SubmitBody',
  example: { requestId: EXAMPLE_REQUEST_IDS.submit, parts: [{ kind: 'text', text: 'Train the baseline on the 2026-11 split.' }, { kind: 'data', data: { epochs: 12, seed: 7 } }] }
})
export const InterventionBodySchema = z.strictObject({
  requestId: BodyRequestId,
  intervention: z.record(z.string(), z.unknown()).refine(
    (v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= INTERVENTION_MAX_BYTES,
    'must be at most 16 KiB of JSON'
  ).describe('A JSON object of at most 16 KiB, sent to the remote as the intervention.')
}).meta({ id: 'InterventionBody', example: { requestId: EXAMPLE_REQUEST_IDS.intervene, intervention: { action: 'pause', reason: 'GPU quota review' } } })
export const AcknowledgeBodySchema = z.strictObject({
  resolution: z.enum(['assume_applied', 'assume_not_applied']).describe('What the admin decided the remote did with the request.'),
  note: z.string().min(1).max(2000).describe('Why: kept with the resolution.')
}).meta({ id: 'AcknowledgeBody', example: { resolution: 'assume_not_applied', note: 'read_control shows epoch 4 held by ctl-research-2 since 23:58; the old renewal cannot apply.' } })

export const MUTATION_BODY_SCHEMAS = {
  claim: ClaimBodySchema,
  renew: RenewBodySchema,
  release: ReleaseBodySchema,
  submit: SubmitBodySchema,
  intervene: InterventionBodySchema,
  cancel: CancelBodySchema,
  fence: FenceBodySchema
} as const
export type MutationBodies = { [K in keyof typeof MUTATION_BODY_SCHEMAS]: z.infer<typeof MUTATION_BODY_SCHEMAS[K]> }

const LEASE_EXAMPLE = { controllerId: 'ctl-research-1', epoch: 3, expiresAt: 1796169600 }
export const LeaseSchema = z.object({
  controllerId: z.string().describe('The controller holding the lease: the controllerId of a caller with the control scope.'),
  epoch: z.number().int().describe('The remote\'s controller epoch: each claim of the campaign raises it, and a mutation carrying an older one is refused.'),
  expiresAt: z.number().int().describe('Unix seconds: when the lease ends.')
}).meta({ id: 'Lease', example: LEASE_EXAMPLE })

export const ControlViewSchema = z.object({ campaignId: z.string(), lease: LeaseSchema.nullable() })
  .meta({ id: 'Control', example: { campaignId: 'camp-2026-q4', lease: LEASE_EXAMPLE } })
export const LeaseAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), lease: LeaseSchema })
  .meta({ id: 'LeaseAnswer', example: { requestId: 'claim-2026-12-01-a1', campaignId: 'camp-2026-q4', lease: LEASE_EXAMPLE } })
export const ReleasedAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), released: z.literal(true) })
  .meta({ id: 'ReleasedAnswer', example: { requestId: 'release-2026-12-01-a5', campaignId: 'camp-2026-q4', released: true } })
export const AcceptedAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), accepted: z.literal(true) })
  .meta({ id: 'AcceptedAnswer', example: { requestId: 'iv-2026-12-01-a6', campaignId: 'camp-2026-q4', accepted: true } })
const ContextIdSchema = z.string().optional().describe('The task\'s context id, as the remote named it in its answer; absent when it named none.')
export const SubmittedAnswerSchema = z.object({ requestId: z.string(), taskId: z.string(), state: TaskStateSchema, contextId: ContextIdSchema })
  .meta({ id: 'SubmittedAnswer', example: { requestId: 'submit-2026-12-01-a3', taskId: 'task-7f3c2a91', state: 'submitted', contextId: 'ctx-7f3c2a91' } })
export const CanceledAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), taskId: z.string(), state: TaskStateSchema, contextId: ContextIdSchema })
  .meta({ id: 'CanceledAnswer', example: { requestId: 'cancel-2026-12-01-a4', campaignId: 'camp-2026-q4', taskId: 'task-7f3c2a91', state: 'canceled', contextId: 'ctx-7f3c2a91' } })
/**
 * what an applied request id replays once retention pruned its record (docs/design.md#request-ids-are-forever):
 * its final state, from what stays of it; the original answer is gone
 */
export const PrunedAnswerSchema = z.object({
  requestId: z.string(),
  campaignId: z.string(),
  operation: z.enum(MUTATION_OPERATIONS),
  state: z.literal('applied'),
  taskId: z.string().nullable(),
  pruned: z.literal(true)
}).meta({
  id: 'PrunedAnswer',
  description: 'A replay of an applied request id whose record retention pruned: its final state; the original answer is gone.',
  example: { requestId: 'iv-2026-09-01-a6', campaignId: 'camp-2026-q3', operation: 'intervene', state: 'applied', taskId: null, pruned: true }
})

export const ResolutionSchema = z.object({
  kind: z.enum(['reconcile', 'acknowledge']),
  by: z.string(),
  at: z.string(),
  note: z.string().nullable(),
  resolution: z.enum(['assume_applied', 'assume_not_applied']).nullable()
})

/** what anyone with read sees of a record; the rest only its own caller or an admin */
export const RequestViewSchema = z.object({
  requestId: z.string(),
  operation: z.enum(MUTATION_OPERATIONS),
  state: z.enum(RECORD_STATES).describe('pending: sent or about to be, outcome not written; ambiguous: the outcome is unknown, reconcile it; not_applied: an ambiguous request resolved as never applied.'),
  caller: z.string(),
  createdAt: z.string().describe('ISO 8601'),
  updatedAt: z.string().describe('ISO 8601'),
  campaignId: z.string().optional(),
  controllerEpoch: z.number().int().nullable().optional().describe('The epoch the mutation was sent under; null for a claim.'),
  taskId: z.string().nullable().optional(),
  outcomeCode: z.string().nullable().optional().describe('The error code of its answer, when it was an error.'),
  reconcileFailures: z.number().int().optional(),
  deadline: z.string().optional().describe('ISO 8601, on the ledger\'s clock: when a pending record turns ambiguous by itself, and before which reconcile cannot settle it not_applied (a copy that arrived late could still be applied).'),
  resolution: ResolutionSchema.nullable().optional(),
  params: z.unknown().optional().describe('The normalised body.'),
  answer: z.object({ httpStatus: z.number().int(), body: z.unknown() }).optional().describe('The stored answer a replay of the request id gets.'),
  pruned: z.literal(true).optional().describe('Only on a replay of a resolved request id that retention pruned: its params, answer and resolution note are gone.')
}).meta({
  id: 'Request',
  description: 'A mutation record. To its own caller or an admin every field; to any other caller with read only requestId, operation, state, caller, createdAt and updatedAt.',
  example: {
    requestId: 'iv-2026-12-01-a6',
    operation: 'intervene',
    state: 'ambiguous',
    caller: 'research-controller',
    createdAt: '2026-12-01T23:52:10.114Z',
    updatedAt: '2026-12-01T23:52:20.402Z',
    campaignId: 'camp-2026-q4',
    controllerEpoch: 3,
    taskId: null,
    outcomeCode: 'ambiguous_write',
    reconcileFailures: 0,
    deadline: '2026-12-01T23:52:55.114Z',
    resolution: null,
    params: { requestId: 'iv-2026-12-01-a6', intervention: { action: 'pause', reason: 'GPU quota review' } },
    answer: { httpStatus: 504, body: { error: { code: 'ambiguous_write', message: 'The outcome of the mutation is unknown; reconcile it.', requestId: 'iv-2026-12-01-a6', retryable: false, reconcile: '/v1/campaigns/camp-2026-q4/requests/iv-2026-12-01-a6/reconcile' } } }
  }
})
export type RequestView = z.infer<typeof RequestViewSchema>

export const RequestListSchema = z.object({ campaignId: z.string(), requests: z.array(RequestViewSchema) }).meta({ id: 'RequestList' })
/** the path parameters' examples, as in the bodies' */
export const CAMPAIGN_ID_EXAMPLE = 'camp-2026-q4'
export const REQUEST_ID_EXAMPLE = EXAMPLE_REQUEST_IDS.intervene
export const RequestListQuerySchema = z.strictObject({
  state: z.enum(RECORD_STATES).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100)
})

/** GET /v1/requests: the unresolved records of every campaign, oldest first, a page at a time */
export const UnresolvedQuerySchema = z.strictObject({
  state: z.enum(UNRESOLVED_STATES).optional().describe('ambiguous or pending; both when absent'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional().describe('the nextCursor of the previous page, as given')
})
export const UnresolvedListSchema = z.object({
  requests: z.array(RequestViewSchema),
  nextCursor: z.string().nullable().describe('pass it as cursor for the next page; null when this page is the last')
}).meta({ id: 'UnresolvedRequestList' })
