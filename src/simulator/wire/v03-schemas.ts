// Request validation of the A2A v0.3 methods as FastA2A 0.5's pydantic models do it (camelCase
// aliases, required fields, unknown keys dropped), plus one deliberate strictness: a snake_case
// key in any A2A protocol object is refused (../rpc/params.ts), so a client that sends one fails
// loudly in tests. The v0.3 shapes are also what the simulator keeps: the v1.0 wire translates
// to them (v1-shapes.ts).
import { z } from 'zod'

const Metadata = z.record(z.string(), z.unknown())

const TextPart = z.object({ kind: z.literal('text'), text: z.string(), metadata: Metadata.optional() })
const FilePart = z.object({
  kind: z.literal('file'),
  file: z.union([
    z.object({ bytes: z.string(), mimeType: z.string().optional(), name: z.string().optional() }),
    z.object({ uri: z.string(), mimeType: z.string().optional(), name: z.string().optional() })
  ]),
  metadata: Metadata.optional()
})
const DataPart = z.object({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()), metadata: Metadata.optional() })
const Part = z.discriminatedUnion('kind', [TextPart, FilePart, DataPart])

export const MessageSchema = z.object({
  role: z.enum(['user', 'agent']),
  parts: z.array(Part),
  kind: z.literal('message'),
  metadata: Metadata.optional(),
  messageId: z.string(),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  extensions: z.array(z.string()).optional()
})
export type Message = z.infer<typeof MessageSchema>

export const MessageSendParamsSchema = z.object({
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()),
      blocking: z.boolean().optional(),
      historyLength: z.number().int().optional(),
      pushNotificationConfig: z.record(z.string(), z.unknown()).optional()
    })
    .optional(),
  message: MessageSchema,
  metadata: Metadata.optional()
})
export type MessageSendParams = z.infer<typeof MessageSendParamsSchema>

export const TaskQueryParamsSchema = z.object({ id: z.string(), historyLength: z.number().int().optional(), metadata: Metadata.optional() })
export const TaskIdParamsSchema = z.object({ id: z.string(), metadata: Metadata.optional() })
