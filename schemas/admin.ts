// The admins' views over REST: controller bindings (docs/design.md#controller-bindings) — which
// caller identity holds each controller id, as an admin lists and removes them — and the callers
// with their grants (docs/design.md#grants), never a token or a digest.
import { z } from 'zod'
import { ControllerIdSchema, ScopeSchema } from './callers.js'

export const CONTROLLER_ID_EXAMPLE = 'ctl-research-1'

export const ControllerBindingSchema = z.object({
  controllerId: z.string().describe('As first presented; ids that differ only in letter case are one.'),
  identity: z.string().describe('static:<caller name>, or jwt:<issuer>#<subject> for a caller from the identity provider.'),
  caller: z.string().describe('The caller\'s name when it bound the id.'),
  boundAt: z.string().describe('ISO 8601')
}).meta({
  id: 'ControllerBinding',
  example: { controllerId: CONTROLLER_ID_EXAMPLE, identity: 'jwt:https://idp.example/realms/ml#5f1c9a2e-7d41-4b8e-9a3c-2e0b6f4d8c17', caller: 'jwt:research-team', boundAt: '2026-12-01T21:04:11.532Z' }
})

export const ControllerBindingListSchema = z.object({ controllers: z.array(ControllerBindingSchema) }).meta({ id: 'ControllerBindingList' })

export const ControllerParamsSchema = z.strictObject({ controllerId: ControllerIdSchema.meta({ example: CONTROLLER_ID_EXAMPLE }) })

export const RemoveControllerQuerySchema = z.strictObject({
  force: z.enum(['true', 'false']).optional()
    .describe('`true` removes the binding even while the id holds a live lease (otherwise 409 controller_lease_held); the log line says it was forced.')
})

export const ControllerRemovedSchema = z.object({ controllerId: z.string(), removed: z.literal(true) })
  .meta({ example: { controllerId: CONTROLLER_ID_EXAMPLE, removed: true } })

const GrantSetViewSchema = z.object({
  campaigns: z.array(z.string()).optional().describe('Campaign ids, or a prefix followed by one "*" (team-a-*; * alone is every campaign).'),
  projects: z.array(z.string()).optional().describe('OpenOperator projects, or a prefix followed by one "*".')
})
const GrantsViewSchema = z.object({
  read: GrantSetViewSchema.optional().describe('What the caller may read.'),
  control: GrantSetViewSchema.optional().describe('What the caller may control, and read.')
})

export const CallerViewSchema = z.object({
  name: z.string(),
  kind: z.literal('static').describe('A caller of the callers file (GATEWAY_CALLERS or GATEWAY_CALLERS_FILE).'),
  identity: z.string().describe('static:<name>: what owns its records, sends and controller bindings.'),
  scopes: z.array(ScopeSchema),
  controllerId: z.string().nullable(),
  expiresAt: z.string().nullable().describe('ISO 8601; null: no expiry.'),
  grants: GrantsViewSchema.nullable().describe('As configured; null: none.'),
  reach: z.enum(['all', 'granted', 'none']).describe('all: every campaign (an admin, or no grants without GATEWAY_REQUIRE_GRANTS); granted: what grants say; none: no grants under GATEWAY_REQUIRE_GRANTS.')
}).meta({ id: 'CallerView' })

export const CallerListSchema = z.object({
  requireGrants: z.boolean().describe('GATEWAY_REQUIRE_GRANTS: a caller without grants reaches no campaign.'),
  jwtClaims: z.object({ campaigns: z.string().optional(), projects: z.string().optional() }).nullable()
    .describe('The JWT claims a caller from the identity provider takes its grants from; null: no JWT callers.'),
  callers: z.array(CallerViewSchema).describe('The static callers in the order of the callers file.'),
  identities: z.array(z.object({
    identity: z.string().describe('jwt:<issuer>#<subject>'),
    kind: z.literal('jwt'),
    grants: GrantsViewSchema
  })).describe('Grants keyed by a JWT caller\'s identity in the callers file: they replace the ones its claims give.')
}).meta({
  id: 'CallerList',
  example: {
    requireGrants: true,
    jwtClaims: { campaigns: 'oo_campaigns' },
    callers: [{ name: 'team-a', kind: 'static', identity: 'static:team-a', scopes: ['read', 'control'], controllerId: 'ctl-team-a', expiresAt: null, grants: { control: { campaigns: ['team-a-*'] } }, reach: 'granted' }],
    identities: [{ identity: 'jwt:https://idp.example/realms/ml#5f1c9a2e-7d41-4b8e-9a3c-2e0b6f4d8c17', kind: 'jwt', grants: { read: { projects: ['vision'] } } }]
  }
})
