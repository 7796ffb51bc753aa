// The mutation pipeline's steps (docs/design.md#order-of-checks), in the order they run, each a
// plain function over what it is handed and exported for its unit test: the body, the request
// id's earlier use, the caller's controller id, the capability, the campaign's unresolved records,
// a cancel's target, the wait an owner may have, and the wire params of the one send.
import type { z } from 'zod'
import type { Caller } from '../../schemas/callers.js'
import { MUTATION_BODY_SCHEMAS } from '../../schemas/control.js'
import { fetchTask } from '../argus/fetch-task.js'
import { GatewayError, isErrorCode, isGatewayError } from '../core/errors.js'
import { invalidRequest, parseReadable } from '../core/validation.js'
import type { CapabilityName } from '../discovery/capabilities.js'
import type { Discovery } from '../discovery/discovery.js'
import type { CampaignTicket, MutationOperation, MutationRecord } from '../ledger/types.js'
import type { A2aWire } from '../upstream/a2a-wire.js'
import { reconcilePath } from './ambiguous-answer.js'
import { callerIdentity } from './identity.js'
import { CONTROL_OPERATION, type MutationAnswer, type PipelineDeps } from './pipeline-types.js'
import { checkBodyRules, normaliseAliases } from './rules.js'
import { requestView } from './views.js'
import { wireParams, type Authority } from './wire.js'

const TERMINAL = new Set(['completed', 'canceled', 'failed', 'rejected'])
const GRACE_MS = 30_000

/** body rules (constraints, reserved fields), aliases, then the strict schema */
export function parseBody (operation: MutationOperation, raw: unknown): Record<string, unknown> {
  checkBodyRules(raw)
  const parsed = parseReadable(MUTATION_BODY_SCHEMAS[operation] as z.ZodType<unknown>, normaliseAliases(raw))
  if (!parsed.success) throw invalidRequest(parsed.issues, 'body')
  return parsed.data as Record<string, unknown>
}

/** a record that ended rejected because nothing left the process (docs/design.md#request-ids) */
export const isUnsent = (r: MutationRecord): boolean => r.state === 'rejected' && r.outcomeCode === 'upstream_unavailable'

/**
 * the id's earlier use: another caller's (409), other params (422), in flight (409), a replay,
 * or 'unsent': nothing of it ever left, so the same request runs again as new. Another caller is
 * another identity, whatever its name; a record of unknown owner is every caller's conflict
 * (docs/design.md#request-records)
 */
export function priorUse (existing: MutationRecord | undefined, caller: Caller, hash: string): MutationAnswer | 'unsent' | undefined {
  if (existing === undefined) return undefined
  // nothing of another caller's request is shown, not even that its params differ
  if (existing.identity === null || existing.identity !== callerIdentity(caller)) throw new GatewayError('idempotency_key_conflict')
  if (existing.paramsHash !== hash) throw new GatewayError('idempotency_key_mismatch', { requestId: existing.requestId })
  if (existing.state === 'pending') throw new GatewayError('request_in_flight', { requestId: existing.requestId })
  if (isUnsent(existing)) return 'unsent'
  if (existing.prunedAt !== null) return { ...prunedAnswer(existing), replayed: true }
  if (existing.answer === null) throw new GatewayError('request_in_flight', { requestId: existing.requestId })
  return { httpStatus: existing.answer.httpStatus, body: existing.answer.body, replayed: true }
}

/**
 * What a record retention pruned replays (docs/design.md#request-ids-are-forever), from what
 * stays of it: a resolved one its record, as it replayed before; a refused one its error again;
 * an applied one its final state. `pruned: true` says the details are gone.
 */
export function prunedAnswer (r: MutationRecord): { httpStatus: number; body: unknown } {
  if (r.resolution !== null) return { httpStatus: 200, body: { ...requestView(r, null), pruned: true } }
  if (r.state === 'applied') {
    return {
      httpStatus: r.operation === 'submit' ? 202 : 200,
      body: { requestId: r.requestId, campaignId: r.campaignId, operation: r.operation, state: r.state, taskId: r.taskId, pruned: true }
    }
  }
  const e = new GatewayError(isErrorCode(r.outcomeCode) ? r.outcomeCode : 'upstream_rejected', { requestId: r.requestId })
  return { httpStatus: e.statusCode, body: e.toBody() }
}

/**
 * One identity per controller id (docs/design.md#controller-bindings): the first verified
 * identity to use an id binds it in the ledger, for every replica; another identity presenting
 * it, in any letter case, is refused before anything is sent.
 */
export async function bindController (d: Pick<PipelineDeps, 'ledger' | 'now' | 'onControllerConflict'>, caller: Caller, controllerId: string): Promise<void> {
  const identity = callerIdentity(caller)
  const holder = await d.ledger.bindController({ controllerId, identity, caller: caller.name, boundAt: d.now() })
  if (holder.identity === identity) return
  d.onControllerConflict?.()
  throw new GatewayError('controller_conflict', { message: 'Another caller identity holds this controller id; an admin can list and remove bindings under /v1/admin/controllers.' })
}

