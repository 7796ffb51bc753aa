// The A2A front door's shapes for the OpenAPI document (docs/api.md#a2a-front-door): JSON-RPC 2.0
// at the level a client sees it. The door's core frames and checks every request itself
// (src/front/framing.ts) and the card describes the methods; these schemas document, they do not
// validate (routes/a2a.ts).
import { z } from 'zod'

const RpcIdSchema = z.union([z.string(), z.number().int()]).describe('A string or an integer; echoed in the answer.')

export const A2aRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RpcIdSchema,
  method: z.string().describe('`A2A-Version: 0.3` (or none): `message/send`, `tasks/get`, `tasks/cancel`; `1.0`: `SendMessage`, `GetTask`, `CancelTask`; and in controller mode `campaign/claim_control`, `campaign/read_control`, `campaign/renew_control`, `campaign/release_control`, `campaign/intervene`.'),
  params: z.record(z.string(), z.unknown()).describe('The method\'s params: an object.')
}).meta({
  id: 'A2aRequest',
  description: 'One JSON-RPC 2.0 request: no batches, no notifications, nothing else at the top level.',
  example: {
    jsonrpc: '2.0',
    id: 'h-2026-12-01-a1',
    method: 'message/send',
    params: {
      configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
      message: {
        role: 'user',
        kind: 'message',
        messageId: 'h-2026-12-01-a1',
        extensions: ['urn:openoperator:argus-supervisor:v1'],
        metadata: { 'urn:openoperator:argus-supervisor:v1': { operation: 'supervisor.health', requestId: 'h-2026-12-01-a1' } },
        parts: [{ kind: 'data', data: { params: {} } }]
      }
    }
  }
})

export const A2aErrorSchema = z.object({
  code: z.number().int().describe('-32700/-32600/-32601/-32602/-32603, A2A\'s -32001…-32009, or the front door\'s own -32010…-32023 (docs/api.md#a2a-front-door).'),
  message: z.string().describe('The gateway\'s own words, never a remote\'s.'),
  data: z.record(z.string(), z.unknown()).optional().describe('The contract `code`, `retryable`, and where they apply `requestId`, `missingPrerequisites`, `reconcile`.')
}).meta({ id: 'A2aError', example: { code: -32011, message: 'This message id was sent before with other content; nothing was sent.', data: { code: 'idempotency_key_mismatch', retryable: false, requestId: 'sub-2026-12-01-a2' } } })

export const A2aResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RpcIdSchema.nullable().describe('The request\'s id; null when it could not be read.'),
  result: z.record(z.string(), z.unknown()).optional().describe('A message (an Argus read), a task (a submission, tasks/get, tasks/cancel), or the campaign method\'s result.'),
  error: A2aErrorSchema.optional()
}).meta({
  id: 'A2aResponse',
  description: 'Exactly one of `result` and `error`.',
  example: { jsonrpc: '2.0', id: 'h-2026-12-01-a1', result: { kind: 'message', role: 'agent', messageId: 'argus-2026-12-01-b7', parts: [{ kind: 'data', data: { ok: true, operation: 'supervisor.health' } }] } }
})

export const A2aAgentCardSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  capabilities: z.record(z.string(), z.unknown()),
  skills: z.array(z.record(z.string(), z.unknown())),
  securitySchemes: z.record(z.string(), z.unknown()),
  signatures: z.array(z.record(z.string(), z.unknown())).optional().describe('With GATEWAY_CARD_SIGNING_KEY: a detached JWS over the card\'s RFC 8785 canonical form.')
}).meta({ id: 'A2aAgentCard', description: 'The gateway\'s own A2A agent card: v0.3\'s shape, or v1.0\'s to `A2A-Version: 1.0`.' })

export const A2aJwksSchema = z.object({
  keys: z.array(z.record(z.string(), z.unknown())).describe('The public key the card is signed with.')
}).meta({ id: 'A2aJwks' })
