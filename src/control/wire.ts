// The campaign-control extension on the wire (docs/design.md#campaign-control): snake_case
// params as the seed writes them, the constraints envelope on every claim and mutation, and
// the result each operation must return. Method names are never here: they come from the
// card's `operations` map.
import { z } from 'zod'
import { constraintsEnvelope } from './rules.js'

export const WireLeaseSchema = z.looseObject({
  controller_id: z.string().min(1),
  epoch: z.number().int().nonnegative(),
  expires_at: z.number().int()
})
export type WireLease = z.infer<typeof WireLeaseSchema>

export interface Lease { controllerId: string; epoch: number; expiresAt: number }

const toLease = (w: WireLease): Lease => ({ controllerId: w.controller_id, epoch: w.epoch, expiresAt: w.expires_at })

/** `{lease}`, `{lease: null}` or a bare lease; undefined when the result is none of these */
export function parseLeaseResult (result: unknown): { lease: Lease | null } | undefined {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return undefined
  if ('lease' in result) {
    const l = (result as { lease: unknown }).lease
    if (l === null) return { lease: null }
    const p = WireLeaseSchema.safeParse(l)
    return p.success ? { lease: toLease(p.data) } : undefined
  }
  const bare = WireLeaseSchema.safeParse(result)
  return bare.success ? { lease: toLease(bare.data) } : undefined
}

export const RequestStatusSchema = z.looseObject({
  request_id: z.string(),
  state: z.enum(['applied', 'not_applied']),
  task_id: z.string().min(1).optional()
})

export const SubmittedTaskSchema = z.looseObject({
  kind: z.literal('task'),
  id: z.string().min(1),
  status: z.looseObject({ state: z.string() }).optional()
})

export const CanceledTaskSchema = z.looseObject({
  id: z.string().min(1),
  status: z.looseObject({ state: z.string() })
})

export const AcceptedSchema = z.looseObject({ accepted: z.literal(true) })
export const ReleasedSchema = z.looseObject({ released: z.literal(true) })

export interface Authority { campaignId: string; controllerId: string; epoch: number; requestId: string }

const held = (a: Authority): Record<string, unknown> => ({
  campaign_id: a.campaignId,
  controller_id: a.controllerId,
  controller_epoch: a.epoch,
  request_id: a.requestId
})

export const wireParams = {
  claim: (campaignId: string, controllerId: string, requestId: string, ttlSeconds: number) => ({
    campaign_id: campaignId, controller_id: controllerId, ttl_seconds: ttlSeconds, request_id: requestId, constraints: constraintsEnvelope()
  }),
  readControl: (campaignId: string) => ({ campaign_id: campaignId }),
  renew: (a: Authority, ttlSeconds: number) => ({ ...held(a), ttl_seconds: ttlSeconds, constraints: constraintsEnvelope() }),
  release: (a: Authority) => ({ ...held(a), constraints: constraintsEnvelope() }),
  intervene: (a: Authority, intervention: Record<string, unknown>) => ({ ...held(a), constraints: constraintsEnvelope(), intervention }),
  requestStatus: (campaignId: string, requestId: string) => ({ campaign_id: campaignId, request_id: requestId }),
  submit: (a: Authority, parts: unknown[], project: string | undefined) => ({
    configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
    message: {
      role: 'user',
      kind: 'message',
      messageId: a.requestId,
      parts,
      metadata: {
        argus_supervisor: { ...held(a), ...(project !== undefined ? { project } : {}), constraints: constraintsEnvelope() }
      }
    }
  }),
  cancel: (a: Authority, taskId: string) => ({
    id: taskId,
    metadata: { argus_supervisor: { ...held(a), constraints: constraintsEnvelope() } }
  })
}
