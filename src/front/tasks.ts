// The front door's tasks (docs/api.md#a2a-front-door): tasks/get through the reader's tasks/get and
// the REST projection's rules, tasks/cancel through the control pipeline. A task is shown and
// cancelled to the caller whose submission made it alone, and a task of a campaign the caller may
// not read does not exist for it (docs/design.md#grants).
import type { Caller } from '../../schemas/callers.js'
import { isTask } from '../../schemas/a2a.js'
import type { TaskProjection } from '../../schemas/task.js'
import { TaskIdSchema } from '../../schemas/task.js'
import { projectTaskJson } from '../argus/projection.js'
import { ownerIdentity } from '../control/identity.js'
import { checkBodyRules } from '../control/rules.js'
import { GatewayError, isGatewayError } from '../core/errors.js'
import type { FrontSend } from '../ledger/types.js'
import { contextOf, isRecord, mutate, needs, type DoorState, type Obj } from './door-state.js'
import { invalidField as invalid } from './errors.js'
import { campaignIdIn, requestIdIn } from './ids.js'
import { taskParamsIn } from './wire.js'

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

/** the task's campaign must be one the caller may read, else the task does not exist for it (docs/design.md#grants) */
async function readable (s: DoorState, caller: Caller, campaignId: string): Promise<void> {
  try {
    await s.control.grants.require(caller, 'read', campaignId)
  } catch (err) {
    if (isGatewayError(err) && err.code === 'campaign_forbidden') throw new GatewayError('not_found', { message: 'Task not found.' })
    throw err
  }
}

/** the task of this caller's own send, or TaskNotFound: another caller's task does not exist for them */
async function ownTask (s: DoorState, caller: Caller, params: Obj): Promise<{ id: string; send: FrontSend }> {
  const id = typeof params.id === 'string' ? params.id : typeof params.name === 'string' ? params.name.replace(/^tasks\//, '') : undefined
  if (id === undefined) throw invalid('params.id', 'params.id must be the task id.')
  const owner = ownerIdentity(caller)
  const own = owner !== undefined && TaskIdSchema.safeParse(id).success ? await s.ledger.frontTaskOf(owner, id) : undefined
  if (own === undefined || own.campaignId === null) throw new GatewayError('not_found', { message: 'Task not found.' })
  return { id, send: own }
}

export async function getTask (s: DoorState, caller: Caller, raw: Obj): Promise<Obj> {
  const { id, send: own } = await ownTask(s, caller, taskParamsIn(raw))
  await readable(s, caller, own.campaignId!)
  const cap = s.discovery.capability('a2a.tasks.get')
  if (cap.state === 'unavailable') throw new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] })
  const task = await s.argus.getTask(id, Date.now() + s.readTimeoutMs)
  if (!isTask(task)) throw new GatewayError('upstream_invalid_response')
  if ((task.artifacts ?? []).length > 0) s.discovery.confirm('a2a.artifacts')
  return sanitisedTask(JSON.parse(projectTaskJson(task)) as TaskProjection)
}

/** a cancel's own metadata: its request id, and the campaign it names if any */
function cancelMetaIn (params: Obj): { requestId: string; campaignId: unknown } {
  const meta = params.metadata
  const sup = isRecord(meta) ? meta.argus_supervisor : undefined
  if (!isRecord(sup) || sup.request_id === undefined) throw invalid('params.metadata.argus_supervisor.request_id', 'tasks/cancel needs metadata.argus_supervisor.request_id: the cancel\'s own request id.')
  const extra = Object.keys(sup).find((k) => k !== 'request_id' && k !== 'campaign_id')
  if (extra !== undefined) throw invalid('params.metadata.argus_supervisor', 'metadata.argus_supervisor holds request_id (and campaign_id) only.')
  const requestId = requestIdIn(sup.request_id, 'params', 'metadata', 'argus_supervisor', 'request_id')
  if (sup.campaign_id !== undefined) campaignIdIn(sup.campaign_id, 'params', 'metadata', 'argus_supervisor', 'campaign_id')
  return { requestId, campaignId: sup.campaign_id }
}

export async function cancel (s: DoorState, caller: Caller, raw: Obj): Promise<Obj> {
  needs(caller, 'control')
  // what the cancel says is checked before its task is looked up: a refusal tells nothing of another caller's task
  checkBodyRules(raw, { holder: raw.metadata, key: 'argus_supervisor' })
  const params = taskParamsIn(raw)
  const named = cancelMetaIn(params)
  const { id, send: own } = await ownTask(s, caller, params)
  // a task of a campaign it may no longer read does not exist for it; control is the pipeline's to check
  await readable(s, caller, own.campaignId!)
  if (named.campaignId !== undefined && named.campaignId !== own.campaignId) throw new GatewayError('conflicting_fields', { message: 'metadata.argus_supervisor.campaign_id is not this task\'s campaign.' })
  const answer = await mutate(s, caller, 'cancel', own.campaignId!, { requestId: named.requestId }, id)
  const pruned = answer.pruned === true
  const state = pruned ? 'unknown' : typeof answer.state === 'string' ? answer.state : 'canceled'
  return { kind: 'task', id, ...contextOf(answer.contextId), status: { state }, metadata: { argus_supervisor: { campaign_id: own.campaignId, request_id: named.requestId, ...(pruned ? { pruned: true } : {}) } } }
}
