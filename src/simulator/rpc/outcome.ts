// What handling one JSON-RPC call produces, before the route writes it: a JSON-RPC response,
// or FastA2A's plain-text 500 (its answer to anything its request models refuse). Shared by
// both wires and the extensions; which profile refuses how is ../profiles.ts.

export interface RpcErrorBody {
  code: number
  message: string
  data?: unknown
}

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
