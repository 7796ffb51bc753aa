// The front door's `message/send` (docs/api.md#a2a-front-door), in its two profiles: an Argus read
// (the extension's envelope) through the reader, coalesced, and a submission through the control
// pipeline. Each send is de-duplicated by (caller identity, message id) in the ledger — written
// before anything is read or sent, settled with what it came to — where each submission's task
// gets its owner. Grants per campaign are asked before anything is written or sent
// (docs/design.md#grants).
import { createHash } from 'node:crypto'
import canonicalize from 'canonicalize'
import type { Caller } from '../../schemas/callers.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { ARGUS_EXTENSION_URN, ARGUS_OPERATIONS, type ArgusOperation } from '../argus/envelope.js'
import { callerIdentity, ownerIdentity } from '../control/identity.js'
import { checkBodyRules, MAX_BODY_DEPTH } from '../control/rules.js'
import { GatewayError } from '../core/errors.js'
import { deeperThan } from '../core/value-depth.js'
import type { FrontSend } from '../ledger/types.js'
import { contextOf, isRecord, mutate, needs, refuse, type DoorState, type Obj } from './door-state.js'
import { invalidField as invalid } from './errors.js'
import type { FrontVersion } from './framing.js'
import { campaignIdIn, requestIdIn } from './ids.js'
import { sendParamsIn } from './wire.js'

/** a send's content, as its canonical JSON's hash; bounded first, as every walk of a caller's value is */
function contentHash (v: unknown): string {
  if (deeperThan(v, MAX_BODY_DEPTH + 2)) throw invalid('params', `params nest deeper than ${MAX_BODY_DEPTH} levels.`)
  return createHash('sha256').update(canonicalize(v) ?? '').digest('hex')
}

/** a send already seen by this identity: its replay, or the refusal of other content */
async function seen (s: DoorState, identity: string, messageId: string, hash: string): Promise<FrontSend | undefined> {
  const prior = await s.ledger.getFrontSend(identity, messageId)
  if (prior !== undefined && prior.contentHash !== hash) {
    throw new GatewayError('idempotency_key_mismatch', { message: 'This message id was sent before with other content; nothing was sent.', requestId: messageId })
  }
  return prior
}

async function record (s: DoorState, send: FrontSend): Promise<FrontSend> {
  const held = await s.ledger.putFrontSend(send)
  if (held.contentHash !== send.contentHash) throw new GatewayError('idempotency_key_mismatch', { message: 'This message id was sent before with other content; nothing was sent.', requestId: send.messageId })
  return held
}

/** the Argus read an envelope asks for, and the message's parts, which hold no parameters */
function argusOperationIn (message: Obj, envelope: unknown): { operation: ArgusOperation; parts: unknown[] } {
  if (!isRecord(envelope) || typeof envelope.operation !== 'string' || (envelope.requestId !== undefined && typeof envelope.requestId !== 'string')) {
    throw new GatewayError('invalid_argus_envelope', { message: `The ${ARGUS_EXTENSION_URN} metadata must hold an operation (and a string requestId).` })
  }
  if (!(ARGUS_OPERATIONS as readonly string[]).includes(envelope.operation)) {
    throw new GatewayError('unsupported_argus_operation', { message: `The gateway serves ${ARGUS_OPERATIONS.join(', ')}.` })
  }
  const parts = Array.isArray(message.parts) ? message.parts : []
  for (const p of parts) {
    const params = isRecord(p) && p.kind === 'data' && isRecord(p.data) ? p.data.params : undefined
    if (params !== undefined && (!isRecord(params) || Object.keys(params).length > 0)) throw new GatewayError('invalid_argus_envelope', { message: 'The Argus reads take no parameters: params must be {}.' })
  }
  return { operation: envelope.operation as ArgusOperation, parts }
}

async function argusRead (s: DoorState, caller: Caller, message: Obj, envelope: unknown): Promise<Obj> {
  const { operation, parts } = argusOperationIn(message, envelope)
  // a caller with no identity (a token without a subject) owns no send: its reads go fresh each time
  const identity = ownerIdentity(caller)
  const messageId = message.messageId as string
  const hash = contentHash({ kind: 'read', operation, parts })
  const prior = identity === undefined ? undefined : await seen(s, identity, messageId, hash)
  // a campaign list replayed shows what the caller's grants let it read now (docs/design.md#grants)
  if (prior?.answer !== undefined && prior.answer !== null) return operation === 'campaign.list' ? listAsNow(s, caller, prior.answer as Obj) : prior.answer as Obj
  if (prior === undefined && identity !== undefined) await record(s, { identity, messageId, caller: caller.name, contentHash: hash, kind: 'read', campaignId: null, taskId: null, answer: null, createdAt: s.now() })
  const r = await s.argus.read(operation)
  const answer = {
    kind: 'message',
    role: 'agent',
    messageId: r.requestId,
    parts: [{ kind: 'data', data: operation === 'campaign.list' ? s.control.grants.campaignList(caller, r.result) : r.result }],
    metadata: { [ARGUS_EXTENSION_URN]: { operation, requestId: r.requestId } }
  }
  if (identity !== undefined) await s.ledger.settleFrontSend(identity, messageId, { answer })
  return answer
}

/** a stored campaign-list answer, its payload seen through the caller's grants as they are now */
function listAsNow (s: DoorState, caller: Caller, answer: Obj): Obj {
  const part = Array.isArray(answer.parts) && isRecord(answer.parts[0]) ? answer.parts[0] : undefined
  return { ...answer, parts: [{ kind: 'data', data: s.control.grants.campaignList(caller, part?.data, false) }] }
}

