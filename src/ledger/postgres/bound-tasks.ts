// The PostgreSQL ledger's bound tasks (docs/design.md#ledger): the task each campaign is bound to.
import { bindState } from '../bind-state.js'
import { toBoundTask, type BoundTaskRow } from '../rows.js'
import type { BoundTask, BoundTaskStore } from '../types.js'
import { one, q, type PgState } from './session.js'

async function getBoundTask (st: PgState, campaignId: string): Promise<BoundTask | undefined> {
  const row = await one<BoundTaskRow>(st, 'SELECT campaign_id, task_id, request_id, bound_at FROM bound_tasks WHERE campaign_id = $1', [campaignId])
  return row === undefined ? undefined : toBoundTask(row)
}

async function setBoundTask (st: PgState, b: BoundTask): Promise<void> {
  await q(st, `INSERT INTO bound_tasks (campaign_id, task_id, request_id, bound_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (campaign_id) DO UPDATE SET task_id = excluded.task_id, request_id = excluded.request_id, bound_at = excluded.bound_at`,
  [b.campaignId, b.taskId, b.requestId, b.boundAt])
}

async function clearBoundTask (st: PgState, campaignId: string): Promise<void> {
  await q(st, 'DELETE FROM bound_tasks WHERE campaign_id = $1', [campaignId])
}

export const boundTaskStore = (st: PgState): BoundTaskStore => bindState(st, { getBoundTask, setBoundTask, clearBoundTask })
