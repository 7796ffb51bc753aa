// JSON-RPC 2.0 response envelope as the gateway accepts it from the remote
// (docs/design.md#upstream-wire-rules).
import { z } from 'zod'

export const RpcErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional()
})
export type RpcErrorObject = z.infer<typeof RpcErrorObjectSchema>

const RpcIdSchema = z.union([z.string(), z.number(), z.null()])

export const RpcSuccessSchema = z.object({ jsonrpc: z.literal('2.0'), id: RpcIdSchema, result: z.unknown() })
  .refine((r) => 'result' in r && !('error' in r), 'a success carries result and no error')
export const RpcFailureSchema = z.object({ jsonrpc: z.literal('2.0'), id: RpcIdSchema, error: RpcErrorObjectSchema })
  .refine((r) => !('result' in r), 'an error carries no result')

export const RpcResponseSchema = z.union([RpcSuccessSchema, RpcFailureSchema])
export type RpcResponse = z.infer<typeof RpcResponseSchema>

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * `RpcResponseSchema.safeParse(v)` by hand, for the hot path (docs/design.md#hot-path): the same
 * answers — a present `result` makes a success, else a well-formed `error` a failure — without
 * zod's union, refinements and copies. test/unit/hot-path-checks.property.test.ts holds the two
 * equal on arbitrary input.
 */
export function checkRpcResponse (v: unknown): RpcResponse | undefined {
  if (!isRecord(v) || v.jsonrpc !== '2.0') return undefined
  const id = v.id
  // as zod's z.number(): finite only (JSON never yields NaN or Infinity, but the check must not differ)
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id)) && id !== null) return undefined
  if ('result' in v) return { jsonrpc: '2.0', id, result: v.result }
  const e = v.error
  if (!isRecord(e) || !Number.isSafeInteger(e.code) || typeof e.message !== 'string') return undefined
  const error: RpcErrorObject = 'data' in e ? { code: e.code as number, message: e.message, data: e.data } : { code: e.code as number, message: e.message }
  return { jsonrpc: '2.0', id, error }
}