/** a submission as sent, checked: its campaign, its message id (the request id) and the mutation's body */
function submissionIn (raw: Obj, params: Obj, message: Obj, sup: unknown): { campaignId: string; messageId: string; body: Obj; project: unknown } {
  if (!isRecord(sup)) throw invalid('params.message.metadata.argus_supervisor', 'metadata.argus_supervisor must be an object.')
  // constraints or a reserved key anywhere in what was sent — params, the message, its
  // metadata, the configuration — is refused, never dropped; argus_supervisor in the message's
  // metadata is the one the submission is read from (docs/design.md#front-door)
  checkBodyRules(raw, { holder: isRecord(raw.message) ? raw.message.metadata : undefined, key: 'argus_supervisor' })
  const allowed = new Set(['campaign_id', 'request_id', 'project'])
  const extra = Object.keys(sup).find((k) => !allowed.has(k))
  if (extra !== undefined) throw invalid('params.message.metadata.argus_supervisor', `metadata.argus_supervisor holds campaign_id, request_id and project only; ${JSON.stringify(extra.slice(0, 64))} is not one.`)
  const otherMeta = Object.keys(message.metadata as Obj).find((k) => k !== 'argus_supervisor')
  if (otherMeta !== undefined) throw new GatewayError('reserved_field', { message: 'A submission\'s message metadata holds argus_supervisor only.' })
  const campaignId = campaignIdIn(sup.campaign_id, 'params', 'message', 'metadata', 'argus_supervisor', 'campaign_id')
  const messageId = message.messageId as string
  if (sup.request_id !== undefined && sup.request_id !== messageId) throw new GatewayError('conflicting_fields', { message: 'metadata.argus_supervisor.request_id must equal the message id.' })
  const config = params.configuration
  if (!isRecord(config) || config.blocking !== false) throw invalid('params.configuration.blocking', 'A submission is non-blocking: configuration.blocking false (A2A 1.0: returnImmediately true).')
  if (message.taskId !== undefined || message.referenceTaskIds !== undefined) throw invalid(message.taskId !== undefined ? 'params.message.taskId' : 'params.message.referenceTaskIds', 'A submission starts a new task: taskId and referenceTaskIds are not served.')
  // the remote names the new task's context; a caller's would be replaced, which A2A v1.0 §3.4.1 forbids: refused instead
  if (message.contextId !== undefined && message.contextId !== '') throw invalid('params.message.contextId', 'A submission starts a new context, which the remote names: contextId is not served.')
  const body: Obj = { requestId: messageId, parts: message.parts, ...(sup.project !== undefined ? { project: sup.project } : {}) }
  return { campaignId, messageId, body, project: sup.project }
}

async function submit (s: DoorState, caller: Caller, raw: Obj, params: Obj, message: Obj, sup: unknown): Promise<Obj> {
  needs(caller, 'control')
  const { campaignId, messageId, body, project } = submissionIn(raw, params, message, sup)
  // the grants before the send is written (docs/design.md#grants): a refused submission leaves no trace
  await s.control.grants.require(caller, 'control', campaignId)
  if (typeof project === 'string') s.control.grants.requireProject(caller, project)
  const identity = callerIdentity(caller)
  const hash = contentHash({ kind: 'submit', campaignId, body })
  if (await seen(s, identity, messageId, hash) === undefined) {
    await record(s, { identity, messageId, caller: caller.name, contentHash: hash, kind: 'submit', campaignId, taskId: null, answer: null, createdAt: s.now() })
  }
  // the pipeline de-duplicates the request id itself: a repeat replays its stored outcome, never a second send
  const answer = await mutate(s, caller, 'submit', campaignId, body)
  const taskId = typeof answer.taskId === 'string' ? answer.taskId : undefined
  if (taskId === undefined) throw new GatewayError('ambiguous_write', { requestId: messageId, message: 'The submission was resolved without a task id; see its request record.' })
  await s.ledger.settleFrontSend(identity, messageId, { taskId })
  // a replay of a record retention pruned knows the task, not its state then: A2A's `unknown`
  const pruned = answer.pruned === true
  const state = pruned ? 'unknown' : typeof answer.state === 'string' ? answer.state : 'submitted'
  return { kind: 'task', id: taskId, ...contextOf(answer.contextId), status: { state }, metadata: { argus_supervisor: { campaign_id: campaignId, request_id: messageId, ...(pruned ? { pruned: true } : {}) } } }
}

/** message/send: an Argus read or a submission (charged to the control budget), nothing else */
export async function send (s: DoorState, caller: Caller, raw: Obj, v: FrontVersion, charge: () => Promise<void>): Promise<Obj> {
  const params = sendParamsIn(raw, v)
  const message = params.message as Obj
  // a message id is a request id, for a read (the de-duplication key) as for a submission (the mutation's)
  requestIdIn(message.messageId, 'params', 'message', 'messageId')
  if (!Array.isArray(message.parts)) throw invalid('params.message.parts', 'params.message.parts must be an array.')
  const meta = message.metadata
  if (meta !== undefined && !isRecord(meta)) throw invalid('params.message.metadata', 'params.message.metadata must be an object.')
  const extensions = Array.isArray(message.extensions) ? message.extensions : []
  if (isRecord(meta) && (ARGUS_EXTENSION_URN in meta || extensions.includes(ARGUS_EXTENSION_URN))) return await argusRead(s, caller, message, meta[ARGUS_EXTENSION_URN])
  if (isRecord(meta) && 'argus_supervisor' in meta) {
    await charge()
    return await submit(s, caller, raw, params, message, meta.argus_supervisor)
  }
  throw refuse(RPC_CODES.unsupportedOperation, `The gateway serves message/send in two profiles only: an Argus read (the ${ARGUS_EXTENSION_URN} extension) and a submission (metadata.argus_supervisor).`)
}
