// The PostgreSQL ledger's audit trail (docs/design.md#operating-the-ledger): every record in
// creation order, a page at a time. A copy of the whole database is pg_dump's, not the gateway's.
import { bindState } from '../bind-state.js'
import { RECORD_COLUMNS, toRecord, type RecordRow } from '../rows.js'
import type { ExportStore, MutationRecord, RecordPosition } from '../types.js'
import { q, type PgState } from './session.js'

async function exportRecords (st: PgState, o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  return (await q<RecordRow>(st, `SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE created_at >= $1 AND ($2::text IS NULL OR campaign_id = $2)
      AND (created_at > $3 OR (created_at = $3 AND request_id > $4))
    ORDER BY created_at, request_id LIMIT $5`,
  [o.since ?? 0, o.campaignId ?? null, o.after?.createdAt ?? -1, o.after?.requestId ?? '', o.limit])).rows.map(toRecord)
}

export const exportStore = (st: PgState): ExportStore => bindState(st, { exportRecords })
