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
  data: z.union([
    z.record(z.string(), z.unknown()).describe('Without `A2A-Version` (or with 0.3): the contract `code`, `retryable`, and where they apply `requestId`, `missingPrerequisites`, `reconcile`.'),
    z.array(z.looseObject({ '@type': z.string() })).describe('To `A2A-Version: 1.0` (A2A v1.0 §9.5): a `type.googleapis.com/google.rpc.ErrorInfo` — `reason` the A2A error name (`TASK_NOT_FOUND`) in domain `a2a-protocol.org`, or the contract code (`IDEMPOTENCY_KEY_MISMATCH`) in domain `openoperator-gateway`; `metadata` the same fields as strings — and for -32602 a `type.googleapis.com/google.rpc.BadRequest` whose `fieldViolations` name the field.')
  ]).optional()
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
  signatures: z.array(z.record(z.string(), z.unknown())).optional().describe('With GATEWAY_CARD_SIGNING_KEY: detached JWS signatures, one per distinct canonical form of the card — A2A v1.0 §8.4.1\'s, the one @a2a-js/sdk verifies, the whole card\'s — each RFC 8785 JSON.')
}).meta({ id: 'A2aAgentCard', description: 'The gateway\'s own A2A agent card: v0.3\'s shape, or v1.0\'s to `A2A-Version: 1.0`.' })

export const A2aJwksSchema = z.object({
  keys: z.array(z.record(z.string(), z.unknown())).describe('The public key the card is signed with.')
}).meta({ id: 'A2aJwks' })
