// The two campaign mutations that ride on standard A2A methods. A submission is a
// non-blocking message/send (v1.0: SendMessage with returnImmediately) carrying
// metadata.argus_supervisor: same policy and lease checks as any mutation, answered at once
// with a durable task. tasks/cancel (v1.0: CancelTask), as on real servers, ignores its
// metadata for authority (docs/design.md#campaign-control); its request id still counts, and an
// applied cancel is remembered, so request_status and replays know it, and logged with the
// sender the metadata names (whose lease may well be gone: that is what the log shows).
import type { ControlBook, Sender } from './control-book.js'
import type { ResolvedControl } from './control-options.js'
import { SubmissionMetadata, campaignIdOf, requestIdOf } from './control-params.js'
import { authority, policyRefusal } from './control-rules.js'
import { invalidParams, mutateOnce } from './control-mutation.js'
import type { SendMode } from './message-send.js'
import type { RpcOutcome } from './rpc-outcome.js'
import type { MessageSendParams } from './rpc-schemas.js'
import { describeIssue } from './rpc-schemas.js'
import type { TaskStore } from './task-store.js'
import { TERMINAL_STATES, stateOf } from './task-store.js'

export interface ControlDeps {
  control: ResolvedControl
  book: ControlBook
  tasks: TaskStore
}

export function isSubmission(params: MessageSendParams): boolean {
  return params.message.metadata?.argus_supervisor !== undefined
}

export function handleSubmission(deps: ControlDeps, rpcId: unknown, params: MessageSendParams, mode: SendMode): RpcOutcome {
  const { control, book, tasks } = deps
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
    return { applied: task, taskId: task.id as string }
  })
}

/** `cancel` runs the profile's standard tasks/cancel; only a cancel that changes the task is recorded. */
export function handleControlCancel(deps: ControlDeps, rpcId: unknown, params: { id: string; metadata?: Record<string, unknown> }, cancel: () => RpcOutcome): RpcOutcome {
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
function cancelSender(supervisor: unknown): Sender {
  const fields = typeof supervisor === 'object' && supervisor !== null ? (supervisor as Record<string, unknown>) : {}
  const { controller_id: controllerId, controller_epoch: epoch } = fields
  return {
    controllerId: typeof controllerId === 'string' && controllerId !== '' ? controllerId : null,
    epoch: Number.isInteger(epoch) && (epoch as number) >= 0 ? (epoch as number) : null
  }
}
