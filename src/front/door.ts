// The A2A front door's JSON-RPC core (docs/api.md#a2a-front-door): one request in, one answer
// out, no Fastify. It serves on the gateway's own core and nothing else: the Argus reads through
// the reader (coalesced), tasks through the reader's tasks/get and the REST projection's rules,
// every mutation through the control pipeline (lease, constraints envelope, single-shot on the
// ledger), and de-duplicates each `message/send` by (caller identity, message id) in the ledger,
// where each submission's task gets its owner: a task is shown and cancelled to that caller alone.
// Grants per campaign are the control plane's one check (docs/design.md#grants), asked before
// anything is written or sent; a task of a campaign the caller may not read does not exist for it.
import { createHash } from 'node:crypto'
import canonicalize from 'canonicalize'
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { isTask } from '../../schemas/a2a.js'
import { ARGUS_EXTENSION_URN, ARGUS_OPERATIONS, type ArgusOperation } from '../argus/envelope.js'
import type { ArgusReader } from '../argus/reader.js'
import type { ControlPlane } from '../control/plane.js'
import { callerIdentity, ownerIdentity } from '../control/identity.js'
import { checkBodyRules, MAX_BODY_DEPTH } from '../control/rules.js'
import type { Lease } from '../control/wire.js'
import { GatewayError, isGatewayError } from '../core/errors.js'
import { deeperThan } from '../core/value-depth.js'
import type { Discovery } from '../discovery/discovery.js'
import type { FrontSend, Ledger, MutationOperation } from '../ledger/types.js'
import { projectTaskJson } from '../tasks/projection.js'
import type { TaskProjection } from '../../schemas/task.js'
import { TaskIdSchema } from '../../schemas/task.js'
import { invalidField, protocolError, rpcErrorOf, rpcErrorOfBody, wireError, type RpcError } from './errors.js'
import { frame, logicalOf, shapeOf, versionOf, type FrontVersion, type Logical, type RpcId } from './framing.js'
import { campaignIdIn, requestIdIn } from './ids.js'
import { sendParamsIn, sendResultOut, taskOut, taskParamsIn } from './wire.js'

type Obj = Record<string, unknown>
const isRecord = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface FrontDoorDeps {
  argus: Pick<ArgusReader, 'read' | 'getTask'>
  control: Pick<ControlPlane, 'mutate' | 'readControl' | 'grants'>
  ledger: Pick<Ledger, 'getFrontSend' | 'putFrontSend' | 'settleFrontSend' | 'frontTaskOf'>
  discovery: Pick<Discovery, 'capability' | 'confirm'>
  readTimeoutMs: number
  logger: Logger
  now?: () => number
}

export interface FrontInput {
  /** the body as received */
  text: string
  /** the A2A-Version header */
  version: string | string[] | undefined
  caller: Caller
  /** charges a mutation to the caller's control budget, as REST's mutation routes are charged; throws `rate_limited` past it */
  chargeControl?: () => Promise<void>
}

export interface FrontAnswer {
  /** the JSON-RPC answer's text */
  body: string
  /** the logical method for metrics (a bounded set), and the outcome: ok, or the error's contract or protocol code */
  rpcMethod: string
  outcome: string
  /** the JSON-RPC error code of a refusal (traces) */
  rpcErrorCode?: number
  /** what the request's span reads (docs/design.md#tracing): the version spoken, the params as sent, the result */
  trace?: { version: FrontVersion; params?: Obj; result?: Obj }
}

class Refusal extends Error {
  constructor (readonly rpc: RpcError) { super(rpc.message) }
}
const refuse = (code: number, message: string, data?: Obj): Refusal => new Refusal(protocolError(code, message, data))
const invalid = invalidField

/** the sanitised task: the REST projection's rules in A2A's shape; file URIs inert (a data part, never a link) */
export function sanitisedTask (p: TaskProjection): Obj {
  const s = p.supervisor
  const metadata: Obj = { outcomeScope: 'attempt', artifactsTruncated: p.artifactsTruncated }
  if (s !== null) {
    metadata.argus_supervisor = {
      revision: s.revision, stage: s.stage, run_id: s.runId, attempt_id: s.attemptId, source_sha: s.sourceSha, evidence_revision: s.evidenceRevision, evidence_ref: s.evidenceRef, blocked: s.blocked
    }
  }
  return {
    kind: 'task',
    id: p.taskId,
    ...contextOf(p.contextId),
    status: { state: p.state },
    artifacts: p.artifacts.map((a, i) => ({
      artifactId: a.artifactId ?? `artifact-${i + 1}`,
      ...(a.name !== null ? { name: a.name } : {}),
      parts: a.parts.map((part) => part.kind === 'file' ? { kind: 'data', data: { file: part.file } } : part)
    })),
    metadata
  }
}

