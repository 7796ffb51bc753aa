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

/** the projection and its JSON, written once: each artifact's parts are stringified for the byte budget anyway */
function project (task: A2aTask): { projection: TaskProjection; json: string } {
  const artifacts: TaskProjection['artifacts'] = []
  let artifactsJson = ''
  const all = task.artifacts ?? []
  let truncated = all.length > MAX_ARTIFACTS
  let budget = MAX_ARTIFACT_BYTES
  for (const raw of all.slice(0, MAX_ARTIFACTS)) {
    if (!isArtifact(raw)) continue
    const a = raw
    const parts = a.parts.map(projectPart).filter((p): p is ProjectedPart => p !== undefined)
    const partsJson = JSON.stringify(parts)
    const bytes = Buffer.byteLength(partsJson, 'utf8')
    if (bytes > budget) {
      truncated = true
      break
    }
    budget -= bytes
    const artifact = { artifactId: a.artifactId ?? null, name: a.name ?? null, parts }
    artifacts.push(artifact)
    artifactsJson += (artifactsJson === '' ? '' : ',') + '{"artifactId":' + JSON.stringify(artifact.artifactId) + ',"name":' + JSON.stringify(artifact.name) + ',"parts":' + partsJson + '}'
  }
  const projection: TaskProjection = {
    taskId: task.id,
    contextId: task.contextId ?? null,
    // one of the A2A states the document lists; a name outside them is `unknown`, as the reader reads it
    state: taskState(task.status.state),
    outcomeScope: 'attempt',
    supervisor: supervisorOf(task),
    artifacts,
    artifactsTruncated: truncated
  }
  const json = '{"taskId":' + JSON.stringify(projection.taskId) + ',"contextId":' + JSON.stringify(projection.contextId) +
    ',"state":' + JSON.stringify(projection.state) + ',"outcomeScope":"attempt","supervisor":' + JSON.stringify(projection.supervisor) +
    ',"artifacts":[' + artifactsJson + '],"artifactsTruncated":' + String(truncated) + '}'
  return { projection, json }
}

export function projectTask (task: A2aTask): TaskProjection {
  return project(task).projection
}

/**
 * The projection as the JSON the route answers, written as the byte budget is counted
 * (docs/design.md#hot-path): the same text as `JSON.stringify(projectTask(task))`, without
 * stringifying the parts twice (test/unit/projection.property.test.ts holds the two equal).
 */
export function projectTaskJson (task: A2aTask): string {
  return project(task).json
}
