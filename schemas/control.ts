// REST bodies of campaign control (docs/design.md#rest-interface): strict request bodies
// (unknown keys are 400), the lease and request views, and each route's answer.
import { z } from 'zod'
import { MUTATION_OPERATIONS, RECORD_STATES, UNRESOLVED_STATES } from '../src/ledger/types.js'

// the messages follow the field's path (src/validation.ts): `ttlSeconds: must be between 15 and 3600`
export const CampaignIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 characters of [A-Za-z0-9._:-]')
export const RequestIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{8,128}$/, 'must be 8-128 characters of [A-Za-z0-9._:-]')
const TTL_RANGE = 'must be between 15 and 3600'
const TtlSchema = z.number().int('must be a whole number of seconds').min(15, TTL_RANGE).max(3600, TTL_RANGE)

const INTERVENTION_MAX_BYTES = 16 * 1024

const PartSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), text: z.string().min(1) }),
  z.strictObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) })
])

export const ClaimBodySchema = z.strictObject({ requestId: RequestIdSchema.optional(), ttlSeconds: TtlSchema }).meta({ id: 'ClaimBody' })
export const RenewBodySchema = z.strictObject({ requestId: RequestIdSchema.optional(), ttlSeconds: TtlSchema }).meta({ id: 'RenewBody' })
export const ReleaseBodySchema = z.strictObject({ requestId: RequestIdSchema.optional() }).meta({ id: 'ReleaseBody' })
export const CancelBodySchema = z.strictObject({ requestId: RequestIdSchema.optional() }).meta({ id: 'CancelBody' })
const PARTS_COUNT = 'must hold 1 to 16 parts'
export const SubmitBodySchema = z.strictObject({
  requestId: RequestIdSchema.optional(),
  parts: z.array(PartSchema).min(1, PARTS_COUNT).max(16, PARTS_COUNT),
  project: z.string().min(1).max(256).optional()
}).meta({ id: 'SubmitBody' })
export const InterventionBodySchema = z.strictObject({
  requestId: RequestIdSchema.optional(),
  intervention: z.record(z.string(), z.unknown()).refine(
    (v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= INTERVENTION_MAX_BYTES,
    'must be at most 16 KiB of JSON'
  )
}).meta({ id: 'InterventionBody' })
export const AcknowledgeBodySchema = z.strictObject({
  resolution: z.enum(['assume_applied', 'assume_not_applied']),
  note: z.string().min(1).max(2000)
}).meta({ id: 'AcknowledgeBody' })

export const MUTATION_BODY_SCHEMAS = {
  claim: ClaimBodySchema,
  renew: RenewBodySchema,
  release: ReleaseBodySchema,
  submit: SubmitBodySchema,
  intervene: InterventionBodySchema,
  cancel: CancelBodySchema
} as const
export type MutationBodies = { [K in keyof typeof MUTATION_BODY_SCHEMAS]: z.infer<typeof MUTATION_BODY_SCHEMAS[K]> }

export const LeaseSchema = z.object({ controllerId: z.string(), epoch: z.number().int(), expiresAt: z.number().int() }).meta({ id: 'Lease' })

export const ControlViewSchema = z.object({ campaignId: z.string(), lease: LeaseSchema.nullable() }).meta({ id: 'Control' })
export const LeaseAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), lease: LeaseSchema })
export const ReleasedAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), released: z.literal(true) })
export const AcceptedAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), accepted: z.literal(true) })
export const SubmittedAnswerSchema = z.object({ requestId: z.string(), taskId: z.string(), state: z.string() })
export const CanceledAnswerSchema = z.object({ requestId: z.string(), campaignId: z.string(), taskId: z.string(), state: z.string() })

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
  state: z.enum(RECORD_STATES),
  caller: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  campaignId: z.string().optional(),
  controllerEpoch: z.number().int().nullable().optional(),
  taskId: z.string().nullable().optional(),
  outcomeCode: z.string().nullable().optional(),
  reconcileFailures: z.number().int().optional(),
  resolution: ResolutionSchema.nullable().optional(),
  params: z.unknown().optional(),
  answer: z.object({ httpStatus: z.number().int(), body: z.unknown() }).optional()
}).meta({ id: 'Request' })
export type RequestView = z.infer<typeof RequestViewSchema>

export const RequestListSchema = z.object({ campaignId: z.string(), requests: z.array(RequestViewSchema) }).meta({ id: 'RequestList' })
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
