// The PostgreSQL ledger's audit trail (docs/design.md#operating-the-ledger): every record in
// creation order, a page at a time. A copy of the whole database is pg_dump's, not the gateway's.
import { bindState } from '../bind-state.js'
import { exportStart } from '../keyset.js'
import { RECORD_COLUMNS, toRecord, type RecordRow } from '../rows.js'
import type { ExportStore, MutationRecord, RecordPosition } from '../types.js'
import { q, type PgState } from './session.js'

// Request ids compared and ordered in "C", as mutation_records_created holds them (migration 9),
// and the position as a row value: the index's condition, so a page seeks to it (docs/design.md#ledger).
// A campaign's export is its own statement: `$n IS NULL OR campaign_id = $n` in a statement prepared
// by name can be planned once for both cases, and then never by the campaign's index
const PAGE = `SELECT ${RECORD_COLUMNS} FROM mutation_records
    WHERE created_at >= $1 AND (created_at, request_id COLLATE "C") > ($2, $3)`
const ORDER = 'ORDER BY created_at, request_id COLLATE "C" LIMIT $4'
const ALL = `${PAGE}
    ${ORDER}`
const CAMPAIGN = `${PAGE} AND campaign_id = $5
    ${ORDER}`

async function exportRecords (st: PgState, o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }): Promise<MutationRecord[]> {
  const s = exportStart(o)
  const values: unknown[] = [s.since, s.afterAt, s.afterId, o.limit]
  const rows = o.campaignId === undefined ? await q<RecordRow>(st, ALL, values) : await q<RecordRow>(st, CAMPAIGN, [...values, o.campaignId])
  return rows.rows.map(toRecord)
}

export const exportStore = (st: PgState): ExportStore => bindState(st, { exportRecords })
