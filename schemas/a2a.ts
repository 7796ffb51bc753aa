// A2A result shapes as the gateway reads them (loose: real servers add fields freely).
import { z } from 'zod'

export const TASK_STATES = ['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required', 'unknown'] as const

export const PartSchema = z.looseObject({ kind: z.string() })
export const MessageSchema = z.looseObject({
  kind: z.literal('message'),
  parts: z.array(z.unknown()),
  messageId: z.string().optional()
})
export const ArtifactSchema = z.looseObject({
  artifactId: z.string().optional(),
  name: z.string().optional(),
  parts: z.array(z.unknown())
})
export const TaskSchema = z.looseObject({
  kind: z.literal('task').optional(),
  id: z.string().min(1),
  contextId: z.string().optional(),
  status: z.looseObject({
    state: z.string(),
    message: z.unknown().optional()
  }),
  artifacts: z.array(z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional()
})
export type A2aTask = z.infer<typeof TaskSchema>
export type A2aMessage = z.infer<typeof MessageSchema>
