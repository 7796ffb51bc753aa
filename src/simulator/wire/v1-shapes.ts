// The A2A v1.0 JSON shapes, translated at the wire only: the task book, the Argus reads and
// the campaign-control rules keep working on v0.3-shaped objects, so a task created under one
// version reads the same under the other. v1.0 has no `kind` anywhere; states and roles are
// the proto enum names; a part is `{text}`, `{data}`, `{url}` or `{raw}` with `mediaType` and
// `filename`; timestamps carry a zone; empty lists are left out, as the SDK's Task.toJSON
// leaves them.
import type { Task } from '../books/task-book.js'
import { v1State } from '../books/task-states.js'
import type { Message } from './v03-schemas.js'

type Json = Record<string, unknown>

function v1Role (role: unknown): string {
  return role === 'user' ? 'ROLE_USER' : role === 'agent' ? 'ROLE_AGENT' : 'ROLE_UNSPECIFIED'
}

/**
 * A stored task on the v1.0 wire. `historyLength` as v1.0 reads it: absent, all of it; 0 or
 * less, none (the key is then left out); n, the last n.
 */
export function v1Task (task: Task, historyLength?: number): Json {
  const out: Json = { id: task.id, contextId: task.contextId }
  if (isObject(task.status)) out.status = v1Status(task.status)
  if (Array.isArray(task.artifacts) && task.artifacts.length > 0) out.artifacts = task.artifacts.map((a) => v1Artifact(a))
  let history = Array.isArray(task.history) ? task.history : []
  if (historyLength !== undefined) history = historyLength <= 0 ? [] : history.slice(-historyLength)
  if (history.length > 0) out.history = history.map((m) => v1Message(m))
  if (task.metadata !== undefined) out.metadata = task.metadata
  return out
}

function v1Status (status: Json): Json {
  const out: Json = { state: v1State(status.state) }
  if (isObject(status.message)) out.message = v1Message(status.message)
  if (status.timestamp !== undefined) out.timestamp = v1Timestamp(status.timestamp)
  return out
}

// google.protobuf.Timestamp is RFC 3339 with a zone; FastA2A's zone-less UTC stamps get their Z.
function v1Timestamp (stamp: unknown): unknown {
  return typeof stamp === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(stamp) ? `${stamp}Z` : stamp
}

function v1Artifact (artifact: unknown): Json {
  if (!isObject(artifact)) return {}
  const { parts, ...rest } = artifact
  return { ...rest, parts: Array.isArray(parts) ? parts.map((p) => v1Part(p)) : [] }
}

export function v1Message (message: unknown): Json {
  if (!isObject(message)) return {}
  const { kind: _kind, role, parts, ...rest } = message
  const out: Json = { ...rest, role: v1Role(role), parts: Array.isArray(parts) ? parts.map((p) => v1Part(p)) : [] }
  for (const key of ['parts', 'extensions', 'referenceTaskIds']) if (Array.isArray(out[key]) && (out[key] as unknown[]).length === 0) delete out[key]
  return out
}

function v1Part (part: unknown): Json {
  if (!isObject(part)) return {}
  const metadata = part.metadata === undefined ? {} : { metadata: part.metadata }
  if (part.kind === 'text') return { text: part.text, ...metadata }
  if (part.kind === 'data') return { data: part.data, ...metadata }
  if (part.kind === 'file' && isObject(part.file)) {
    const { file } = part
    const content = typeof file.uri === 'string' ? { url: file.uri } : { raw: file.bytes }
    return { ...content, ...metadata, ...(typeof file.name === 'string' ? { filename: file.name } : {}), ...(typeof file.mimeType === 'string' ? { mediaType: file.mimeType } : {}) }
  }
  const { kind: _kind, ...rest } = part
  return rest
}

/** A validated v1.0 message as the books keep messages (v0.3 shape). */
export function internalMessage (message: V1MessageInput): Message {
  const { role, parts, ...rest } = message
  return {
    ...rest,
    kind: 'message',
    role: role === 'ROLE_USER' ? 'user' : 'agent',
    parts: parts.map((p) => internalPart(p))
  } as Message
}

function internalPart (part: V1PartInput): Json {
  const metadata = part.metadata === undefined ? {} : { metadata: part.metadata }
  if (part.text !== undefined) return { kind: 'text', text: part.text, ...metadata }
  if (part.data !== undefined) return { kind: 'data', data: part.data, ...metadata }
  const file: Json = part.url !== undefined ? { uri: part.url } : { bytes: part.raw }
  if (part.mediaType !== undefined) file.mimeType = part.mediaType
  if (part.filename !== undefined) file.name = part.filename
  return { kind: 'file', file, ...metadata }
}

export interface V1PartInput {
  text?: string
  data?: unknown
  url?: string
  raw?: string
  mediaType?: string
  filename?: string
  metadata?: Record<string, unknown>
}

export interface V1MessageInput {
  messageId: string
  role: 'ROLE_USER' | 'ROLE_AGENT'
  parts: V1PartInput[]
  metadata?: Record<string, unknown>
  contextId?: string
  taskId?: string
  referenceTaskIds?: string[]
  extensions?: string[]
}

function isObject (value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
