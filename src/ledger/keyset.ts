// Where a page of the export starts (docs/design.md#ledger): both stores filter `created_at >= since`
// and `(created_at, request_id) > after`, and a planner seeks its index on one of the two lower
// bounds — SQLite on the first, PostgreSQL on the row — and only filters by the other. Each bound
// is therefore given as tight as the pair: a loose one read every record before the page, on every
// page (issue 47: quadratic). Which records match is unchanged, since each tightened bound is
// implied by the other.
import type { RecordPosition } from './types.js'

export interface ExportStart { since: number; afterAt: number; afterId: string }

/** `since` (default 0: every record) and `after` as two bounds, each as tight as both together */
export function exportStart (o: { since?: number | undefined; after?: RecordPosition | undefined }): ExportStart {
  const since = o.since ?? 0
  const a = o.after
  // before the window (or none): the window's start alone; every request id sorts after ''
  if (a === undefined || a.createdAt < since) return { since, afterAt: since - 1, afterId: '' }
  return { since: a.createdAt, afterAt: a.createdAt, afterId: a.requestId }
}
