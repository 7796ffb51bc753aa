// The task projection served by GET /v1/tasks/:taskId (docs/design.md#task-projection).
import { z } from 'zod'
import { TaskStateSchema } from './a2a.js'

const TASK_ID = /^[A-Za-z0-9._:-]{1,256}$/
export const TaskIdSchema = z.string().regex(TASK_ID, 'must be 1-256 characters of [A-Za-z0-9._:-]')
export const TaskParamsSchema = z.strictObject({ taskId: TaskIdSchema })
export const NoQuerySchema = z.strictObject({})

/** TaskParamsSchema's verdict by hand, for the hot path (test/unit/hot-path-checks.property.test.ts holds them equal) */
export function isTaskParams (v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  let n = 0
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue
    if (k !== 'taskId') return false
    n++
  }
  const id = (v as { taskId?: unknown }).taskId
  return n === 1 && typeof id === 'string' && TASK_ID.test(id)
}

/** NoQuerySchema's verdict by hand: no key at all */
export function isNoQuery (v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  for (const k in v) if (Object.hasOwn(v, k)) return false
  return true
}

export const SupervisorSchema = z.object({
  revision: z.number().nullable(),
  stage: z.string().nullable(),
  runId: z.string().nullable(),
  attemptId: z.string().nullable(),
  sourceSha: z.string().nullable(),
  evidenceRevision: z.number().nullable(),
  evidenceRef: z.string().nullable(),
  blocked: z.boolean().nullable()
})

export const ProjectedPartSchema = z.union([
  z.object({ kind: z.literal('text'), text: z.string() }),
  z.object({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) }),
  z.object({
    kind: z.literal('file'),
    file: z.object({ name: z.string().nullable(), mimeType: z.string().nullable(), uri: z.string().nullable(), followed: z.literal(false) })
  })
])
export type ProjectedPart = z.infer<typeof ProjectedPartSchema>

export const ProjectedArtifactSchema = z.object({
  artifactId: z.string().nullable(),
  name: z.string().nullable(),
  parts: z.array(ProjectedPartSchema)
})

export const TaskProjectionSchema = z.object({
  taskId: z.string(),
  contextId: z.string().nullable(),
  state: TaskStateSchema,
  outcomeScope: z.literal('attempt'),
  supervisor: SupervisorSchema.nullable(),
  artifacts: z.array(ProjectedArtifactSchema),
  artifactsTruncated: z.boolean()
}).meta({
  id: 'TaskProjection',
  description: 'A completed state is an attempt outcome, never proof the mission was accepted.',
  example: {
    taskId: 'task-7f3c2a91',
    contextId: 'ctx-7f3c2a91',
    state: 'completed',
    outcomeScope: 'attempt',
    supervisor: { revision: 4, stage: 'eval', runId: 'run-2026-12-01-3', attemptId: 'att-2', sourceSha: '5e1f0c0ffee0123456789abcdef0123456789abc', evidenceRevision: 2, evidenceRef: 'ev/run-2026-12-01-3', blocked: false },
    artifacts: [
      { artifactId: 'artifact-result', name: 'result', parts: [{ kind: 'data', data: { stage: 'eval', score: 0.91, passed: true } }] },
      { artifactId: 'artifact-report', name: 'report', parts: [{ kind: 'file', file: { name: 'report.json', mimeType: 'application/json', uri: 'https://openoperator.example/artifacts/task-7f3c2a91/report.json', followed: false } }] }
    ],
    artifactsTruncated: false
  }
})
export type TaskProjection = z.infer<typeof TaskProjectionSchema>
