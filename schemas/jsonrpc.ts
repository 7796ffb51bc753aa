// JSON-RPC 2.0 response envelope as the gateway accepts it from the remote
// (docs/design.md#upstream-wire-rules).
import { z } from 'zod'

/**
 * The JSON-RPC and A2A error codes the gateway gives a meaning to, by name (as a2a-js keeps
 * them): what each means for a read or a mutation is decided where it is used.
 */
export const RPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  // A2A v1.0 (docs/design.md#protocol-versions)
  invalidAgentResponse: -32006,
  extendedAgentCardNotConfigured: -32007,
  extensionSupportRequired: -32008,
  versionNotSupported: -32009
} as const

export const RpcErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional()
})
export type RpcErrorObject = z.infer<typeof RpcErrorObjectSchema>

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const RpcIdSchema = z.union([z.string(), z.number(), z.null()])

// both `result` and `error`, or neither, is not a JSON-RPC response (docs/design.md#upstream-wire-rules);
// checked on the input, before z.object strips the other key
const oneOf = (v: unknown): boolean => isRecord(v) && ('result' in v) !== ('error' in v)
export const RpcSuccessSchema = z.object({ jsonrpc: z.literal('2.0'), id: RpcIdSchema, result: z.unknown() })
  .refine((r) => 'result' in r, 'a success carries result')
export const RpcFailureSchema = z.object({ jsonrpc: z.literal('2.0'), id: RpcIdSchema, error: RpcErrorObjectSchema })
export const RpcResponseSchema = z.custom<unknown>(oneOf, 'a response carries exactly one of result and error').pipe(z.union([RpcSuccessSchema, RpcFailureSchema]))
export type RpcResponse = z.infer<typeof RpcResponseSchema>

/**
 * `RpcResponseSchema.safeParse(v)` by hand, for the hot path (docs/design.md#hot-path): the same
 * answers — exactly one of `result` and `error`; a present `result` makes a success, else a
 * well-formed `error` a failure — without
 * zod's union, refinements and copies. test/unit/hot-path-checks.property.test.ts holds the two
 * equal on arbitrary input.
 */
export function checkRpcResponse (v: unknown): RpcResponse | undefined {
  if (!isRecord(v) || v.jsonrpc !== '2.0') return undefined
  const id = v.id
  // as zod's z.number(): finite only (JSON never yields NaN or Infinity, but the check must not differ)
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id)) && id !== null) return undefined
  if (!oneOf(v)) return undefined
  if ('result' in v) return { jsonrpc: '2.0', id, result: v.result }
  const e = v.error
  if (!isRecord(e) || !Number.isSafeInteger(e.code) || typeof e.message !== 'string') return undefined
  const error: RpcErrorObject = 'data' in e ? { code: e.code as number, message: e.message, data: e.data } : { code: e.code as number, message: e.message }
  return { jsonrpc: '2.0', id, error }
}
