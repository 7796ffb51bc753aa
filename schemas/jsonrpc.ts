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
