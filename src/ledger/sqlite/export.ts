// The SQLite ledger's audit trail and copies (docs/design.md#operating-the-ledger): every record in
// creation order, a page at a time, and the whole file copied online.
import { bindState } from '../bind-state.js'
import { exportStart } from '../keyset.js'
import { toRecord } from '../rows.js'
import type { ExportStore, MutationRecord, RecordPosition } from '../types.js'
import type { SqliteState } from './state.js'

async function exportRecords (st: SqliteState, o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  const p = { ...exportStart(o), limit: o.limit }
  const rows = o.campaignId === undefined ? st.s.exportRecords.all(p) : st.s.exportCampaignRecords.all({ ...p, campaignId: o.campaignId })
  return rows.map(toRecord)
}

// SQLite's online backup API: page by page, consistent, while this process keeps writing
async function backupTo (st: SqliteState, file: string): Promise<void> {
  await st.db.backup(file)
}

export const exportStore = (st: SqliteState): Required<ExportStore> => bindState(st, { exportRecords, backupTo })
