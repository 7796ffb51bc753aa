// JSON-RPC 2.0 over POST /a2a/: the wire the request's version picks (a v0.3 simulator has
// only one), then for v0.3 framing, method dispatch and the standard task methods. Where
// FastA2A and a2a-js disagree (refusals, history, cancel of a finished task) the profile
// decides; the fixtures of both are the reference for every shape. Campaign-control methods
// are matched first, by the names the options advertise. v1.0 is v1-dispatch.ts.
import { argusOperationOf } from './argus.js'
import { controlRoute, handleControl, handleControlCancel } from './control-handlers.js'
import type { ResolvedControl } from './control-options.js'
import type { FaultContext } from './fault-book.js'
import { handleMessageSend, v03SendMode } from './message-send.js'
import { rpcWire } from './protocol.js'
import type { RpcOutcome } from './rpc-outcome.js'
import { PLAIN_500, refused, rpcError, rpcResult } from './rpc-outcome.js'
import { MessageSendParamsSchema, TaskIdParamsSchema, TaskQueryParamsSchema, describeIssue, snakeCaseKeys } from './rpc-schemas.js'
import type { SimulatorState } from './state.js'
import { handleV1Rpc } from './v1-dispatch.js'
import type { z } from 'zod'

export type ParsedBody = { ok: true; value: unknown } | { ok: false }

export function parseBody (raw: string): ParsedBody {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown }
  } catch {
    return { ok: false }
  }
}

/** One POST /a2a/ call as the handler takes it (now, or when a held one is delivered). */
export interface RpcInput {
  body: ParsedBody
  ctx: FaultContext
  /** The A2A-Version header as sent; undefined when absent. */
  version: string | undefined
}

/**
 * Which faults a POST /a2a/ body can match: its method; for message/send or SendMessage, its
 * Argus operation; with campaign control served, the control operation it is (a message
 * carrying argus_supervisor metadata is a submission).
 */
export function rpcFaultContext (body: ParsedBody, control?: ResolvedControl): FaultContext {
  if (!body.ok || !isObject(body.value) || typeof body.value.method !== 'string') return { route: 'rpc' }
  const rpcMethod = body.value.method
  const send = rpcMethod === 'message/send' || rpcMethod === 'SendMessage'
  const argusOperation = send ? argusOperationOf(body.value.params) : undefined
  let operation: FaultContext['operation']
  if (control !== undefined) {
    const route = controlRoute(control, rpcMethod)
    if (route !== undefined && route !== 'removed') operation = route
    else if (send && argusOperation === undefined && carriesSupervisor(body.value.params)) operation = 'submit'
  }
  return { route: 'rpc', rpcMethod, argusOperation, operation }
}

function carriesSupervisor (params: unknown): boolean {
  const message = isObject(params) ? params.message : undefined
  const metadata = isObject(message) ? message.metadata : undefined
  return isObject(metadata) && metadata.argus_supervisor !== undefined
}

export function handleRpc (state: SimulatorState, input: RpcInput): RpcOutcome {
  const wire = rpcWire(state.opts.protocol, input.version)
  return wire === '0.3' ? handleV03Rpc(state, input.body, input.ctx) : handleV1Rpc(state, input.body, input.ctx, wire)
}

function handleV03Rpc (state: SimulatorState, body: ParsedBody, ctx: FaultContext): RpcOutcome {
  const { profile } = state.opts
  if (!body.ok) {
    // FastA2A validates the raw bytes with one pydantic adapter, so bad JSON is just another 500.
    if (profile === 'fasta2a') return PLAIN_500
    return rpcError(null, { code: -32700, message: profile === 'a2a-js' ? 'Invalid JSON payload.' : 'Invalid JSON payload' })
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

function methodNotFound (state: SimulatorState, id: unknown, method: string): RpcOutcome {
  return refused(state, id, -32601, `Method not found: ${method}`)
}

function cancel (state: SimulatorState, id: unknown, taskId: string): RpcOutcome {
  const outcome = state.tasks.cancel(taskId)
  if (outcome.kind === 'not-found') return taskNotFound(state, id, taskId)
  if (outcome.kind === 'canceled') return rpcResult(id, outcome.task)
  // FastA2A 0.5's cancel_task has no terminal check: it hands back the task as stored.
  if (state.opts.profile === 'fasta2a') return rpcResult(id, outcome.task)
  const message = state.opts.profile === 'a2a-js' ? `Task not cancelable: ${taskId}` : 'Task not cancelable'
  return rpcError(id, { code: -32002, message })
}

function taskNotFound (state: SimulatorState, id: unknown, taskId: string): RpcOutcome {
  const message = state.opts.profile === 'a2a-js' ? `Task not found: ${taskId}` : 'Task not found'
  return rpcError(id, { code: -32001, message })
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
