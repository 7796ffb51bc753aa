// What the smoke sends and how it reads the answers: JSON-RPC framing to `<prefix>/a2a/`, the
// seed's Argus envelope and its three deliberate variants (legacy request_id, malformed,
// an operation that can never exist), and the reading of an Argus answer wherever a remote
// puts it — a message, a completed task, a failed task, a JSON-RPC error — polling FastA2A's
// "answer now, poll later" task with tasks/get (historyLength 0). This is the qualification's
// own reading of the seed, apart from the gateway's src/argus/ (docs/design.md#qualification).
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Probe, ProbeAuth } from './probe.js'
import type { A2aWire, A2aMethod } from '../upstream/a2a-wire.js'
import { ProbeFailure } from './types.js'

export const ARGUS_URN = 'urn:openoperator:argus-supervisor:v1'
export const ARGUS_CODES = ['invalid_argus_envelope', 'argus_supervisor_disabled', 'unsupported_argus_operation', 'argus_supervisor_unavailable'] as const
export type ArgusCode = typeof ARGUS_CODES[number]
/** an operation name that can never exist: never a planned one such as campaign.claim, which would really claim once it ships */
export const NONEXISTENT_OPERATION = 'qualify.nonexistent'

const TERMINAL_FAILED = new Set(['failed', 'rejected', 'canceled'])
const STOPPING = new Set(['input-required', 'auth-required', 'unknown'])
const KNOWN_STATES = new Set(['submitted', 'working', 'completed', ...TERMINAL_FAILED, ...STOPPING])
const MAX_POLLS = 50

export type Json = Record<string, unknown>
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** a fresh id per call, recognisable in the remote's logs */
export const freshId = (label: string): string => `qualify-${label}-${randomUUID()}`

export type EnvelopeVariant = 'canonical' | 'legacy' | 'malformed'

/** The seed's exact Argus read; `legacy` sends request_id, `malformed` an envelope without its operation. */
export function argusParams (operation: string, id: string, variant: EnvelopeVariant = 'canonical'): Json {
  let envelope: Json = { operation, requestId: id }
  if (variant === 'legacy') envelope = { operation, request_id: id }
  if (variant === 'malformed') envelope = { requestId: id }
  return {
    configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
    message: {
      role: 'user',
      kind: 'message',
      messageId: id,
      extensions: [ARGUS_URN],
      metadata: { [ARGUS_URN]: envelope },
      parts: [{ kind: 'data', data: { params: {} } }]
    }
  }
}

export interface RpcContext {
  probe: Probe
  /** `<prefix>/a2a/` */
  endpoint: string
  maxBytes: number
  maxTaskBytes: number
  /** the protocol generation the card chose (protocol_version sets it; v0.3 until then) */
  wire: A2aWire
}

const A2A_METHODS = new Set<string>(['message/send', 'tasks/get', 'tasks/cancel'])

export type RpcAnswer =
  | { kind: 'http'; status: number }
  | { kind: 'invalid'; reason: string }
  | { kind: 'error'; code: unknown; message: unknown; data: unknown }
  | { kind: 'result'; result: unknown }

export async function rpc (ctx: RpcContext, method: string, params: Json, opts: { id?: string; auth?: ProbeAuth; signal: AbortSignal; argus?: boolean }): Promise<RpcAnswer> {
  const id = opts.id ?? freshId(method.replace(/\W/g, '-'))
  // the checks speak v0.3's names and shapes; a v1.0 remote gets them translated (docs/design.md#protocol-versions)
  const a2a = A2A_METHODS.has(method) ? method as A2aMethod : undefined
  const { wire } = ctx
  const answer = await ctx.probe.send({
    method: 'POST',
    path: ctx.endpoint,
    auth: opts.auth ?? 'configured',
    body: JSON.stringify({ jsonrpc: '2.0', id, method: a2a !== undefined ? wire.method(a2a) : method, params: a2a === 'message/send' ? wire.sendParams(params) : params }),
    headers: wire.headers(opts.argus === true ? { 'x-a2a-extensions': ARGUS_URN } : {}),
    maxBytes: method === 'tasks/get' ? ctx.maxTaskBytes : ctx.maxBytes,
    signal: opts.signal
  })
  if (answer.status !== 200) return { kind: 'http', status: answer.status }
  const body = parseJson(answer.text)
  if (!isObject(body) || body.jsonrpc !== '2.0') return { kind: 'invalid', reason: 'the answer is not a JSON-RPC 2.0 response' }
  if (body.id !== id) return { kind: 'invalid', reason: 'the JSON-RPC response carries another id' }
  if (isObject(body.error)) return { kind: 'error', code: body.error.code, message: body.error.message, data: body.error.data }
  if ('result' in body) return { kind: 'result', result: a2a === 'message/send' ? wire.sendResult(body.result) : a2a !== undefined ? wire.task(body.result) : body.result }
  return { kind: 'invalid', reason: 'the JSON-RPC response has neither result nor error' }
}

export type ArgusOutcome =
  | { kind: 'payload'; payload: Json; container: Json; polls: number }
  | { kind: 'code'; code: ArgusCode }
  | { kind: 'failure'; reason: string }

