// message/send (and v1.0 SendMessage, translated to it): Argus reads and plain messages both
// become tasks. FastA2A ignores `blocking` and always answers `submitted`; a2a-js honours
// `blocking: true` and answers the finished task, as v1.0 does unless `returnImmediately`;
// OpenOperator's Argus reads bypass the model, so by default they answer `completed`. Argus
// errors go out as a JSON-RPC error by default, or wherever an injected `argus-error` fault
// places them. With campaign control served, argus_supervisor metadata is a submission.
import { argusErrorPayload, argusRpcError, decideArgus, isArgusRead } from './argus.js'
import { handleSubmission, isSubmission } from './control-handlers.js'
import type { FaultContext } from './fault-book.js'
import type { MessageSendParams } from './rpc-schemas.js'
import type { RpcOutcome } from './rpc-outcome.js'
import { rpcError, rpcResult } from './rpc-outcome.js'
import type { SimulatorState } from './state.js'
import type { Payload, TaskPlan } from './task-store.js'
import type { ArgusErrorPlacement } from './types.js'
import { internalState } from './v1-wire.js'

// What the a2a-js interop executor attaches to every task it finishes (fixture).
const A2A_JS_METADATA = {
  argus_supervisor: {
    revision: 7,
    stage: 'train',
    run_id: 'run-sdk',
    attempt_id: 'att-1',
    source_sha: 'abc123',
    evidence_revision: 3,
    evidence_ref: 'ev/1',
    blocked: false
  },
  metrics: { loss: 0.1 }
}

/** How the call asked to be answered, as its wire spells it. */
export interface SendMode {
  /** Answer once the task is finished. */
  blocking: boolean
  /** The call explicitly asked for an answer at once (what a submission must ask). */
  atOnce: boolean
  /** The rule a submission that did not ask breaks, for the -32602 message. */
  atOnceRule: string
}

/** v0.3: only a2a-js honours `blocking: true`; a submission must say `blocking: false`. */
export function v03SendMode (state: SimulatorState, params: MessageSendParams): SendMode {
  const blocking = params.configuration?.blocking
  return { blocking: state.opts.profile === 'a2a-js' && blocking === true, atOnce: blocking === false, atOnceRule: 'a submission must set configuration.blocking to false' }
}

export function handleMessageSend (state: SimulatorState, id: unknown, params: MessageSendParams, ctx: FaultContext, mode: SendMode): RpcOutcome {
  const { message } = params
  const { blocking } = mode
  const { control } = state.opts
  if (control !== undefined && !isArgusRead(message) && isSubmission(params)) {
    return handleSubmission({ control, book: state.control, tasks: state.tasks, timers: state.timers }, id, params, mode)
  }
  if (!isArgusRead(message)) {
    const supervisor = message.metadata?.argus_supervisor
    const metadata = supervisor !== undefined ? { argus_supervisor: supervisor } : a2aJsMetadata(state)
    const plan = { states: lifecycle(state.opts.taskSteps, blocking, 'completed'), finalPayload: { status: 'ok' } }
    return rpcResult(id, state.tasks.create({ message, plan, metadata }))
  }

  const forced = state.faults.takeArgus(ctx, 'argus-error')
  const decision = forced !== undefined ? { ok: false as const, code: forced.code } : decideArgus(message, state.opts.argusEnabled)
  const placement = forced?.placement
  if (!decision.ok && (placement === undefined || placement === 'rpc-data' || placement === 'rpc-message')) {
    return rpcError(id, argusRpcError(decision.code, placement ?? 'rpc-default'))
  }
  const payload = decision.ok ? decision.payload : argusErrorPayload(decision.code, placement as ArgusErrorPlacement)
  const last = placement === 'failed-task' ? 'failed' : 'completed'
  const plan = scriptedPlan(state, ctx, payload) ?? { states: lifecycle(state.opts.argusTaskSteps, blocking, last), finalPayload: payload }
  return rpcResult(id, state.tasks.create({ message, plan, metadata: a2aJsMetadata(state) }))
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

function a2aJsMetadata (state: SimulatorState): Record<string, unknown> | undefined {
  return state.opts.profile === 'a2a-js' ? structuredClone(A2A_JS_METADATA) : undefined
}
