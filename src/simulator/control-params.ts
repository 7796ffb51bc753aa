// The campaign-control params as the remote validates them: snake_case, as the seed and
// docs/design.md#campaign-control write them. `constraints` is left unknown here: its absence or any difference
// is a policy refusal, not a malformed request.
import { z } from 'zod'

const Id = z.string().min(1)
const Epoch = z.number().int().min(0)
const Ttl = z.number().int().min(1).max(86_400)
const Constraints = z.unknown().optional()

export const ReadControlParams = z.object({ campaign_id: Id })
export const RequestStatusParams = z.object({ campaign_id: Id, request_id: Id })

export const ClaimParams = z.object({ campaign_id: Id, controller_id: Id, ttl_seconds: Ttl, request_id: Id, constraints: Constraints })

const Mutation = { campaign_id: Id, controller_id: Id, controller_epoch: Epoch, request_id: Id, constraints: Constraints }
export const RenewParams = z.object({ ...Mutation, ttl_seconds: Ttl })
export const ReleaseParams = z.object(Mutation)
export const InterveneParams = z.object({ ...Mutation, intervention: z.record(z.string(), z.unknown()) })

/** message.metadata.argus_supervisor of a submission. */
export const SubmissionMetadata = z.object({ ...Mutation, project: z.string().min(1).optional() })

/** The request id of any mutating call's params, before validation (for receipt counts). */
export function requestIdOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('request_id' in params)) return undefined
  return typeof params.request_id === 'string' ? params.request_id : undefined
}

/** The campaign id of any mutating call's params, before validation (for the receipt log). */
export function campaignIdOf(params: unknown): unknown {
  return typeof params === 'object' && params !== null && 'campaign_id' in params ? params.campaign_id : undefined
}