/** the remote's context id where it named one; none at all where it did not (A2A v1.0's Task leaves it optional) */
const contextOf = (c: unknown): { contextId?: string } => typeof c === 'string' && c !== '' ? { contextId: c } : {}

/** a send's content, as its canonical JSON's hash; bounded first, as every walk of a caller's value is */
function contentHash (v: unknown): string {
  if (deeperThan(v, MAX_BODY_DEPTH + 2)) throw invalid('params', `params nest deeper than ${MAX_BODY_DEPTH} levels.`)
  return createHash('sha256').update(canonicalize(v) ?? '').digest('hex')
}

const noCharge = async (): Promise<void> => {}

const leaseOut = (l: Lease | null): Obj | null => l === null ? null : { controller_id: l.controllerId, epoch: l.epoch, expires_at: l.expiresAt }

export function createFrontDoor (d: FrontDoorDeps): { handle: (input: FrontInput) => Promise<FrontAnswer> } {
  const now = d.now ?? Date.now

  /** a send already seen by this identity: its replay, or the refusal of other content */
  async function seen (identity: string, messageId: string, hash: string): Promise<FrontSend | undefined> {
    const prior = await d.ledger.getFrontSend(identity, messageId)
    if (prior !== undefined && prior.contentHash !== hash) {
      throw new GatewayError('idempotency_key_mismatch', { message: 'This message id was sent before with other content; nothing was sent.', requestId: messageId })
    }
    return prior
  }

  async function record (s: FrontSend): Promise<FrontSend> {
    const held = await d.ledger.putFrontSend(s)
    if (held.contentHash !== s.contentHash) throw new GatewayError('idempotency_key_mismatch', { message: 'This message id was sent before with other content; nothing was sent.', requestId: s.messageId })
    return held
  }

  async function argusRead (caller: Caller, message: Obj, envelope: unknown): Promise<Obj> {
    if (!isRecord(envelope) || typeof envelope.operation !== 'string' || (envelope.requestId !== undefined && typeof envelope.requestId !== 'string')) {
      throw new GatewayError('invalid_argus_envelope', { message: `The ${ARGUS_EXTENSION_URN} metadata must hold an operation (and a string requestId).` })
    }
    if (!(ARGUS_OPERATIONS as readonly string[]).includes(envelope.operation)) {
      throw new GatewayError('unsupported_argus_operation', { message: `The gateway serves ${ARGUS_OPERATIONS.join(', ')}.` })
    }
    const operation = envelope.operation as ArgusOperation
    const parts = Array.isArray(message.parts) ? message.parts : []
    for (const p of parts) {
      const params = isRecord(p) && p.kind === 'data' && isRecord(p.data) ? p.data.params : undefined
      if (params !== undefined && (!isRecord(params) || Object.keys(params).length > 0)) throw new GatewayError('invalid_argus_envelope', { message: 'The Argus reads take no parameters: params must be {}.' })
    }
    // a caller with no identity (a token without a subject) owns no send: its reads go fresh each time
    const identity = ownerIdentity(caller)
    const messageId = message.messageId as string
    const hash = contentHash({ kind: 'read', operation, parts })
    const prior = identity === undefined ? undefined : await seen(identity, messageId, hash)
    // a campaign list replayed shows what the caller's grants let it read now (docs/design.md#grants)
    if (prior?.answer !== undefined && prior.answer !== null) return operation === 'campaign.list' ? listAsNow(caller, prior.answer as Obj) : prior.answer as Obj
    if (prior === undefined && identity !== undefined) await record({ identity, messageId, caller: caller.name, contentHash: hash, kind: 'read', campaignId: null, taskId: null, answer: null, createdAt: now() })
    const r = await d.argus.read(operation)
    const answer = {
      kind: 'message',
      role: 'agent',
      messageId: r.requestId,
      parts: [{ kind: 'data', data: operation === 'campaign.list' ? d.control.grants.campaignList(caller, r.result) : r.result }],
      metadata: { [ARGUS_EXTENSION_URN]: { operation, requestId: r.requestId } }
    }
    if (identity !== undefined) await d.ledger.settleFrontSend(identity, messageId, { answer })
    return answer
  }

  /** a stored campaign-list answer, its payload seen through the caller's grants as they are now */
  function listAsNow (caller: Caller, answer: Obj): Obj {
    const part = Array.isArray(answer.parts) && isRecord(answer.parts[0]) ? answer.parts[0] : undefined
    return { ...answer, parts: [{ kind: 'data', data: d.control.grants.campaignList(caller, part?.data, false) }] }
  }

  /** the task's campaign must be one the caller may read, else the task does not exist for it (docs/design.md#grants) */
  async function readable (caller: Caller, campaignId: string): Promise<void> {
    try {
      await d.control.grants.require(caller, 'read', campaignId)
    } catch (err) {
      if (isGatewayError(err) && err.code === 'campaign_forbidden') throw new GatewayError('not_found', { message: 'Task not found.' })
      throw err
    }
  }

  /** a mutation's answer: its result, or its stored error as a JSON-RPC error */
  async function mutate (caller: Caller, operation: MutationOperation, campaignId: string, body: Obj, taskId?: string): Promise<Obj> {
    const a = await d.control.mutate({ operation, campaignId, caller, body, idempotencyKey: undefined, taskId })
    if (a.httpStatus >= 400) throw new Refusal(rpcErrorOfBody(a.body))
    return a.body as Obj
  }

  const needs = (caller: Caller, scope: 'control'): void => {
    if (!caller.scopes.includes(scope)) throw new GatewayError('forbidden', { message: `This method requires the ${scope} scope.` })
  }

  async function submit (caller: Caller, raw: Obj, params: Obj, message: Obj, sup: unknown): Promise<Obj> {
    needs(caller, 'control')
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
    // the grants before the send is written (docs/design.md#grants): a refused submission leaves no trace
    await d.control.grants.require(caller, 'control', campaignId)
    if (typeof sup.project === 'string') d.control.grants.requireProject(caller, sup.project)
    const identity = callerIdentity(caller)
    const hash = contentHash({ kind: 'submit', campaignId, body })
    if (await seen(identity, messageId, hash) === undefined) {
      await record({ identity, messageId, caller: caller.name, contentHash: hash, kind: 'submit', campaignId, taskId: null, answer: null, createdAt: now() })
    }
    // the pipeline de-duplicates the request id itself: a repeat replays its stored outcome, never a second send
    const answer = await mutate(caller, 'submit', campaignId, body)
    const taskId = typeof answer.taskId === 'string' ? answer.taskId : undefined
    if (taskId === undefined) throw new GatewayError('ambiguous_write', { requestId: messageId, message: 'The submission was resolved without a task id; see its request record.' })
    await d.ledger.settleFrontSend(identity, messageId, { taskId })
    // a replay of a record retention pruned knows the task, not its state then: A2A's `unknown`
    const pruned = answer.pruned === true
    const state = pruned ? 'unknown' : typeof answer.state === 'string' ? answer.state : 'submitted'
    return { kind: 'task', id: taskId, ...contextOf(answer.contextId), status: { state }, metadata: { argus_supervisor: { campaign_id: campaignId, request_id: messageId, ...(pruned ? { pruned: true } : {}) } } }
  }

  async function send (caller: Caller, raw: Obj, v: FrontVersion, charge: () => Promise<void>): Promise<Obj> {
    const params = sendParamsIn(raw, v)
    const message = params.message as Obj
    // a message id is a request id, for a read (the de-duplication key) as for a submission (the mutation's)
    requestIdIn(message.messageId, 'params', 'message', 'messageId')
    if (!Array.isArray(message.parts)) throw invalid('params.message.parts', 'params.message.parts must be an array.')
    const meta = message.metadata
    if (meta !== undefined && !isRecord(meta)) throw invalid('params.message.metadata', 'params.message.metadata must be an object.')
    const extensions = Array.isArray(message.extensions) ? message.extensions : []
    if (isRecord(meta) && (ARGUS_EXTENSION_URN in meta || extensions.includes(ARGUS_EXTENSION_URN))) return await argusRead(caller, message, meta[ARGUS_EXTENSION_URN])
    if (isRecord(meta) && 'argus_supervisor' in meta) {
      await charge()
      return await submit(caller, raw, params, message, meta.argus_supervisor)
    }
    throw refuse(RPC_CODES.unsupportedOperation, `The gateway serves message/send in two profiles only: an Argus read (the ${ARGUS_EXTENSION_URN} extension) and a submission (metadata.argus_supervisor).`)
  }

  /** the task of this caller's own send, or TaskNotFound: another caller's task does not exist for them */
  async function ownTask (caller: Caller, params: Obj): Promise<{ id: string; send: FrontSend }> {
    const id = typeof params.id === 'string' ? params.id : typeof params.name === 'string' ? params.name.replace(/^tasks\//, '') : undefined
    if (id === undefined) throw invalid('params.id', 'params.id must be the task id.')
    const owner = ownerIdentity(caller)
    const own = owner !== undefined && TaskIdSchema.safeParse(id).success ? await d.ledger.frontTaskOf(owner, id) : undefined
    if (own === undefined || own.campaignId === null) throw new GatewayError('not_found', { message: 'Task not found.' })
    return { id, send: own }
  }

  async function getTask (caller: Caller, raw: Obj): Promise<Obj> {
    const { id, send: own } = await ownTask(caller, taskParamsIn(raw))
    await readable(caller, own.campaignId!)
    const cap = d.discovery.capability('a2a.tasks.get')
    if (cap.state === 'unavailable') throw new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] })
    const task = await d.argus.getTask(id, Date.now() + d.readTimeoutMs)
    if (!isTask(task)) throw new GatewayError('upstream_invalid_response')
    if ((task.artifacts ?? []).length > 0) d.discovery.confirm('a2a.artifacts')
    return sanitisedTask(JSON.parse(projectTaskJson(task)) as TaskProjection)
  }

  async function cancel (caller: Caller, raw: Obj): Promise<Obj> {
    needs(caller, 'control')
    // what the cancel says is checked before its task is looked up: a refusal tells nothing of another caller's task
    checkBodyRules(raw, { holder: raw.metadata, key: 'argus_supervisor' })
    const params = taskParamsIn(raw)
    const meta = params.metadata
    const sup = isRecord(meta) ? meta.argus_supervisor : undefined
    if (!isRecord(sup) || sup.request_id === undefined) throw invalid('params.metadata.argus_supervisor.request_id', 'tasks/cancel needs metadata.argus_supervisor.request_id: the cancel\'s own request id.')
    const extra = Object.keys(sup).find((k) => k !== 'request_id' && k !== 'campaign_id')
    if (extra !== undefined) throw invalid('params.metadata.argus_supervisor', 'metadata.argus_supervisor holds request_id (and campaign_id) only.')
    const requestId = requestIdIn(sup.request_id, 'params', 'metadata', 'argus_supervisor', 'request_id')
    if (sup.campaign_id !== undefined) campaignIdIn(sup.campaign_id, 'params', 'metadata', 'argus_supervisor', 'campaign_id')
    const { id, send: own } = await ownTask(caller, params)
    // a task of a campaign it may no longer read does not exist for it; control is the pipeline's to check
    await readable(caller, own.campaignId!)
    if (sup.campaign_id !== undefined && sup.campaign_id !== own.campaignId) throw new GatewayError('conflicting_fields', { message: 'metadata.argus_supervisor.campaign_id is not this task\'s campaign.' })
    const answer = await mutate(caller, 'cancel', own.campaignId!, { requestId }, id)
    const pruned = answer.pruned === true
    const state = pruned ? 'unknown' : typeof answer.state === 'string' ? answer.state : 'canceled'
    return { kind: 'task', id, ...contextOf(answer.contextId), status: { state }, metadata: { argus_supervisor: { campaign_id: own.campaignId, request_id: requestId, ...(pruned ? { pruned: true } : {}) } } }
  }

  const OP: Partial<Record<Logical, MutationOperation>> = { claim_control: 'claim', renew_control: 'renew', release_control: 'release', intervene: 'intervene' }

  async function campaign (caller: Caller, logical: Logical, params: Obj): Promise<Obj> {
    checkBodyRules(params)
    const campaignId = campaignIdIn(params.campaign_id, 'params', 'campaign_id')
    if (logical === 'read_control') {
      if (Object.keys(params).length > 1) throw invalid('params', 'campaign/read_control takes campaign_id only.')
      return { lease: leaseOut(await d.control.readControl(campaignId, caller)) }
    }
    needs(caller, 'control')
    const operation = OP[logical]!
    const allowed = new Set(['campaign_id', 'request_id', ...(operation === 'claim' || operation === 'renew' ? ['ttl_seconds'] : []), ...(operation === 'intervene' ? ['intervention'] : [])])
    const extra = Object.keys(params).find((k) => !allowed.has(k))
    if (extra !== undefined) throw invalid('params', `${JSON.stringify(extra.slice(0, 64))} is not a parameter of this method.`)
    const requestId = requestIdIn(params.request_id, 'params', 'request_id')
    const body: Obj = { requestId }
    if (params.ttl_seconds !== undefined) body.ttlSeconds = params.ttl_seconds
    if (params.intervention !== undefined) body.intervention = params.intervention
    const a = await mutate(caller, operation, campaignId, body)
    if (isRecord(a.lease)) return { lease: leaseOut(a.lease as unknown as Lease) }
    if (a.released === true) return { released: true }
    if (a.accepted === true) return { accepted: true }
    // a replay of a resolved request answers its record: the request's final state
    return { request_id: requestId, state: a.state ?? null, ...(a.pruned === true ? { pruned: true } : {}) }
  }

  async function dispatch (caller: Caller, logical: Logical, params: Obj, v: FrontVersion, charge: () => Promise<void>): Promise<Obj> {
    // a mutation is charged to the control budget before anything else of it is read (docs/design.md#rate-limits)
    if (logical === 'cancel' || OP[logical] !== undefined) await charge()
    switch (logical) {
      case 'send': return sendResultOut(await send(caller, params, v, charge), v)
      case 'get': return taskOut(await getTask(caller, params), v)
      case 'cancel': return taskOut(await cancel(caller, params), v)
      case 'stream':
      case 'resubscribe':
        throw refuse(RPC_CODES.unsupportedOperation, 'Streaming is not served: the card says streaming false; use the blocking send and tasks/get.')
      case 'push':
        throw refuse(RPC_CODES.pushNotificationNotSupported, 'Push notifications are not supported.')
      case 'extendedCard':
        // A2A v1.0 §3.3.4: a card that does not declare capabilities.extendedAgentCard answers
        // UnsupportedOperation; v0.3 has only ExtendedAgentCardNotConfigured for it
        throw v === '1.0'
          ? refuse(RPC_CODES.unsupportedOperation, 'The gateway\'s card declares no extended agent card (capabilities.extendedAgentCard).')
          : refuse(RPC_CODES.extendedAgentCardNotConfigured, 'The gateway has no extended agent card.')
      case 'list':
        throw refuse(RPC_CODES.unsupportedOperation, 'Listing tasks is not served.')
      default:
        return await campaign(caller, logical, params)
    }
  }

  /** the answer's text, its error written in the caller's generation (errors.ts) */
  const answer = (id: RpcId | null, r: { result: Obj } | { error: RpcError }, shape: FrontVersion): string =>
    JSON.stringify({ jsonrpc: '2.0', id, ...('error' in r ? { error: wireError(r.error, shape) } : r) })

  return {
    handle: async (input) => {
      const shape = shapeOf(input.version)
      const framed = frame(input.text)
      if (!framed.ok) return { body: answer(framed.id, { error: framed.error }, shape), rpcMethod: 'invalid', outcome: String(framed.error.code), rpcErrorCode: framed.error.code }
      const { id, method, params } = framed.req
      const version = versionOf(input.version)
      if (typeof version !== 'string') return { body: answer(id, { error: version }, shape), rpcMethod: 'invalid', outcome: String(version.code), rpcErrorCode: version.code }
      const l = logicalOf(method, version)
      if ('code' in l) return { body: answer(id, { error: l }, shape), rpcMethod: 'unknown', outcome: String(l.code), rpcErrorCode: l.code, trace: { version } }
      try {
        // every walk of params below (spellings compared, content hashed, body rules) meets a bounded value
        if (deeperThan(params, MAX_BODY_DEPTH)) throw invalid('params', `params nest deeper than ${MAX_BODY_DEPTH} levels.`)
        const result = await dispatch(input.caller, l.logical, params, version, input.chargeControl ?? noCharge)
        return { body: answer(id, { result }, shape), rpcMethod: l.canonical, outcome: 'ok', trace: { version, params, result } }
      } catch (err) {
        const error = err instanceof Refusal ? err.rpc : rpcErrorOf(err)
        if (!(err instanceof Refusal) && !(err instanceof GatewayError)) d.logger.error({ err, rpcMethod: l.canonical }, 'front door request failed')
        const code = error.data?.code
        return { body: answer(id, { error }, shape), rpcMethod: l.canonical, outcome: typeof code === 'string' ? code : String(error.code), rpcErrorCode: error.code, trace: { version, params } }
      }
    }
  }
}
