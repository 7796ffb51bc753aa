// The SQLite ledger's audit trail and copies (docs/design.md#operating-the-ledger): every record in
// creation order, a page at a time, and the whole file copied online.
import { bindState } from '../bind-state.js'
import { toRecord } from '../rows.js'
import type { ExportStore, MutationRecord, RecordPosition } from '../types.js'
import type { SqliteState } from './state.js'

async function exportRecords (st: SqliteState, o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  return st.s.exportRecords.all({
    since: o.since ?? 0, campaignId: o.campaignId ?? null, afterAt: o.after?.createdAt ?? -1, afterId: o.after?.requestId ?? '', limit: o.limit
  }).map(toRecord)
}

// SQLite's online backup API: page by page, consistent, while this process keeps writing
async function backupTo (st: SqliteState, file: string): Promise<void> {
  await st.db.backup(file)
}

export const exportStore = (st: SqliteState): Required<ExportStore> => bindState(st, { exportRecords, backupTo })
