// What a valid result of each mutation means (docs/design.md#campaign-control): the REST
// answer and the local state it implies (lease, bound task). A result of the wrong shape is
// not an answer: the caller marks the mutation ambiguous.
import type { MutationOperation } from '../ledger/types.js'
import { GatewayError } from '../core/errors.js'
import type { LeaseKeeper } from './leases.js'
import { AcceptedSchema, CanceledTaskSchema, ReleasedSchema, SubmittedTaskSchema, parseLeaseResult, type Lease } from './wire.js'
import type { BoundTaskStore, LeaseStore } from '../ledger/types.js'
import { taskState } from '../../schemas/a2a.js'

export interface Applied {
  httpStatus: number
  body: unknown
  taskId: string | null
  /** the lease a claim, fence or renewal was granted (it measures the remote's clock) */
  lease?: Lease
}

export interface EffectContext {
  operation: MutationOperation
  campaignId: string
  requestId: string
  controllerId: string
  /** the lease the mutation was sent under (all but claim) */
  lease: Lease | undefined
  boundTaskId: string | undefined
  leases: LeaseKeeper
  ledger: LeaseStore & BoundTaskStore
  now: () => number
}

/** the remote's context id for the task, where it named one: the front door answers it, as tasks/get shows it */
const contextOf = (t: Record<string, unknown>): { contextId?: string } => typeof t.contextId === 'string' && t.contextId !== '' ? { contextId: t.contextId } : {}

const error = (code: ConstructorParameters<typeof GatewayError>[0], requestId: string, message?: string): Applied => {
  const e = new GatewayError(code, { requestId, message })
  return { httpStatus: e.statusCode, body: e.toBody(), taskId: null }
}

/** undefined: the result does not have the expected shape (ambiguous) */
export async function applyResult (c: EffectContext, result: unknown): Promise<Applied | undefined> {
  const { campaignId, requestId } = c
  switch (c.operation) {
    case 'claim':
    case 'fence':
    case 'renew': {
      const lease = parseLeaseResult(result)?.lease
      if (lease == null || lease.controllerId !== c.controllerId) return undefined
      if (!(await c.leases.accept(campaignId, lease))) {
        return error('upstream_invalid_response', requestId, 'The remote returned an epoch lower than one already seen.')
      }
      if (c.operation !== 'renew') return { httpStatus: 200, body: { requestId, campaignId, lease }, taskId: null, lease }
      return { ...await readBack(c, lease), lease }
    }
    case 'release':
      if (!ReleasedSchema.safeParse(result).success) return undefined
      await c.ledger.putLease(campaignId, null, c.now())
      return { httpStatus: 200, body: { requestId, campaignId, released: true }, taskId: null }
    case 'intervene':
      if (!AcceptedSchema.safeParse(result).success) return undefined
      return { httpStatus: 200, body: { requestId, campaignId, accepted: true }, taskId: null }
    case 'submit': {
      const task = SubmittedTaskSchema.safeParse(result)
      if (!task.success) return undefined
      await c.ledger.setBoundTask({ campaignId, taskId: task.data.id, requestId, boundAt: c.now() })
      return { httpStatus: 202, body: { requestId, taskId: task.data.id, state: taskState(task.data.status?.state ?? 'submitted'), ...contextOf(task.data) }, taskId: task.data.id }
    }
    case 'cancel': {
      const task = CanceledTaskSchema.safeParse(result)
      if (!task.success || task.data.id !== c.boundTaskId) return undefined
      return { httpStatus: 200, body: { requestId, campaignId, taskId: task.data.id, state: taskState(task.data.status.state), ...contextOf(task.data) }, taskId: task.data.id }
    }
  }
}

/**
 * After a renewal the lease is read back; it agrees only when holder, epoch and expiry are
 * all equal. A disagreement (or a failed read) keeps the renewal applied and the lease unknown.
 */
async function readBack (c: EffectContext, renewed: Lease): Promise<Applied> {
  let seen: Lease | null
  try {
    seen = await c.leases.fresh(c.campaignId)
  } catch {
    await c.leases.forget(c.campaignId)
    return error('lease_readback_mismatch', c.requestId, 'The renewal was applied but the lease could not be read back.')
  }
  if (seen === null || seen.controllerId !== renewed.controllerId || seen.epoch !== renewed.epoch || seen.expiresAt !== renewed.expiresAt) {
    await c.leases.forget(c.campaignId)
    return error('lease_readback_mismatch', c.requestId)
  }
  return { httpStatus: 200, body: { requestId: c.requestId, campaignId: c.campaignId, lease: renewed }, taskId: null }
}
