// The task projection (docs/design.md#task-projection): identity, state, compact campaign
// metadata and bounded artifacts. History, metrics and stdout are dropped; a file part's URI is
// inert text (`followed: false`) that nothing in the gateway ever fetches. Shapes are checked by
// hand (schemas/a2a.ts `isArtifact`, `isPart`; docs/design.md#hot-path), not by zod per item.
import { isArtifact, isPart, taskState, type A2aTask } from '../../schemas/a2a.js'
import type { ProjectedPart, TaskProjection } from '../../schemas/task.js'
import { isObject } from '../argus/extract.js'

export const MAX_ARTIFACTS = 32
export const MAX_ARTIFACT_BYTES = 64 * 1024

const str = (v: unknown): string | null => typeof v === 'string' ? v : null
const num = (v: unknown): number | null => typeof v === 'number' && Number.isFinite(v) ? v : null

function supervisorOf (task: A2aTask): TaskProjection['supervisor'] {
  const m = task.metadata?.argus_supervisor
  if (!isObject(m)) return null
  return {
    revision: num(m.revision),
    stage: str(m.stage),
    runId: str(m.run_id),
    attemptId: str(m.attempt_id),
    sourceSha: str(m.source_sha),
    evidenceRevision: num(m.evidence_revision),
    evidenceRef: str(m.evidence_ref),
    blocked: typeof m.blocked === 'boolean' ? m.blocked : null
  }
}

function projectPart (raw: unknown): ProjectedPart | undefined {
  if (!isPart(raw)) return undefined
  const part = raw
  if (part.kind === 'text' && typeof part.text === 'string') return { kind: 'text', text: part.text }
  if (part.kind === 'data' && isObject(part.data)) return { kind: 'data', data: part.data }
  if (part.kind === 'file' && isObject(part.file)) {
    return { kind: 'file', file: { name: str(part.file.name), mimeType: str(part.file.mimeType), uri: str(part.file.uri), followed: false } }
  }
  return undefined
}

/**
 * The projection as the JSON the route answers (docs/design.md#hot-path), written as the artifact
 * byte budget is counted: each artifact's parts are stringified for the budget anyway, and that
 * text is the answer's, not stringified whole a second time; no projection object is built on the
 * way. Its fields and their order are TaskProjection's (test/unit/projection.property.test.ts).
 */
export function projectTaskJson (task: A2aTask): string {
  let artifactsJson = ''
  const all = task.artifacts ?? []
  let truncated = all.length > MAX_ARTIFACTS
  let budget = MAX_ARTIFACT_BYTES
  for (const raw of all.slice(0, MAX_ARTIFACTS)) {
    if (!isArtifact(raw)) continue
    const parts = raw.parts.map(projectPart).filter((p): p is ProjectedPart => p !== undefined)
    const partsJson = JSON.stringify(parts)
    const bytes = Buffer.byteLength(partsJson, 'utf8')
    if (bytes > budget) {
      truncated = true
      break
    }
    budget -= bytes
    artifactsJson += (artifactsJson === '' ? '' : ',') + '{"artifactId":' + JSON.stringify(raw.artifactId ?? null) + ',"name":' + JSON.stringify(raw.name ?? null) + ',"parts":' + partsJson + '}'
  }
  // state: one of the A2A states the document lists; a name outside them is `unknown`, as the reader reads it
  return '{"taskId":' + JSON.stringify(task.id) + ',"contextId":' + JSON.stringify(task.contextId ?? null) +
    ',"state":' + JSON.stringify(taskState(task.status.state)) + ',"outcomeScope":"attempt","supervisor":' + JSON.stringify(supervisorOf(task)) +
    ',"artifacts":[' + artifactsJson + '],"artifactsTruncated":' + String(truncated) + '}'
}
