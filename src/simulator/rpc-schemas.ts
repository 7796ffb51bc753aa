// Request validation as FastA2A 0.5's pydantic models do it (camelCase aliases, required
// fields, unknown keys dropped), plus one deliberate strictness: a snake_case key in any A2A
// protocol object is refused, so a client that sends one fails loudly in tests.
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

/**
 * Dotted paths of snake_case keys in the protocol objects of params. Metadata and data
 * values are the extensions' own business (the campaign-control extension is snake_case),
 * so they are not looked into.
 */
export function snakeCaseKeys (params: unknown): string[] {
  const found: string[] = []
  const visit = (value: unknown, path: string): void => {
    if (!isObject(value)) return
    for (const key of Object.keys(value)) {
      if (key.includes('_')) found.push(path === '' ? key : `${path}.${key}`)
    }
  }
  visit(params, '')
  if (!isObject(params)) return found
  visit(params.configuration, 'configuration')
  const message = params.message
  visit(message, 'message')
  if (isObject(message) && Array.isArray(message.parts)) {
    message.parts.forEach((part, i) => {
      visit(part, `message.parts.${i}`)
      if (isObject(part)) visit(part.file, `message.parts.${i}.file`)
    })
  }
  return found
}

/** A short, value-free description of the first validation problem. */
export function describeIssue (error: z.ZodError): string {
  const issue = error.issues[0]
  const path = issue === undefined || issue.path.length === 0 ? 'params' : issue.path.map(String).join('.')
  return `${path} is missing or invalid`
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
