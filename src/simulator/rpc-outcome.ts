// What handling one JSON-RPC call produces, before the route writes it: a JSON-RPC response,
// or FastA2A's plain-text 500 (its answer to anything its request models refuse).
import type { RpcErrorBody } from './argus.js'
import type { SimulatorState } from './state.js'
import { validatesLikeFastA2A } from './state.js'

export interface RpcResponse {
  jsonrpc: '2.0'
  id: unknown
  result?: unknown
  error?: RpcErrorBody
}

export type RpcOutcome = { kind: 'json'; body: RpcResponse } | { kind: 'plain-500' }

export const PLAIN_500: RpcOutcome = { kind: 'plain-500' }

export function rpcResult (id: unknown, result: unknown): RpcOutcome {
  return { kind: 'json', body: { jsonrpc: '2.0', id, result } }
}

export function rpcError (id: unknown, error: RpcErrorBody): RpcOutcome {
  return { kind: 'json', body: { jsonrpc: '2.0', id, error } }
}

/** A refused request: a2a-js answers with a JSON-RPC error, FastA2A with a plain-text 500. */
export function refused (state: SimulatorState, id: unknown, code: number, message: string): RpcOutcome {
  return validatesLikeFastA2A(state.opts.profile) ? PLAIN_500 : rpcError(id, { code, message })
}
