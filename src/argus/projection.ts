// The task projection (docs/design.md#task-projection): identity, state, compact campaign
// metadata and bounded artifacts. History, metrics and stdout are dropped; a file part's URI is
// inert text (`followed: false`) that nothing in the gateway ever fetches. Shapes are checked by
// hand (schemas/a2a.ts `isArtifact`, `isPart`; docs/design.md#hot-path), not by zod per item.
import { isArtifact, isPart, taskState, type A2aTask } from '../../schemas/a2a.js'
import type { ProjectedPart } from '../../schemas/task.js'
import { isObject } from './extract.js'
import { jsonNumberOrNull, jsonString, jsonStringOrNull } from '../core/json-text.js'

export const MAX_ARTIFACTS = 32
export const MAX_ARTIFACT_BYTES = 64 * 1024

const str = (v: unknown): string | null => typeof v === 'string' ? v : null

/** the supervisor's compact metadata as JSON, TaskProjection's `supervisor` field by field */
function supervisorJson (task: A2aTask): string {
  const m = task.metadata?.argus_supervisor
  if (!isObject(m)) return 'null'
  return '{"revision":' + jsonNumberOrNull(m.revision) + ',"stage":' + jsonStringOrNull(m.stage) +
    ',"runId":' + jsonStringOrNull(m.run_id) + ',"attemptId":' + jsonStringOrNull(m.attempt_id) +
    ',"sourceSha":' + jsonStringOrNull(m.source_sha) + ',"evidenceRevision":' + jsonNumberOrNull(m.evidence_revision) +
    ',"evidenceRef":' + jsonStringOrNull(m.evidence_ref) + ',"blocked":' + (typeof m.blocked === 'boolean' ? String(m.blocked) : 'null') + '}'
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
 * way, its short strings and the supervisor's fields written by hand (src/core/json-text.ts). Its
 * fields and their order are TaskProjection's (test/unit/projection.property.test.ts).
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
    artifactsJson += (artifactsJson === '' ? '' : ',') + '{"artifactId":' + jsonStringOrNull(raw.artifactId) + ',"name":' + jsonStringOrNull(raw.name) + ',"parts":' + partsJson + '}'
  }
  // state: one of the A2A states the document lists; a name outside them is `unknown`, as the reader reads it
  return '{"taskId":' + jsonString(task.id) + ',"contextId":' + jsonStringOrNull(task.contextId) +
    ',"state":' + jsonString(taskState(task.status.state)) + ',"outcomeScope":"attempt","supervisor":' + supervisorJson(task) +
    ',"artifacts":[' + artifactsJson + '],"artifactsTruncated":' + String(truncated) + '}'
}
