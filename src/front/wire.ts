// What callers send, in the one shape the gateway reads (docs/api.md#a2a-front-door), and its
// answers back in the caller's generation. Inbound: A2A's snake_case keys (`message_id`,
// `context_id`, `task_id`, `accepted_output_modes`, `history_length`, …) become camelCase, the
// Argus envelope's legacy `request_id` becomes `requestId` — both spellings with different
// values are refused — and a v1.0 request (parts without `kind`, `ROLE_USER`,
// `returnImmediately`) becomes v0.3's shape. Outbound: v0.3's shape as is, or v1.0's
// (`TASK_STATE_*`, parts without `kind`, a send's `{task}` / `{message}` wrapper). Only A2A's
// own objects are renamed: a data part's data and any metadata keep their keys.
import { deeperThan } from '../core/value-depth.js'
import { ARGUS_EXTENSION_URN } from '../argus/envelope.js'
import { V1_ROLES, V1_STATES } from '../upstream/a2a-wire.js'
import { FieldError, invalidField } from './errors.js'
import type { FrontVersion } from './framing.js'

type Obj = Record<string, unknown>
const isRecord = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

const SNAKE: Record<string, string> = {
  message_id: 'messageId',
  context_id: 'contextId',
  task_id: 'taskId',
  reference_task_ids: 'referenceTaskIds',
  accepted_output_modes: 'acceptedOutputModes',
  history_length: 'historyLength',
  push_notification_config: 'pushNotificationConfig',
  return_immediately: 'returnImmediately',
  media_type: 'mediaType',
  mime_type: 'mimeType',
  artifact_id: 'artifactId'
}

/** how deep a value the door compares in two spellings may nest: the control plane's body bound */
export const MAX_COMPARED_DEPTH = 32

/** the two spellings' values compared as JSON text, each bounded first: no depth reaches the stack's end */
function same (a: unknown, b: unknown, field: string): boolean {
  if (deeperThan(a, MAX_COMPARED_DEPTH) || deeperThan(b, MAX_COMPARED_DEPTH)) throw invalidField(field, `${field} nests deeper than ${MAX_COMPARED_DEPTH} levels.`)
  return JSON.stringify(a) === JSON.stringify(b)
}

/** one object's snake_case A2A keys renamed; both spellings that disagree are refused */
function camel (o: Obj, where: string, names: Record<string, string> = SNAKE): Obj {
  let out: Obj | undefined
  for (const [snake, camelName] of Object.entries(names)) {
    if (!Object.hasOwn(o, snake)) continue
    out ??= { ...o }
    if (Object.hasOwn(o, camelName) && !same(o[camelName], o[snake], `${where}.${snake}`)) {
      throw new FieldError('conflicting_fields', `${where}.${snake}`, { message: `${where}.${snake} and ${where}.${camelName} differ; send one.` })
    }
    out[camelName] = o[snake]
    delete out[snake]
  }
  return out ?? o
}

// read with Map#get: a role or state named `constructor` is no entry, never an inherited property
const V1_ROLE: ReadonlyMap<string, string> = new Map(Object.entries(V1_ROLES).map(([v03, v1]) => [v1, v03]))

function partIn (p: unknown, v: FrontVersion): unknown {
  if (!isRecord(p)) return p
  const q = camel(p, 'part')
  if (v === '0.3' || typeof q.kind === 'string') {
    return isRecord(q.file) ? { ...q, file: camel(q.file, 'part.file') } : q
  }
  const { text, data, url, raw, mediaType, filename, ...rest } = q
  if (text !== undefined) return { kind: 'text', text, ...rest }
  if (data !== undefined) return { kind: 'data', data, ...rest }
  if (url !== undefined || raw !== undefined) {
    return { kind: 'file', file: { ...(url !== undefined ? { uri: url } : { bytes: raw }), ...(mediaType !== undefined ? { mimeType: mediaType } : {}), ...(filename !== undefined ? { name: filename } : {}) }, ...rest }
  }
  return { kind: 'unknown', ...rest }
}

