// The SQLite ledger's retention (docs/design.md#request-ids-are-forever): a bounded batch per
// call, each a write of the group commit; a record itself stays.
import { bindState } from '../bind-state.js'
import type { RetentionStore } from '../types.js'
import type { SqliteState } from './state.js'

async function pruneResolvedBefore (st: SqliteState, before: number, limit: number, at: number): Promise<number> {
  return await st.write(() => st.s.prune.run({ before, limit, at }).changes)
}

async function pruneFrontReadsBefore (st: SqliteState, before: number, limit: number): Promise<number> {
  return await st.write(() => st.s.pruneFrontReads.run({ before, limit }).changes)
}

async function countRecords (st: SqliteState): Promise<number> {
  return st.s.countRecords.get()?.n ?? 0
}

export const retentionStore = (st: SqliteState): RetentionStore => bindState(st, { pruneResolvedBefore, pruneFrontReadsBefore, countRecords })
