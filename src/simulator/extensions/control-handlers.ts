// The remote's campaign-control calls, each asking control-rules.ts and applying what it allows.
// The extension's own methods are found by the names the options advertise: read_control,
// request_status, and the claim/renew/release/intervene mutations. Two mutations ride on
// standard A2A methods instead. A submission is a non-blocking message/send (v1.0: SendMessage
// with returnImmediately) carrying metadata.argus_supervisor: same policy and lease checks as any
// mutation, answered at once with a durable task. tasks/cancel (v1.0: CancelTask), as on real
// servers, ignores its metadata for authority (docs/design.md#campaign-control); its request id
// still counts, and an applied cancel is remembered, so request_status and replays know it, and
// logged with the sender the metadata names (whose lease may well be gone: that is what the log
// shows). Every request id reaching a mutating call is counted first, replays and bad params
// included.
import type { z } from 'zod'
import type { ControlBook, Sender } from '../books/control-book.js'
import type { TaskBook } from '../books/task-book.js'
import { TERMINAL_STATES, stateOf } from '../books/task-states.js'
import type { Timers } from '../books/timers.js'
import type { SendMode } from '../rpc/call.js'
import type { RpcOutcome } from '../rpc/outcome.js'
import { rpcResult } from '../rpc/outcome.js'
import { describeIssue } from '../rpc/params.js'
import type { ControlOperation } from '../types.js'
import type { ResolvedControl } from './control-options.js'
import { CONTROL_OPERATIONS } from './control-options.js'
import type { Attempt } from './control-rules.js'
import { ClaimParams, InterveneParams, ReadControlParams, ReleaseParams, RenewParams, RequestStatusParams, SubmissionMetadata, authority, campaignIdOf, claim, invalidParams, mutateOnce, policyRefusal, renew, requestIdOf } from './control-rules.js'

// ---- the extension's own methods -----------------------------------------------------------

/**
 * The operation a method name serves; 'removed' for the wire's standard cancel
 * (`tasks/cancel`, v1.0 `CancelTask`) when cancel is nulled out.
 */
export function controlRoute (control: ResolvedControl | undefined, method: string, standardCancel = 'tasks/cancel'): ControlOperation | 'removed' | undefined {
  if (control === undefined) return undefined
  const op = CONTROL_OPERATIONS.find((o) => control.methods[o] === method)
  if (op !== undefined) return op
  return method === standardCancel && control.methods.cancel === null ? 'removed' : undefined
}

type Ctx = { control: ResolvedControl; book: ControlBook; rpcId: unknown }

export function handleControl (control: ResolvedControl, book: ControlBook, op: Exclude<ControlOperation, 'cancel'>, rpcId: unknown, params: unknown): RpcOutcome {
  const ctx: Ctx = { control, book, rpcId }
  if (op === 'read_control') {
    return parsed(ctx, ReadControlParams, params, (p) => rpcResult(rpcId, { lease: book.liveLease(p.campaign_id) }))
  }
  if (op === 'request_status') {
    return parsed(ctx, RequestStatusParams, params, (p) => {
      const stored = book.stored(p.campaign_id, p.request_id)
      const state = stored === undefined ? 'not_applied' : 'applied'
      return rpcResult(rpcId, { request_id: p.request_id, state, ...(stored?.taskId === undefined ? {} : { task_id: stored.taskId }) })
    })
  }
  const requestId = requestIdOf(params)
  if (requestId !== undefined) book.countReceipt(requestId, op, campaignIdOf(params))
  if (op === 'claim_control') {
    return mutation(ctx, op, ClaimParams, params, (p) => {
      const lease = claim(book, p.campaign_id, p.controller_id, p.ttl_seconds)
      return typeof lease === 'string' ? { refused: lease } : { applied: { lease } }
    })
  }
  if (op === 'renew_control') {
    return mutation(ctx, op, RenewParams, params, (p) => ({ applied: { lease: renew(book, p.campaign_id, p.controller_id, p.controller_epoch, p.ttl_seconds) } }), true)
  }
  if (op === 'release_control') {
    return mutation(ctx, op, ReleaseParams, params, (p) => {
      book.setLease(p.campaign_id, null)
      return { applied: { released: true } }
    }, true)
  }
  return mutation(ctx, op, InterveneParams, params, (p) => {
    book.addIntervention(p.campaign_id, { requestId: p.request_id, controllerId: p.controller_id, epoch: p.controller_epoch, intervention: p.intervention, at: book.now() })
    return { applied: { accepted: true } }
  }, true)
}

type Schema = z.ZodType<{ campaign_id: string; request_id: string; constraints?: unknown; controller_id: string; controller_epoch?: number }>

/** Validate, then at most once: policy, then (for lease holders' mutations) authority, then apply. */
function mutation<S extends Schema> (ctx: Ctx, operation: 'claim_control' | 'renew_control' | 'release_control' | 'intervene', schema: S, params: unknown, apply: (p: z.infer<S>) => Attempt, needsLease = false): RpcOutcome {
  return parsed(ctx, schema, params, (p) =>
    mutateOnce(ctx.book, ctx.rpcId, { operation, campaignId: p.campaign_id, requestId: p.request_id, sender: { controllerId: p.controller_id, epoch: p.controller_epoch ?? null } }, () => {
      const refusal = policyRefusal(ctx.control, p.constraints) ??
        (needsLease ? authority(ctx.book, ctx.control, p.campaign_id, p.controller_id, p.controller_epoch ?? -1) : undefined)
      return refusal !== undefined ? { refused: refusal } : apply(p)
    })
  )
}

