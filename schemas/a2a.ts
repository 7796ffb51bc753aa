// A2A result shapes as the gateway reads them (loose: real servers add fields freely).
import { z } from 'zod'

export const TASK_STATES = ['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required', 'unknown'] as const
export type TaskState = typeof TASK_STATES[number]

/**
 * A task's state as the REST interface shows it (docs/design.md#task-projection): always one of
 * TASK_STATES, v0.3's names (a v1.0 wire's `TASK_STATE_*` are translated at the wire, src/upstream/a2a-wire.ts);
 * anything else the remote says, `unknown`, as the reader treats it.
 */
export const TaskStateSchema = z.enum(TASK_STATES).meta({
  id: 'TaskState',
  description: 'The task\'s A2A state, in A2A v0.3\'s names whichever protocol version the remote speaks (v1.0\'s TASK_STATE_WORKING is working). unknown: a state the remote named that is none of the others. completed is an attempt outcome, never proof the mission was accepted.'
})
const KNOWN_STATES: ReadonlySet<string> = new Set(TASK_STATES)
export const taskState = (s: unknown): TaskState => typeof s === 'string' && KNOWN_STATES.has(s) ? s as TaskState : 'unknown'

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

// The same shapes checked by hand, for the hot path (docs/design.md#hot-path): each answers as
// the schema's safeParse(v).success does and narrows to its type, without zod's walk and copy.
// test/unit/hot-path-checks.property.test.ts holds them equal on arbitrary input.
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const optString = (v: unknown): boolean => v === undefined || typeof v === 'string'

export const isPart = (v: unknown): v is z.infer<typeof PartSchema> => isRecord(v) && typeof v.kind === 'string'

export const isMessage = (v: unknown): v is A2aMessage =>
  isRecord(v) && v.kind === 'message' && Array.isArray(v.parts) && optString(v.messageId)

export const isArtifact = (v: unknown): v is z.infer<typeof ArtifactSchema> =>
  isRecord(v) && Array.isArray(v.parts) && optString(v.artifactId) && optString(v.name)

export const isTask = (v: unknown): v is A2aTask =>
  isRecord(v) &&
  (v.kind === undefined || v.kind === 'task') &&
  typeof v.id === 'string' && v.id.length >= 1 &&
  optString(v.contextId) &&
  isRecord(v.status) && typeof v.status.state === 'string' &&
  (v.artifacts === undefined || Array.isArray(v.artifacts)) &&
  (v.metadata === undefined || isRecord(v.metadata))
