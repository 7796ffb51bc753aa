// The dispatcher of POST /a2a/: which faults a call can match, and which wire answers it. A v0.3
// simulator has one wire; a v1.0 or dual one picks it per call by `A2A-Version`, as
// @a2a-js/sdk 1.x does (wire/protocol.ts). The wires (wire/v03.ts, wire/v1.ts) match the
// campaign-control methods first, then the standard ones; both work on the same books, so a
// task or a lease written under one version reads the same under the other.
import type { FaultContext } from './books/fault-book.js'
import { argusOperationOf } from './extensions/argus.js'
import { controlRoute } from './extensions/control-handlers.js'
import type { ResolvedControl } from './extensions/control-options.js'
import type { ParsedBody, RpcInput } from './rpc/call.js'
import type { RpcOutcome } from './rpc/outcome.js'
import type { SimulatorState } from './state.js'
import { rpcWire } from './wire/protocol.js'
import { handleV03Rpc } from './wire/v03.js'
import { handleV1Rpc } from './wire/v1.js'

export function handleRpc (state: SimulatorState, input: RpcInput): RpcOutcome {
  const wire = rpcWire(state.opts.protocol, input.version)
  return wire === '0.3' ? handleV03Rpc(state, input.body, input.ctx) : handleV1Rpc(state, input.body, input.ctx, wire)
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

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