function parsed<S extends z.ZodType> (ctx: Ctx, schema: S, params: unknown, then: (p: z.infer<S>) => RpcOutcome): RpcOutcome {
  const result = schema.safeParse(params)
  return result.success ? then(result.data) : invalidParams(ctx.rpcId, describeIssue(result.error))
}

// ---- submission and cancel, on standard A2A methods ----------------------------------------

export interface ControlDeps {
  control: ResolvedControl
  book: ControlBook
  tasks: TaskBook
  timers: Timers
}

/**
 * What a submission reads of message/send params, in the v0.3 shape both wires hand over (the
 * v1.0 wire translates its SendMessage first): the message, which the created task keeps.
 */
export interface SubmittedParams {
  message: { messageId: string; metadata?: Record<string, unknown> | undefined } & Record<string, unknown>
}

/** What a submitted task's artifact holds once it completes on time. */
const SUBMISSION_RESULT = { status: 'ok' }

export function isSubmission (params: SubmittedParams): boolean {
  return params.message.metadata?.argus_supervisor !== undefined
}

export function handleSubmission (deps: ControlDeps, rpcId: unknown, params: SubmittedParams, mode: SendMode): RpcOutcome {
  const { control, book, tasks, timers } = deps
  const raw = params.message.metadata?.argus_supervisor
  const requestId = requestIdOf(raw)
  if (requestId !== undefined) book.countReceipt(requestId, 'submit', campaignIdOf(raw))
  const parsed = SubmissionMetadata.safeParse(raw)
  if (!parsed.success) return invalidParams(rpcId, `message.metadata.argus_supervisor: ${describeIssue(parsed.error)}`)
  const meta = parsed.data
  if (!mode.atOnce) return invalidParams(rpcId, mode.atOnceRule)
  if (params.message.messageId !== meta.request_id) return invalidParams(rpcId, 'a submission needs message.messageId equal to its request_id')

  const sender = { controllerId: meta.controller_id, epoch: meta.controller_epoch }
  return mutateOnce(book, rpcId, { operation: 'submit', campaignId: meta.campaign_id, requestId: meta.request_id, sender }, () => {
    const refusal = policyRefusal(control, meta.constraints) ??
      (meta.project !== undefined && !control.projectSelection ? 'policy_violation' : undefined) ??
      authority(book, control, meta.campaign_id, meta.controller_id, meta.controller_epoch)
    if (refusal !== undefined) return { refused: refusal }
    const supervisor: Record<string, unknown> = {
      campaign_id: meta.campaign_id,
      controller_id: meta.controller_id,
      controller_epoch: meta.controller_epoch,
      request_id: meta.request_id
    }
    if (meta.project !== undefined) supervisor.project = meta.project
    const task = tasks.create({ message: params.message, plan: { states: control.submissionStates }, metadata: { argus_supervisor: supervisor } })
    const taskId = task.id as string
    // the remote's worker finishing on its own, so a caller's poll loop ends (a cancel first wins)
    if (control.completeAfterMs !== undefined) timers.after(control.completeAfterMs, () => { tasks.complete(taskId, SUBMISSION_RESULT) })
    return { applied: task, taskId }
  })
}

/** `cancel` runs the profile's standard tasks/cancel; only a cancel that changes the task is recorded. */
export function handleControlCancel (deps: ControlDeps, rpcId: unknown, params: { id: string; metadata?: Record<string, unknown> }, cancel: () => RpcOutcome): RpcOutcome {
  const supervisor = params.metadata?.argus_supervisor
  const requestId = requestIdOf(supervisor)
  const campaignId = campaignIdOf(supervisor)
  if (requestId !== undefined) deps.book.countReceipt(requestId, 'cancel', campaignId)
  if (requestId === undefined || typeof campaignId !== 'string' || campaignId === '') return cancel()
  return mutateOnce(deps.book, rpcId, { operation: 'cancel', campaignId, requestId, sender: cancelSender(supervisor) }, () => {
    const before = deps.tasks.get(params.id)
    const cancelable = before !== undefined && !TERMINAL_STATES.has(stateOf(before))
    const outcome = cancel()
    if (!cancelable || outcome.kind !== 'json' || outcome.body.result === undefined) return { outcome }
    return { applied: outcome.body.result }
  })
}

/** A cancel's metadata is never validated (it grants nothing): keep what is well formed, for the applied log. */
function cancelSender (supervisor: unknown): Sender {
  const fields = typeof supervisor === 'object' && supervisor !== null ? (supervisor as Record<string, unknown>) : {}
  const { controller_id: controllerId, controller_epoch: epoch } = fields
  return {
    controllerId: typeof controllerId === 'string' && controllerId !== '' ? controllerId : null,
    epoch: Number.isInteger(epoch) && (epoch as number) >= 0 ? (epoch as number) : null
  }
}