/** One Argus call, read to its end: polled while the task is submitted or working, within the signal. */
export async function argusCall (ctx: RpcContext, operation: string, signal: AbortSignal, opts: { variant?: EnvelopeVariant; auth?: ProbeAuth } = {}): Promise<ArgusOutcome & { id: string }> {
  const id = freshId('argus')
  const answer = await rpc(ctx, 'message/send', argusParams(operation, id, opts.variant), { id, auth: opts.auth, signal, argus: true })
  return { id, ...(await readArgus(ctx, answer, signal)) }
}

async function readArgus (ctx: RpcContext, answer: RpcAnswer, signal: AbortSignal): Promise<ArgusOutcome> {
  if (answer.kind === 'http') return { kind: 'failure', reason: httpReason(answer.status) }
  if (answer.kind === 'invalid') return { kind: 'failure', reason: answer.reason }
  if (answer.kind === 'error') {
    const code = codeOfError(answer)
    return code !== undefined ? { kind: 'code', code } : { kind: 'failure', reason: `JSON-RPC error ${rpcCodeText(answer.code)}` }
  }
  const result = answer.result
  if (!isObject(result)) return { kind: 'failure', reason: 'the result is not an object' }
  if (result.kind === 'message') return fromParts(result.parts, result, 0)
  if (result.kind !== 'task' || typeof result.id !== 'string') return { kind: 'failure', reason: 'the result is neither a message nor a task with an id' }
  let task: Json = result
  let delay = 100
  for (let polls = 0; ; polls++) {
    const state = stateOf(task)
    if (state === 'completed') return fromTask(task, polls)
    if (state !== undefined && TERMINAL_FAILED.has(state)) {
      const found = fromTask(task, polls)
      return found.kind === 'code' ? found : { kind: 'failure', reason: `the task ended in state ${state} without a recognised Argus code` }
    }
    if (state !== 'submitted' && state !== 'working') return { kind: 'failure', reason: `the task stopped in ${state === undefined ? 'an unrecognised state' : `state ${state}`}` }
    if (polls >= MAX_POLLS) return { kind: 'failure', reason: `the task was still ${state} after ${MAX_POLLS} polls` }
    try {
      await sleep(delay, undefined, { signal })
    } catch {
      throw new ProbeFailure(`no answer within the time bound: the task was still ${state} after ${polls} polls`)
    }
    delay = Math.min(delay * 2, 1000)
    const next = await rpc(ctx, 'tasks/get', { id: result.id, historyLength: 0 }, { signal })
    if (next.kind === 'http') return { kind: 'failure', reason: `polling with tasks/get: ${httpReason(next.status)}` }
    if (next.kind === 'invalid') return { kind: 'failure', reason: `polling with tasks/get: ${next.reason}` }
    if (next.kind === 'error') return { kind: 'failure', reason: `polling with tasks/get: JSON-RPC error ${rpcCodeText(next.code)}` }
    if (!isObject(next.result) || next.result.id !== result.id) return { kind: 'failure', reason: 'polling with tasks/get: the answer is not the task polled' }
    task = next.result
  }
}

function fromTask (task: Json, polls: number): ArgusOutcome {
  const parts: unknown[] = []
  if (Array.isArray(task.artifacts)) for (const a of task.artifacts) if (isObject(a) && Array.isArray(a.parts)) parts.push(...(a.parts as unknown[]))
  const status = isObject(task.status) ? task.status : {}
  if (isObject(status.message) && Array.isArray(status.message.parts)) parts.push(...(status.message.parts as unknown[]))
  return fromParts(parts, task, polls)
}

function fromParts (parts: unknown, container: Json, polls: number): ArgusOutcome {
  const data = Array.isArray(parts) ? parts.find((p): p is Json => isObject(p) && p.kind === 'data' && isObject(p.data)) : undefined
  if (data === undefined) return { kind: 'failure', reason: 'the answer carries no data part' }
  const payload = data.data as Json
  if ('error' in payload) {
    const e = payload.error
    const code = typeof e === 'string' ? e : isObject(e) ? e.code : undefined
    const known = ARGUS_CODES.find((c) => c === code)
    return known !== undefined ? { kind: 'code', code: known } : { kind: 'failure', reason: 'the payload carries an error that is not one of the four Argus codes' }
  }
  return { kind: 'payload', payload, container, polls }
}

function codeOfError (e: { message: unknown; data: unknown }): ArgusCode | undefined {
  const dataCode = isObject(e.data) ? e.data.code : undefined
  for (const code of ARGUS_CODES) {
    if (dataCode === code) return code
    if (typeof e.message === 'string' && new RegExp(`\\b${code}\\b`).test(e.message)) return code
  }
  return undefined
}

function stateOf (task: Json): string | undefined {
  const state = isObject(task.status) ? task.status.state : undefined
  return typeof state === 'string' && KNOWN_STATES.has(state) ? state : undefined
}

/** the remote's numeric code only: its message is remote text */
export const rpcCodeText = (code: unknown): string => (typeof code === 'number' && Number.isInteger(code) ? String(code) : '(non-numeric code)')

export function httpReason (status: number): string {
  if (status === 401 || status === 403) return `the credential was refused (HTTP ${status})`
  if (status >= 300 && status < 400) return `answered a redirect (HTTP ${status}), not followed`
  return `answered HTTP ${status}`
}
