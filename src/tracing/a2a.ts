// OpenTelemetry's A2A conventions (docs/design.md#tracing; semantic-conventions-genai's A2A
// page, status Development, quoted in docs/operating.md#tracing): what the front
// door's SERVER spans and the upstream CLIENT spans share — a method's name as A2A v1.0 names it,
// a task's state as `TASK_STATE_*`, and the facts an A2A request and its answer carry (message,
// task, state, context, and the gateway's own campaign and request ids), read from either
// generation's shape. An id goes on a span only if it is 1–256 characters of the ids' alphabet:
// whatever else a caller or the remote wrote is left off, so no span carries free text.
import { ARGUS_EXTENSION_URN } from '../argus/envelope.js'
import { V1_STATES } from '../upstream/a2a-wire.js'

type Obj = Record<string, unknown>
const rec = (v: unknown): Obj | undefined => typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : undefined

/** the conventions' value for a method (or an error) they do not name */
export const OTHER = '_OTHER'

/** A2A v0.3's method names as v1.0 names them (the conventions' well-known values) */
const V1_NAMES: Readonly<Record<string, string>> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
  // v1.0's own, and the singular list an earlier v1.0 draft used
  ListTaskPushNotificationConfig: 'ListTaskPushNotificationConfigs'
}
const V1_WELL_KNOWN = new Set([...Object.values(V1_NAMES), 'ListTasks'])
/** the campaign-control extension's methods keep their own names (`campaign/claim_control`, …) */
const EXTENSION_METHOD = /^campaign\/[a-z_]{1,40}$/

/** `a2a.method.name`: v1.0's name for either generation's, the extension's as named, else `_OTHER` */
export function a2aMethodName (method: string): string {
  if (Object.hasOwn(V1_NAMES, method)) return V1_NAMES[method]!
  if (V1_WELL_KNOWN.has(method) || EXTENSION_METHOD.test(method)) return method
  return OTHER
}

const STATES = new Set(Object.keys(V1_STATES))
const V03_STATES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(V1_STATES).map(([v1, v03]) => [v03, v1]))

/** `a2a.task.state`: v1.0's `TASK_STATE_*` for either generation's; v0.3's `unknown` and anything else `TASK_STATE_UNSPECIFIED` */
export function taskStateName (state: unknown): string | undefined {
  if (typeof state !== 'string') return undefined
  return STATES.has(state) ? state : V03_STATES[state] ?? 'TASK_STATE_UNSPECIFIED'
}

const ID = /^[A-Za-z0-9._:-]{1,256}$/
const idOf = (v: unknown): string | undefined => typeof v === 'string' && ID.test(v) ? v : undefined

/** a task in an answer: v0.3's (`kind: "task"`), v1.0's bare task (`tasks/get`), or v1.0's `{task}` of a send */
function taskIn (r: Obj | undefined): Obj | undefined {
  if (r === undefined) return undefined
  const wrapped = rec(r.task)
  if (wrapped !== undefined) return wrapped
  return r.kind === 'task' || (r.kind === undefined && typeof r.id === 'string' && rec(r.status) !== undefined) ? r : undefined
}

/** a message in an answer: v0.3's (`kind: "message"`) or v1.0's `{message}` of a send */
const messageIn = (r: Obj | undefined): Obj | undefined => r === undefined ? undefined : rec(r.message) ?? (r.kind === 'message' ? r : undefined)

export interface A2aFacts {
  messageId?: string
  taskId?: string
  taskState?: string
  contextId?: string
  campaignId?: string
  /** the gateway's request id: an Argus read's as the gateway issued it, a mutation's as the caller named it */
  requestId?: string
}

/** what one A2A request (its params, either generation, snake_case too) and its answer say */
export function a2aFacts (params: Obj, result: unknown): A2aFacts {
  const message = rec(params.message)
  const messageMeta = rec(message?.metadata)
  // argus_supervisor: in a submission's message metadata, in a cancel's request metadata
  const asked = rec(messageMeta?.argus_supervisor) ?? rec(rec(params.metadata)?.argus_supervisor)
  const r = rec(result)
  const task = taskIn(r)
  const reply = messageIn(r)
  const answered = rec(rec(task?.metadata)?.argus_supervisor)
  const read = rec(rec(reply?.metadata)?.[ARGUS_EXTENSION_URN])
  const messageId = idOf(message?.messageId ?? message?.message_id)
  const name = typeof params.name === 'string' ? params.name.replace(/^tasks\//, '') : undefined
  return {
    messageId,
    taskId: idOf(task?.id) ?? idOf(params.id) ?? idOf(name),
    taskState: taskStateName(rec(task?.status)?.state),
    contextId: idOf(task?.contextId) ?? idOf(reply?.contextId) ?? idOf(message?.contextId ?? message?.context_id),
    campaignId: idOf(params.campaign_id) ?? idOf(asked?.campaign_id) ?? idOf(answered?.campaign_id),
    // a read's id is the one in its answer, never the envelope's (the gateway issues its own);
    // a submission's message id is its request id
    requestId: idOf(answered?.request_id) ?? idOf(read?.requestId) ?? idOf(params.request_id) ?? idOf(asked?.request_id) ?? (asked !== undefined ? messageId : undefined)
  }
}

/** the conventions' attributes (and the gateway's own) for these facts; absent ones left off */
export function factAttributes (f: A2aFacts, out: Record<string, string | number>): void {
  if (f.messageId !== undefined) out['a2a.message.id'] = f.messageId
  if (f.taskId !== undefined) out['a2a.task.id'] = f.taskId
  if (f.taskState !== undefined) out['a2a.task.state'] = f.taskState
  if (f.contextId !== undefined) out['gen_ai.conversation.id'] = f.contextId
  if (f.campaignId !== undefined) out['gateway.campaign_id'] = f.campaignId
  if (f.requestId !== undefined) out['gateway.request_id'] = f.requestId
}

/** a card's name and version (`gen_ai.agent.*`), when strings; cut to 128 characters, the one text of a card a span holds */
export function agentAttributes (card: { name?: unknown; version?: unknown } | undefined, out: Record<string, string | number>): void {
  if (typeof card?.name === 'string' && card.name !== '') out['gen_ai.agent.name'] = card.name.slice(0, 128)
  if (typeof card?.version === 'string' && card.version !== '') out['gen_ai.agent.version'] = card.version.slice(0, 128)
}

/** `server.address` and `server.port` of a URL (the default port of its scheme when it names none) */
export function endpointAttributes (url: URL, out: Record<string, string | number>): void {
  out['server.address'] = url.hostname.replace(/^\[|\]$/g, '')
  out['server.port'] = Number(url.port !== '' ? url.port : url.protocol === 'https:' ? 443 : 80)
}
