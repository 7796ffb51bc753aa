// The SQLite ledger's bound tasks (docs/design.md#ledger): the task each campaign is bound to.
import { bindState } from '../bind-state.js'
import { toBoundTask } from '../rows.js'
import type { BoundTask, BoundTaskStore } from '../types.js'
import type { SqliteState } from './state.js'

async function getBoundTask (st: SqliteState, campaignId: string): Promise<BoundTask | undefined> {
  const row = st.s.getBoundTask.get(campaignId)
  return row === undefined ? undefined : toBoundTask(row)
}

async function setBoundTask (st: SqliteState, b: BoundTask): Promise<void> {
  const row = { ...b }
  await st.write(() => st.s.setBoundTask.run(row))
}

async function clearBoundTask (st: SqliteState, campaignId: string): Promise<void> {
  await st.write(() => st.s.clearBoundTask.run(campaignId))
}

export const boundTaskStore = (st: SqliteState): BoundTaskStore => bindState(st, { getBoundTask, setBoundTask, clearBoundTask })
