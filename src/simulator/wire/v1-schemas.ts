// Request validation of the A2A v1.0 methods. The SDK reads params leniently (protobuf JSON:
// unknown keys dropped, snake_case aliases accepted); the simulator adds two deliberate
// strictnesses so a client that leaks v0.3 shapes fails loudly in tests: a `kind` key in the
// message or a part, and (as on v0.3) a snake_case key in a protocol object, are refused.
import { z } from 'zod'
import { snakeCaseKeys } from '../rpc/params.js'

const Metadata = z.record(z.string(), z.unknown())

// google.protobuf.Value: any JSON value; `undefined` means the member is absent.
const Value = z.custom<unknown>((v) => v !== undefined)

const Part = z
  .object({
    text: z.string().optional(),
    data: Value.optional(),
    url: z.string().optional(),
    raw: z.string().optional(),
    mediaType: z.string().optional(),
    filename: z.string().optional(),
    metadata: Metadata.optional()
  })
  .refine((p) => [p.text, p.data, p.url, p.raw].filter((c) => c !== undefined).length === 1, { message: 'a part needs exactly one of text, data, url, raw' })

const Message = z.object({
  messageId: z.string().min(1),
  role: z.enum(['ROLE_USER', 'ROLE_AGENT']),
  parts: z.array(Part),
  metadata: Metadata.optional(),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  extensions: z.array(z.string()).optional()
})

export const SendMessageParams = z.object({
  tenant: z.string().optional(),
  message: Message,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      historyLength: z.number().int().optional(),
      returnImmediately: z.boolean().optional(),
      taskPushNotificationConfig: z.record(z.string(), z.unknown()).optional()
    })
    .optional(),
  metadata: Metadata.optional()
})
export type SendMessageParams = z.infer<typeof SendMessageParams>

export const GetTaskParams = z.object({ tenant: z.string().optional(), id: z.string(), historyLength: z.number().int().optional() })
export const CancelTaskParams = z.object({ tenant: z.string().optional(), id: z.string(), metadata: Metadata.optional() })

/** The SDK's own check before any method: params must be an object with no empty key. */
export function paramsAreValid (params: unknown): boolean {
  return isObject(params) && !Object.keys(params).includes('')
}

/** The first v0.3 leftover in SendMessage params: a `kind` key, then a snake_case one; undefined when clean. */
export function v03Leftover (params: unknown): string | undefined {
  const message = isObject(params) ? params.message : undefined
  if (isObject(message)) {
    if ('kind' in message) return 'message.kind is not an A2A v1.0 field (v1.0 messages and parts carry no kind)'
    const parts = Array.isArray(message.parts) ? message.parts : []
    const index = parts.findIndex((p) => isObject(p) && 'kind' in p)
    if (index >= 0) return `message.parts.${index}.kind is not an A2A v1.0 field (v1.0 messages and parts carry no kind)`
  }
  const snake = snakeCaseKeys(params)
  return snake.length > 0 ? `${snake[0]} is not an A2A field (the wire is camelCase)` : undefined
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
