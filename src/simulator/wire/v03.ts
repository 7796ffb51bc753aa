// JSON-RPC under A2A v0.3 (today's remote, and a dual server's answer to a request without
// A2A-Version or with 0.3): framing, then the campaign-control methods by the names the options
// advertise, then message/send, tasks/get and tasks/cancel. Where FastA2A and a2a-js disagree
// (refusals, bad JSON, error messages, cancel of a finished task, blocking) the profile's entry
// in ../profiles.ts decides; the fixtures of both are the reference for every shape.
import type { z } from 'zod'
import type { FaultContext } from '../books/fault-book.js'
import { controlRoute, handleControl, handleControlCancel } from '../extensions/control-handlers.js'
import { PROFILES } from '../profiles.js'
import type { ParsedBody, SendMode } from '../rpc/call.js'
import type { RpcOutcome } from '../rpc/outcome.js'
import { PLAIN_500, rpcError, rpcResult } from '../rpc/outcome.js'
import { describeIssue, snakeCaseKeys } from '../rpc/params.js'
import type { SimulatorState } from '../state.js'
import { handleMessageSend } from './message-send.js'
import type { MessageSendParams } from './v03-schemas.js'
import { MessageSendParamsSchema, TaskIdParamsSchema, TaskQueryParamsSchema } from './v03-schemas.js'

export function handleV03Rpc (state: SimulatorState, body: ParsedBody, ctx: FaultContext): RpcOutcome {
  const profile = PROFILES[state.opts.profile]
  if (!body.ok) {
    const message = profile.invalidJsonMessage
    return message === null ? PLAIN_500 : rpcError(null, { code: -32700, message })
  }
  const request = body.value
  const idValid = isObject(request) && 'id' in request && (request.id === null || typeof request.id === 'string' || typeof request.id === 'number')
  const id = idValid ? request.id : null
  if (!isObject(request) || request.jsonrpc !== '2.0' || !idValid || typeof request.method !== 'string') {
    return refused(state, id, -32600, 'Request payload validation error')
  }
  const { control } = state.opts
  const route = controlRoute(control, request.method)
  if (route === 'removed') return methodNotFound(state, id, request.method)
  if (control !== undefined && route !== undefined && route !== 'cancel') return handleControl(control, state.control, route, id, request.params)
  switch (route === 'cancel' ? 'tasks/cancel' : request.method) {
    case 'message/send': {
      const params = validate(state, id, MessageSendParamsSchema, request.params)
      return params.ok ? handleMessageSend(state, id, params.value, ctx, v03SendMode(state, params.value)) : params.outcome
    }
    case 'tasks/get': {
      const params = validate(state, id, TaskQueryParamsSchema, request.params)
      if (!params.ok) return params.outcome
      state.tasks.advance(params.value.id)
      const task = state.tasks.view(params.value.id, params.value.historyLength)
      return task === undefined ? taskNotFound(state, id, params.value.id) : rpcResult(id, task)
    }
    case 'tasks/cancel': {
      const params = validate(state, id, TaskIdParamsSchema, request.params)
      if (!params.ok) return params.outcome
      const taskId = params.value.id
      if (control === undefined) return cancel(state, id, taskId)
      return handleControlCancel({ control, book: state.control, tasks: state.tasks, timers: state.timers }, id, params.value, () => cancel(state, id, taskId))
    }
    default:
      return methodNotFound(state, id, request.method)
  }
}

/** v0.3: `blocking: true` waits where the profile honours it; a submission must say `blocking: false`. */
function v03SendMode (state: SimulatorState, params: MessageSendParams): SendMode {
  const blocking = params.configuration?.blocking
  return { blocking: PROFILES[state.opts.profile].honoursBlocking && blocking === true, atOnce: blocking === false, atOnceRule: 'a submission must set configuration.blocking to false' }
}

/** A refused request: a2a-js answers with a JSON-RPC error, FastA2A with a plain-text 500. */
function refused (state: SimulatorState, id: unknown, code: number, message: string): RpcOutcome {
  return PROFILES[state.opts.profile].refusesWithPlain500 ? PLAIN_500 : rpcError(id, { code, message })
}

function methodNotFound (state: SimulatorState, id: unknown, method: string): RpcOutcome {
  return refused(state, id, -32601, `Method not found: ${method}`)
}

function cancel (state: SimulatorState, id: unknown, taskId: string): RpcOutcome {
  const outcome = state.tasks.cancel(taskId)
  if (outcome.kind === 'not-found') return taskNotFound(state, id, taskId)
  if (outcome.kind === 'canceled') return rpcResult(id, outcome.task)
  const notCancelable = PROFILES[state.opts.profile].notCancelable
  if (notCancelable === null) return rpcResult(id, outcome.task)
  return rpcError(id, { code: -32002, message: notCancelable(taskId) })
}

function taskNotFound (state: SimulatorState, id: unknown, taskId: string): RpcOutcome {
  return rpcError(id, { code: -32001, message: PROFILES[state.opts.profile].taskNotFound(taskId) })
}

type Validated<T> = { ok: true; value: T } | { ok: false; outcome: RpcOutcome }

function validate<S extends z.ZodType> (state: SimulatorState, id: unknown, schema: S, params: unknown): Validated<z.infer<S>> {
  const snake = snakeCaseKeys(params)
  if (snake.length > 0) {
    return { ok: false, outcome: refused(state, id, -32602, `${snake[0]} is not an A2A field (the wire is camelCase)`) }
  }
  const parsed = schema.safeParse(params)
  if (!parsed.success) return { ok: false, outcome: refused(state, id, -32602, describeIssue(parsed.error)) }
  return { ok: true, value: parsed.data }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