/** controller mode, then this operation's own capability; answers the method to call */
export function requireCapability (discovery: Discovery, operation: MutationOperation, body: Record<string, unknown>): string {
  const snap = discovery.model()
  if (snap.mode !== 'controller') throw new GatewayError('capability_unavailable', { missingPrerequisites: snap.missingPrerequisites })
  const unavailable = (name: CapabilityName): GatewayError | undefined => {
    const cap = discovery.capability(name)
    return cap.state === 'unavailable' ? new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] }) : undefined
  }
  const op = CONTROL_OPERATION[operation]
  if (op !== undefined) {
    const method = snap.controlMethods[op]
    if (method === undefined) throw new GatewayError('capability_unavailable', { missingPrerequisites: snap.controlMissing[op] ?? [`operation ${op} is not advertised`] })
    if (operation === 'cancel') {
      const e = unavailable('a2a.tasks.get')
      if (e !== undefined) throw e
    }
    return method
  }
  const e = unavailable('a2a.message.send') ?? (body.project !== undefined ? unavailable('control.project_selection') : undefined)
  if (e !== undefined) throw e
  return discovery.wire().method('message/send')
}

/**
 * any pending or ambiguous record of the campaign blocks every mutation of it; a fence only a
 * pending one (docs/design.md#fence). Read with the ticket the insert will check again.
 */
export function ambiguityBlock (ticket: CampaignTicket, fence: boolean): void {
  const open = ticket.blocker
  if (open === undefined || (fence && open.state !== 'pending')) return
  throw new GatewayError('ambiguity_unresolved', {
    message: `Request ${open.requestId} of this campaign is unresolved; ${open.state === 'pending' ? 'wait for its outcome' : 'reconcile or acknowledge it first'}.`,
    requestId: open.requestId,
    reconcile: reconcilePath(ticket.campaignId, open.requestId)
  })
}

/** what an insert refused on the ledger's own checks answers: nothing was sent (docs/design.md#serialisation) */
export function busy (requestId: string, why: 'moved' | 'blocked'): GatewayError {
  return new GatewayError('campaign_busy', {
    requestId,
    message: why === 'moved'
      ? 'Another mutation of this campaign started while this one was checked; nothing was sent. Retry.'
      : 'Another mutation of this campaign is in flight or unresolved; nothing was sent.'
  })
}

/**
 * cancel targets the bound task only, and only while the remote says it is not terminal. Its
 * lease is read after this (docs/design.md#leases): the remote's tasks/cancel ignores the
 * lease, so nothing may stand between the lease's answer and the send but the pending write.
 */
export async function cancelTarget (d: PipelineDeps, campaignId: string, named?: string): Promise<string> {
  const bound = await d.ledger.getBoundTask(campaignId)
  if (bound === undefined) throw new GatewayError('no_bound_task')
  if (named !== undefined && bound.taskId !== named) throw new GatewayError('task_not_cancelable', { message: 'The task is no longer its campaign\'s bound task.' })
  let task
  try {
    task = await fetchTask(d, bound.taskId, Date.now() + d.readTimeoutMs)
  } catch (err) {
    if (isGatewayError(err) && err.code === 'not_found') throw new GatewayError('not_found', { message: 'The bound task does not exist on the remote.' })
    throw err
  }
  if (TERMINAL.has(task.status.state)) throw new GatewayError('task_not_cancelable', { message: `The bound task is already ${task.status.state}.` })
  return bound.taskId
}

/** how long a sent mutation's owner may wait for its outcome, plus the grace (docs/design.md#outcomes) */
export function ownerWaitMs (d: Pick<PipelineDeps, 'connectTimeoutMs' | 'mutationTimeoutMs' | 'readTimeoutMs'>, operation: MutationOperation): number {
  // a renewal's readback (read_control) comes before its outcome is written
  return d.connectTimeoutMs + d.mutationTimeoutMs + (operation === 'renew' ? d.readTimeoutMs : 0) + GRACE_MS
}

/** the params the remote's method takes, under the mutation's authority */
export function wireFor (operation: MutationOperation, a: Authority, body: Record<string, unknown>, taskId: string | undefined): Record<string, unknown> {
  switch (operation) {
    case 'claim':
    case 'fence': return wireParams.claim(a.campaignId, a.controllerId, a.requestId, body.ttlSeconds as number)
    case 'renew': return wireParams.renew(a, body.ttlSeconds as number)
    case 'release': return wireParams.release(a)
    case 'intervene': return wireParams.intervene(a, body.intervention as Record<string, unknown>)
    case 'submit': return wireParams.submit(a, body.parts as unknown[], body.project as string | undefined)
    case 'cancel': return wireParams.cancel(a, taskId ?? '')
  }
}

/** a submission's and a cancel's result are A2A's (a send, a task): read in v0.3's shape; the extension's own results are as sent */
export function resultIn (wire: A2aWire, operation: MutationOperation, result: unknown): unknown {
  if (operation === 'submit') return wire.sendResult(result)
  if (operation === 'cancel') return wire.task(result)
  return result
}
