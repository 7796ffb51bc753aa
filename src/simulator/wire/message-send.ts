// message/send (and v1.0 SendMessage, translated to it), whichever wire carried it: Argus reads
// and plain messages both become tasks. The wire says whether to answer once the task is finished
// (FastA2A ignores `blocking`; a2a-js honours it; v1.0 blocks unless `returnImmediately`);
// OpenOperator's Argus reads bypass the model, so by default they answer `completed`. Argus
// errors go out as a JSON-RPC error by default, or wherever an injected `argus-error` fault
// places them. With campaign control served, argus_supervisor metadata is a submission.
import type { FaultContext } from '../books/fault-book.js'
import type { Payload, TaskPlan } from '../books/task-book.js'
import { internalState } from '../books/task-states.js'
import { argusErrorPayload, argusRpcError, decideArgus, isArgusRead } from '../extensions/argus.js'
import { handleSubmission, isSubmission } from '../extensions/control-handlers.js'
import { PROFILES } from '../profiles.js'
import type { SendMode } from '../rpc/call.js'
import type { RpcOutcome } from '../rpc/outcome.js'
import { rpcError, rpcResult } from '../rpc/outcome.js'
import type { SimulatorState } from '../state.js'
import type { ArgusErrorPlacement } from '../types.js'
import type { MessageSendParams } from './v03-schemas.js'

export function handleMessageSend (state: SimulatorState, id: unknown, params: MessageSendParams, ctx: FaultContext, mode: SendMode): RpcOutcome {
  const { message } = params
  const { blocking } = mode
  const { control } = state.opts
  if (control !== undefined && !isArgusRead(message) && isSubmission(params)) {
    return handleSubmission({ control, book: state.control, tasks: state.tasks, timers: state.timers }, id, params, mode)
  }
  if (!isArgusRead(message)) {
    const supervisor = message.metadata?.argus_supervisor
    const metadata = supervisor !== undefined ? { argus_supervisor: supervisor } : profileMetadata(state)
    const plan = { states: lifecycle(state.opts.taskSteps, blocking, 'completed'), finalPayload: { status: 'ok' } }
    return rpcResult(id, state.tasks.create({ message, plan, metadata }))
  }

  const forced = state.faults.takeArgus(ctx, 'argus-error')
  const decision = forced !== undefined ? { ok: false as const, code: forced.code } : decideArgus(message, state.opts.argusEnabled, state.campaigns)
  const placement = forced?.placement
  if (!decision.ok && (placement === undefined || placement === 'rpc-data' || placement === 'rpc-message')) {
    return rpcError(id, argusRpcError(decision.code, placement ?? 'rpc-default'))
  }
  const payload = decision.ok ? decision.payload : argusErrorPayload(decision.code, placement as ArgusErrorPlacement)
  const last = placement === 'failed-task' ? 'failed' : 'completed'
  const plan = scriptedPlan(state, ctx, payload) ?? { states: lifecycle(state.opts.argusTaskSteps, blocking, last), finalPayload: payload }
  return rpcResult(id, state.tasks.create({ message, plan, metadata: profileMetadata(state) }))
}

/** submitted, then `steps - 1` working polls, then the end state; a blocking a2a-js call skips to the end. */
function lifecycle (steps: number, blocking: boolean, last: string): string[] {
  if (blocking || steps === 0) return [last]
  return ['submitted', ...Array.from({ length: steps - 1 }, () => 'working'), last]
}

function scriptedPlan (state: SimulatorState, ctx: FaultContext, payload: Payload): TaskPlan | undefined {
  const fault = state.faults.takeArgus(ctx, 'task-states')
  if (fault === undefined || fault.states.length === 0) return undefined
  const states = fault.states.map(internalState)
  const last = states[states.length - 1]
  let finalPayload: Payload | undefined
  if (fault.final === 'payload') finalPayload = payload
  else if (fault.final !== undefined) finalPayload = { error: fault.final.error }
  else if (last === 'completed') finalPayload = payload
  return { states, finalPayload }
}

/** The metadata the profile attaches to every task (a2a-js's executor), a copy per task. */
function profileMetadata (state: SimulatorState): Record<string, unknown> | undefined {
  const metadata = PROFILES[state.opts.profile].taskMetadata
  return metadata === undefined ? undefined : structuredClone(metadata)
}
