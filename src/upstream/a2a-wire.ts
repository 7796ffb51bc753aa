// The two A2A protocol generations on the wire (docs/design.md#protocol-versions). The gateway
// builds and reads one shape, v0.3's (`kind` discriminators, lower-case states), everywhere
// else; a v1.0 wire translates at this boundary only: the `A2A-Version` header, the method
// names, `returnImmediately` for `blocking`, parts without `kind`, `TASK_STATE_*` states and the
// `{task}` / `{message}` wrapper of a send. The v0.3 wire is the identity: nothing allocated.

export type ProtocolVersion = '0.3' | '1.0'

/** the A2A methods the gateway calls, by their v0.3 names */
export type A2aMethod = 'message/send' | 'tasks/get' | 'tasks/cancel'

export interface A2aWire {
  version: ProtocolVersion
  /** headers every JSON-RPC call of this version carries, plus those given */
  headers: (extra?: Record<string, string>) => Record<string, string>
  method: (m: A2aMethod) => string
  /** `message/send` params written in v0.3's shape, as this version writes them */
  sendParams: (p: Record<string, unknown>) => Record<string, unknown>
  /** a send's result in v0.3's shape (a task or a message), or undefined when it is neither */
  sendResult: (r: unknown) => unknown
  /** a task (`tasks/get`, `tasks/cancel`) in v0.3's shape */
  task: (r: unknown) => unknown
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export const WIRE_V03: A2aWire = {
  version: '0.3',
  headers: (extra) => extra ?? {},
  method: (m) => m,
  sendParams: (p) => p,
  sendResult: (r) => r,
  task: (r) => r
}

const V1_METHODS: Record<A2aMethod, string> = { 'message/send': 'SendMessage', 'tasks/get': 'GetTask', 'tasks/cancel': 'CancelTask' }

// TASK_STATE_UNSPECIFIED and anything unrecognised read as `unknown`: polling stops there (502)
export const V1_STATES: Readonly<Record<string, string>> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required'
}
export const V1_ROLES: Readonly<Record<string, string>> = { user: 'ROLE_USER', agent: 'ROLE_AGENT' }

/** a v0.3 part as v1.0 writes it: the member named by `kind`, no `kind` */
function partToV1 (p: unknown): unknown {
  if (!isRecord(p)) return p
  const { kind, ...rest } = p
  if (kind === 'file' && isRecord(rest.file)) {
    const f = rest.file
    return { ...(typeof f.uri === 'string' ? { url: f.uri } : { raw: f.bytes }), ...(f.mimeType !== undefined ? { mediaType: f.mimeType } : {}), ...(f.name !== undefined ? { filename: f.name } : {}) }
  }
  return rest
}

function messageToV1 (m: unknown): unknown {
  if (!isRecord(m)) return m
  const { kind: _kind, role, parts, ...rest } = m
  return { ...rest, role: typeof role === 'string' ? V1_ROLES[role] ?? role : role, parts: Array.isArray(parts) ? parts.map(partToV1) : parts }
}

/** a v1.0 part as v0.3 wrote it; a part of no known member becomes one nothing reads */
function partToV03 (p: unknown): unknown {
  if (!isRecord(p)) return p
  if ('text' in p) return { kind: 'text', text: p.text }
  if ('data' in p) return { kind: 'data', data: p.data }
  if ('url' in p || 'raw' in p) {
    return { kind: 'file', file: { ...('url' in p ? { uri: p.url } : { bytes: p.raw }), mimeType: p.mediaType, name: p.filename } }
  }
  return { kind: 'unknown' }
}

const partsToV03 = (parts: unknown): unknown => Array.isArray(parts) ? parts.map(partToV03) : parts

function messageToV03 (m: unknown): unknown {
  if (!isRecord(m)) return undefined
  return { kind: 'message', messageId: m.messageId, parts: partsToV03(m.parts) }
}

function taskToV03 (t: unknown): unknown {
  if (!isRecord(t)) return undefined
  const status = isRecord(t.status)
    ? { state: typeof t.status.state === 'string' ? V1_STATES[t.status.state] ?? 'unknown' : t.status.state, ...(t.status.message !== undefined ? { message: messageToV03(t.status.message) } : {}) }
    : t.status
  const artifacts = Array.isArray(t.artifacts)
    ? t.artifacts.map((a: unknown) => isRecord(a) ? { artifactId: a.artifactId, name: a.name, parts: partsToV03(a.parts) } : a)
    : t.artifacts
  return { kind: 'task', id: t.id, contextId: t.contextId, status, ...(artifacts !== undefined ? { artifacts } : {}), ...(t.metadata !== undefined ? { metadata: t.metadata } : {}) }
}

export const WIRE_V10: A2aWire = {
  version: '1.0',
  // the version header on every call, extension methods included; A2A-Extensions is v1.0's
  // name for the extensions header, X-A2A-Extensions kept for servers that read only that one
  headers: (extra) => {
    const h: Record<string, string> = { 'a2a-version': '1.0', ...extra }
    const ext = extra?.['x-a2a-extensions']
    if (ext !== undefined) h['a2a-extensions'] = ext
    return h
  },
  method: (m) => V1_METHODS[m],
  sendParams: (p) => {
    const { configuration, message, ...rest } = p
    const out: Record<string, unknown> = { ...rest, message: messageToV1(message) }
    if (isRecord(configuration)) {
      const { blocking, ...conf } = configuration
      out.configuration = { ...conf, returnImmediately: blocking !== true }
    }
    return out
  },
  sendResult: (r) => {
    if (!isRecord(r)) return undefined
    if ('task' in r) return taskToV03(r.task)
    if ('message' in r) return messageToV03(r.message)
    return undefined
  },
  task: taskToV03
}

export const wireFor = (v: ProtocolVersion): A2aWire => v === '1.0' ? WIRE_V10 : WIRE_V03
