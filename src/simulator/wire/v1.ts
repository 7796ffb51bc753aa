// JSON-RPC under A2A v1.0, in the order @a2a-js/sdk 1.x answers: bad JSON (-32700), then
// the version (-32009 for anything the server does not speak), then framing and params
// (-32602, the SDK's RequestMalformedError), then the method: the campaign-control methods
// by the names the options advertise (their params and results are the extension's own
// snake_case wire, untouched), then SendMessage, GetTask, CancelTask; anything else, v0.3
// names included, is "Invalid method.". Requests are translated to the v0.3 shapes the rest
// of the simulator works on, and answers back (v1-shapes.ts), so every rule, fault and
// ground-truth log is the same whichever version carried the call.
import type { z } from 'zod'
import type { FaultContext } from '../books/fault-book.js'
import type { Task } from '../books/task-book.js'
import { controlRoute, handleControl, handleControlCancel } from '../extensions/control-handlers.js'
import type { ParsedBody, SendMode } from '../rpc/call.js'
import type { RpcOutcome } from '../rpc/outcome.js'
import { rpcError, rpcResult } from '../rpc/outcome.js'
import { describeIssue } from '../rpc/params.js'
import type { SimulatorState } from '../state.js'
import { handleMessageSend } from './message-send.js'
import { invalidParamsV1, v1Error, versionNotSupported } from './protocol.js'
import type { Wire } from './protocol.js'
import type { MessageSendParams } from './v03-schemas.js'
import { CancelTaskParams, GetTaskParams, SendMessageParams, paramsAreValid, v03Leftover } from './v1-schemas.js'
import { internalMessage, v1Task } from './v1-shapes.js'

export function handleV1Rpc (state: SimulatorState, body: ParsedBody, ctx: FaultContext, wire: Exclude<Wire, '0.3'>): RpcOutcome {
  if (!body.ok) return rpcError(null, { code: -32700, message: 'Invalid JSON payload.' })
  const request = body.value
  const rawId = isObject(request) ? request.id : undefined
  if (wire !== '1.0') return rpcError(typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null, versionNotSupported(wire.unsupported, state.opts.protocol))
  const idValid = rawId === undefined || rawId === null || typeof rawId === 'string' || Number.isInteger(rawId)
  const id = idValid && rawId !== undefined ? rawId : null
  if (!isObject(request) || request.jsonrpc !== '2.0' || !idValid || typeof request.method !== 'string' || request.method === '') {
    return rpcError(id, invalidParamsV1('Invalid JSON-RPC Request.'))
  }
  if (!paramsAreValid(request.params)) return rpcError(id, invalidParamsV1('Invalid method parameters.'))

  const { control } = state.opts
  const route = controlRoute(control, request.method, 'CancelTask')
  if (route === 'removed') return methodNotFound(id)
  if (control !== undefined && route !== undefined && route !== 'cancel') return handleControl(control, state.control, route, id, request.params)
  switch (route === 'cancel' ? 'CancelTask' : request.method) {
    case 'SendMessage': {
      const params = validate(id, SendMessageParams, request.params)
      if (!params.ok) return params.outcome
      const { message, configuration, metadata } = params.value
      const atOnce = configuration?.returnImmediately === true
      const mode: SendMode = { blocking: !atOnce, atOnce, atOnceRule: 'a submission must set configuration.returnImmediately to true' }
      const internal: MessageSendParams = {
        message: internalMessage(message),
        configuration: { acceptedOutputModes: configuration?.acceptedOutputModes ?? [], blocking: !atOnce },
        ...(metadata === undefined ? {} : { metadata })
      }
      const outcome = handleMessageSend(state, id, internal, ctx, mode)
      return mapResult(outcome, (task) => ({ task: v1Task(task, configuration?.historyLength) }))
    }
    case 'GetTask': {
      const params = validate(id, GetTaskParams, request.params)
      if (!params.ok) return params.outcome
      const taskId = params.value.id
      if (taskId.trim() === '') return rpcError(id, invalidParamsV1('Task ID is required'))
      state.tasks.advance(taskId)
      const task = state.tasks.get(taskId)
      return task === undefined ? taskNotFound(id, taskId) : rpcResult(id, v1Task(task, params.value.historyLength))
    }
    case 'CancelTask': {
      const params = validate(id, CancelTaskParams, request.params)
      if (!params.ok) return params.outcome
      const taskId = params.value.id
      if (taskId.trim() === '') return rpcError(id, invalidParamsV1('Task ID is required'))
      const run = (): RpcOutcome => cancel(state, id, taskId)
      const outcome = control === undefined ? run() : handleControlCancel({ control, book: state.control, tasks: state.tasks, timers: state.timers }, id, params.value, run)
      return mapResult(outcome, (task) => v1Task(task))
    }
    default:
      return methodNotFound(id)
  }
}

/** The book's cancel rules, as tasks/cancel applies them on a2a-js, in v1.0 errors. */
function cancel (state: SimulatorState, id: unknown, taskId: string): RpcOutcome {
  const outcome = state.tasks.cancel(taskId)
  if (outcome.kind === 'not-found') return taskNotFound(id, taskId)
  if (outcome.kind === 'canceled') return rpcResult(id, outcome.task)
  return rpcError(id, v1Error(-32002, `Task not cancelable: ${taskId}`, 'TASK_NOT_CANCELABLE'))
}

function taskNotFound (id: unknown, taskId: string): RpcOutcome {
  return rpcError(id, v1Error(-32001, `Task not found: ${taskId}`, 'TASK_NOT_FOUND'))
}

function methodNotFound (id: unknown): RpcOutcome {
  return rpcError(id, { code: -32601, message: 'Invalid method.' })
}

/** A stored (v0.3-shaped) task result on the v1.0 wire; errors pass as they are. */
function mapResult (outcome: RpcOutcome, map: (task: Task) => unknown): RpcOutcome {
  if (outcome.kind !== 'json' || outcome.body.result === undefined) return outcome
  return { kind: 'json', body: { ...outcome.body, result: map(outcome.body.result as Task) } }
}

type Validated<T> = { ok: true; value: T } | { ok: false; outcome: RpcOutcome }

function validate<S extends z.ZodType> (id: unknown, schema: S, params: unknown): Validated<z.infer<S>> {
  const leftover = v03Leftover(params)
  if (leftover !== undefined) return { ok: false, outcome: rpcError(id, invalidParamsV1(leftover)) }
  const parsed = schema.safeParse(params)
  if (!parsed.success) return { ok: false, outcome: rpcError(id, invalidParamsV1(describeIssue(parsed.error))) }
  return { ok: true, value: parsed.data }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
