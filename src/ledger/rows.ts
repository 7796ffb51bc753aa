// Rows of either ledger ↔ the interface's records (docs/design.md#ledger): both stores keep the
// same columns. JSON columns hold what the gateway itself wrote, so they are parsed without
// validation.
import type { BoundTask, ControllerBinding, FrontSend, LeaseView, MutationOperation, MutationRecord, RecordState, Resolution, StoredAnswer } from './types.js'

export const RECORD_COLUMNS = `request_id, campaign_id, caller, identity, operation, params_hash, params, controller_epoch,
  owner, deadline, created_at, state, updated_at, answer, outcome_code, task_id, reconcile_failures, resolution, pruned_at`

export interface RecordRow {
  request_id: string
  campaign_id: string
  caller: string
  /** null: an owner no caller matches (docs/design.md#request-records) */
  identity: string | null
  operation: string
  params_hash: string
  params: string
  controller_epoch: number | null
  owner: string
  deadline: number
  created_at: number
  state: string
  updated_at: number
  answer: string | null
  outcome_code: string | null
  task_id: string | null
  reconcile_failures: number
  resolution: string | null
  pruned_at: number | null
}

export interface LeaseRow {
  campaign_id: string
  /** SQLite: 0/1; PostgreSQL: a boolean */
  known: number | boolean
  controller_id: string | null
  epoch: number | null
  expires_at: number | null
  max_epoch_seen: number
  updated_at: number
}

export interface BoundTaskRow { campaign_id: string; task_id: string; request_id: string; bound_at: number }

/** JSON text of a value; `undefined` is stored as null (JSON has no undefined) */
export const toJson = (v: unknown): string => JSON.stringify(v) ?? 'null'

export function toRecord (r: RecordRow): MutationRecord {
  return {
    requestId: r.request_id,
    campaignId: r.campaign_id,
    caller: r.caller,
    identity: r.identity,
    operation: r.operation as MutationOperation,
    paramsHash: r.params_hash,
    params: JSON.parse(r.params) as unknown,
    controllerEpoch: r.controller_epoch,
    owner: r.owner,
    deadline: r.deadline,
    createdAt: r.created_at,
    state: r.state as RecordState,
    updatedAt: r.updated_at,
    answer: r.answer === null ? null : JSON.parse(r.answer) as StoredAnswer,
    outcomeCode: r.outcome_code,
    taskId: r.task_id,
    reconcileFailures: r.reconcile_failures,
    resolution: r.resolution === null ? null : JSON.parse(r.resolution) as Resolution,
    prunedAt: r.pruned_at
  }
}

export function toLease (r: LeaseRow): LeaseView {
  const held = r.controller_id !== null && r.epoch !== null && r.expires_at !== null
  return {
    campaignId: r.campaign_id,
    known: r.known === 1 || r.known === true,
    lease: held ? { controllerId: r.controller_id as string, epoch: r.epoch as number, expiresAt: r.expires_at as number } : null,
    maxEpochSeen: r.max_epoch_seen,
    updatedAt: r.updated_at
  }
}

export interface BindingRow { controller_id: string; identity: string; caller: string; bound_at: number }

export function toBinding (r: BindingRow): ControllerBinding {
  return { controllerId: r.controller_id, identity: r.identity, caller: r.caller, boundAt: r.bound_at }
}

export { controllerKey } from '../../schemas/callers.js'

export function toBoundTask (r: BoundTaskRow): BoundTask {
  return { campaignId: r.campaign_id, taskId: r.task_id, requestId: r.request_id, boundAt: r.bound_at }
}

export const FRONT_SEND_COLUMNS = 'identity, message_id, caller, content_hash, kind, campaign_id, task_id, answer, created_at'

export interface FrontSendRow {
  identity: string
  message_id: string
  caller: string
  content_hash: string
  kind: string
  campaign_id: string | null
  task_id: string | null
  answer: string | null
  created_at: number
}

export function toFrontSend (r: FrontSendRow): FrontSend {
  return {
    identity: r.identity,
    messageId: r.message_id,
    caller: r.caller,
    contentHash: r.content_hash,
    kind: r.kind as FrontSend['kind'],
    campaignId: r.campaign_id,
    taskId: r.task_id,
    answer: r.answer === null ? null : JSON.parse(r.answer) as unknown,
    createdAt: r.created_at
  }
}
