// Controller bindings over REST (docs/design.md#controller-bindings): which caller identity holds
// each controller id, as an admin lists and removes them.
import { z } from 'zod'
import { ControllerIdSchema } from './callers.js'

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
