// Properties of the task projection (docs/design.md#task-projection) over arbitrary remote
// tasks: bounds hold, file URIs stay inert, and nothing outside the projection's fields
// survives.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { TaskSchema } from '../../schemas/a2a.js'
import { ProjectedArtifactSchema, TaskProjectionSchema, type TaskProjection } from '../../schemas/task.js'
import { MAX_ARTIFACT_BYTES, MAX_ARTIFACTS, projectTaskJson } from '../../src/argus/projection.js'

const part = fc.oneof(
  fc.record({ kind: fc.constant('text'), text: fc.string({ maxLength: 6000 }), metadata: fc.option(fc.dictionary(fc.string(), fc.string())) }),
  fc.record({ kind: fc.constant('data'), data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })) }),
  fc.record({ kind: fc.constant('file'), file: fc.record({ name: fc.string(), mimeType: fc.string(), uri: fc.webUrl(), bytes: fc.option(fc.base64String()) }) }),
  fc.record({ kind: fc.string(), junk: fc.jsonValue({ maxDepth: 1 }) }),
  fc.jsonValue({ maxDepth: 1 })
)
const artifact = fc.oneof(
  fc.record({ artifactId: fc.string(), name: fc.option(fc.string(), { nil: undefined }), parts: fc.array(part, { maxLength: 6 }), metadata: fc.jsonValue({ maxDepth: 1 }) }),
  fc.jsonValue({ maxDepth: 1 })
)
const task = fc.record({
  id: fc.string({ minLength: 1 }),
  contextId: fc.option(fc.string(), { nil: undefined }),
  kind: fc.constant('task'),
  status: fc.record({ state: fc.constantFrom('submitted', 'working', 'completed', 'failed', 'canceled', 'weird') }),
  history: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  artifacts: fc.option(fc.array(artifact, { maxLength: 48 }), { nil: undefined }),
  metadata: fc.option(fc.record({
    argus_supervisor: fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.record({ revision: fc.integer(), stage: fc.string(), run_id: fc.string(), blocked: fc.boolean(), extra: fc.string() })),
    metrics: fc.jsonValue({ maxDepth: 1 }),
    stdout: fc.string()
  }), { nil: undefined })
})

describe('task projection properties', () => {
  it('holds its bounds and shape for any task', () => {
    fc.assert(fc.property(task, (raw) => {
      const parsed = TaskSchema.parse(raw)
      // the route's text, written by hand: valid JSON, written as JSON.stringify writes it, the
      // schema's fields in the schema's order
      const text = projectTaskJson(parsed)
      const p = JSON.parse(text) as TaskProjection
      expect(JSON.stringify(p)).toBe(text)
      expect(Object.keys(p)).toEqual(Object.keys(TaskProjectionSchema.shape))
      for (const a of p.artifacts) expect(Object.keys(a)).toEqual(Object.keys(ProjectedArtifactSchema.shape))
      expect(TaskProjectionSchema.safeParse(p).success).toBe(true)
      expect(p.outcomeScope).toBe('attempt')
      expect(p.artifacts.length).toBeLessThanOrEqual(MAX_ARTIFACTS)
      const bytes = p.artifacts.reduce((n, a) => n + Buffer.byteLength(JSON.stringify(a.parts), 'utf8'), 0)
      expect(bytes).toBeLessThanOrEqual(MAX_ARTIFACT_BYTES)
      const total = (raw.artifacts ?? []).length
      if (total > MAX_ARTIFACTS) expect(p.artifactsTruncated).toBe(true)
      for (const a of p.artifacts) {
        for (const part of a.parts) {
          expect(Object.keys(part).sort()).toEqual(part.kind === 'text' ? ['kind', 'text'] : part.kind === 'data' ? ['data', 'kind'] : ['file', 'kind'])
          if (part.kind === 'file') expect(part.file.followed).toBe(false)
        }
      }
      expect(text).not.toContain('"history"')
      expect(text).not.toContain('"stdout"')
      expect(text).not.toContain('"metrics"')
      expect(text).not.toContain('"bytes"')
    }), { numRuns: runs(300) })
  })
})
