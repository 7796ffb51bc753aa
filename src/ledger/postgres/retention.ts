// The PostgreSQL ledger's retention (docs/design.md#request-ids-are-forever): one small batch per
// call, so retention never holds a long lock on the request path's rows; a record itself stays.
import { bindState } from '../bind-state.js'
import type { RetentionStore } from '../types.js'
import { one, q, type PgState } from './session.js'

async function pruneResolvedBefore (st: PgState, before: number, limit: number, at: number): Promise<number> {
  return (await q(st, `UPDATE mutation_records
    SET params = 'null', answer = NULL, resolution = (resolution::jsonb || '{"note": null}'::jsonb)::text, pruned_at = $3
    WHERE request_id IN (SELECT request_id FROM mutation_records
      WHERE pruned_at IS NULL AND state IN ('applied', 'rejected', 'not_applied') AND updated_at < $1
      LIMIT $2)`, [before, limit, at])).rowCount ?? 0
}

// one small batch per call, as for the records
async function pruneFrontReadsBefore (st: PgState, before: number, limit: number): Promise<number> {
  return (await q(st, `DELETE FROM front_sends WHERE (identity, message_id) IN (
    SELECT identity, message_id FROM front_sends WHERE kind = 'read' AND created_at < $1 LIMIT $2)`, [before, limit])).rowCount ?? 0
}

async function countRecords (st: PgState): Promise<number> {
  return (await one<{ n: number }>(st, 'SELECT count(*)::int AS n FROM mutation_records'))?.n ?? 0
}

export const retentionStore = (st: PgState): RetentionStore => bindState(st, { pruneResolvedBefore, pruneFrontReadsBefore, countRecords })