/** message/send params in v0.3's camelCase shape */
export function sendParamsIn (params: Obj, v: FrontVersion): Obj {
  const p = camel(params, 'params')
  const out: Obj = { ...p }
  if (p.configuration !== undefined) {
    if (!isRecord(p.configuration)) throw invalidField('params.configuration', 'params.configuration must be an object.')
    const c = camel(p.configuration, 'params.configuration')
    if (v === '1.0' && 'returnImmediately' in c) {
      const { returnImmediately, ...rest } = c
      out.configuration = { ...rest, blocking: returnImmediately !== true }
    } else out.configuration = c
  }
  if (!isRecord(p.message)) throw invalidField('params.message', 'params.message must be an object.')
  const m = camel(p.message, 'params.message')
  const message: Obj = { ...m }
  if (v === '1.0' || m.kind === undefined) message.kind = 'message'
  const role = typeof m.role === 'string' ? V1_ROLE.get(m.role) : undefined
  if (role !== undefined) message.role = role
  if (Array.isArray(m.parts)) message.parts = m.parts.map((x) => partIn(x, v))
  // the Argus envelope's legacy request_id, as the remote accepts it (and the gateway never sends)
  const meta = m.metadata
  if (isRecord(meta) && isRecord(meta[ARGUS_EXTENSION_URN])) {
    message.metadata = { ...meta, [ARGUS_EXTENSION_URN]: camel(meta[ARGUS_EXTENSION_URN], `params.message.metadata["${ARGUS_EXTENSION_URN}"]`, { request_id: 'requestId' }) }
  }
  out.message = message
  // a v1.0 send blocks unless told otherwise
  if (v === '1.0' && out.configuration === undefined) out.configuration = { blocking: true }
  return out
}

/** tasks/get and tasks/cancel params: `id` (v0.3) or `id`/`name` as v1.0 writes it, camelCase keys */
export function taskParamsIn (params: Obj): Obj {
  return camel(params, 'params')
}

// ---- outbound ------------------------------------------------------------------------------

// the upstream wire's tables, read the other way: v0.3's state and role names as v1.0 writes them;
// `unknown` (and anything else) is TASK_STATE_UNSPECIFIED
const V1_STATE: ReadonlyMap<string, string> = new Map(Object.entries(V1_STATES).map(([v1, v03]) => [v03, v1]))

function partOut (p: unknown): unknown {
  if (!isRecord(p)) return p
  const { kind: _kind, ...rest } = p
  return rest
}

function messageOut (m: Obj): Obj {
  const { kind: _kind, role, parts, ...rest } = m
  return { ...rest, role: role === 'agent' ? V1_ROLES.agent : V1_ROLES.user, parts: Array.isArray(parts) ? parts.map(partOut) : [] }
}

/** a task (v0.3's shape) as the caller's version writes it */
export function taskOut (t: Obj, v: FrontVersion): Obj {
  if (v === '0.3') return t
  const { kind: _kind, status, artifacts, ...rest } = t
  const s = isRecord(status) ? { ...status, state: V1_STATE.get(String(status.state)) ?? 'TASK_STATE_UNSPECIFIED' } : status
  const a = Array.isArray(artifacts) ? artifacts.map((x) => isRecord(x) ? { ...x, parts: Array.isArray(x.parts) ? x.parts.map(partOut) : [] } : x) : artifacts
  return { ...rest, status: s, ...(a !== undefined ? { artifacts: a } : {}) }
}

/** a send's result: v0.3's task or message, or v1.0's `{task}` / `{message}` */
export function sendResultOut (r: Obj, v: FrontVersion): Obj {
  if (v === '0.3') return r
  return r.kind === 'message' ? { message: messageOut(r) } : { task: taskOut(r, v) }
}
