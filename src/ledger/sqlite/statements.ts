// The SQLite ledger's prepared statements (docs/design.md#ledger), compiled once at open, one
// set per role of the store; the role files run them. Outcome writes are compare-and-set on the
// state column: the UPDATE names the state it leaves, and the caller reads `changes` to learn
// whether it won.
import type Database from 'better-sqlite3'
import type { ExportStart } from '../keyset.js'
import { FRONT_SEND_COLUMNS, RECORD_COLUMNS, type BindingRow, type BoundTaskRow, type FrontSendRow, type LeaseRow, type RecordRow } from '../rows.js'

type Params = Record<string, unknown>
type Id = { request_id: string; campaign_id: string }
type ExportParams = ExportStart & { limit: number }

/** the records and their campaigns' generations (records.ts) */
function recordStatements (db: Database.Database) {
  return {
    insertPending: db.prepare<Params>(`INSERT INTO mutation_records
      (request_id, campaign_id, caller, identity, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
      VALUES (@requestId, @campaignId, @caller, @identity, @operation, @paramsHash, @params, @controllerEpoch, @owner, @deadline, @createdAt, 'pending', @createdAt)`),
    exists: db.prepare<[string], { n: number }>('SELECT 1 AS n FROM mutation_records WHERE request_id = ?'),
    // only a record that provably never left (upstream_unavailable is written for nothing sent alone)
    retryUnsent: db.prepare<Params>(`UPDATE mutation_records
      SET state = 'pending', owner = @owner, deadline = @deadline, controller_epoch = @controllerEpoch,
        params = @params, answer = NULL, outcome_code = NULL, pruned_at = NULL, updated_at = @at
      WHERE request_id = @requestId AND state = 'rejected' AND outcome_code = 'upstream_unavailable'`),
    generation: db.prepare<[string], { generation: number }>('SELECT generation FROM campaign_generations WHERE campaign_id = ?'),
    bumpGeneration: db.prepare<[string]>(`INSERT INTO campaign_generations (campaign_id, generation) VALUES (?, 1)
      ON CONFLICT (campaign_id) DO UPDATE SET generation = generation + 1`),
    openState: db.prepare<[string], { state: string }>(`SELECT state FROM mutation_records
      WHERE campaign_id = ? AND state IN ('pending', 'ambiguous') ORDER BY state = 'pending' DESC LIMIT 1`),
    get: db.prepare<[string], RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records WHERE request_id = ?`),
    listByCampaign: db.prepare<[string, number], RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE campaign_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`),
    listByCampaignState: db.prepare<[string, string, number], RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE campaign_id = ? AND state = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`),
    firstUnresolved: db.prepare<[string], RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE campaign_id = ? AND state IN ('pending', 'ambiguous') ORDER BY created_at, rowid LIMIT 1`),
    // the index's own predicate, written out, so that SQLite uses the partial index whatever the filter
    listUnresolved: db.prepare<Params, RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE state IN ('pending', 'ambiguous') AND (@state IS NULL OR state = @state)
        AND (created_at, request_id) > (@afterAt, @afterId)
      ORDER BY created_at, request_id LIMIT @limit`),
    recordOutcome: db.prepare<Params>(`UPDATE mutation_records
      SET state = @state, answer = @answer, outcome_code = @outcomeCode, task_id = @taskId, updated_at = @at
      WHERE request_id = @requestId AND state = 'pending'`),
    resolve: db.prepare<Params>(`UPDATE mutation_records
      SET state = @to, answer = @answer, resolution = @resolution, task_id = coalesce(@taskId, task_id), updated_at = @at
      WHERE request_id = @requestId AND state = 'ambiguous'`),
    // an applied submission's task, named on its sender's front-door send (docs/design.md#front-door):
    // the record's own identity, campaign and task, so a send of another identity or campaign
    // under the same id is never named; found by the front send's key, never a scan
    nameFrontTask: db.prepare<Params>(`UPDATE front_sends SET task_id = r.task_id
      FROM (SELECT identity, campaign_id, task_id FROM mutation_records
        WHERE request_id = @requestId AND operation = 'submit' AND state = 'applied' AND task_id IS NOT NULL AND identity IS NOT NULL) AS r
      WHERE front_sends.identity = r.identity AND front_sends.message_id = @requestId AND front_sends.kind = 'submit'
        AND front_sends.campaign_id = r.campaign_id AND front_sends.task_id IS NULL`),
    noteReconcileFailure: db.prepare<[number, string]>(`UPDATE mutation_records
      SET reconcile_failures = reconcile_failures + 1, last_reconcile_failure_at = ? WHERE request_id = ?`),
    pendingBefore: db.prepare<[number], Id>(`SELECT request_id, campaign_id FROM mutation_records
      WHERE state = 'pending' AND deadline < ? ORDER BY created_at, rowid`),
    allPending: db.prepare<[], Id>(`SELECT request_id, campaign_id FROM mutation_records
      WHERE state = 'pending' ORDER BY created_at, rowid`),
    makeAmbiguous: db.prepare<Params>(`UPDATE mutation_records
      SET state = 'ambiguous', outcome_code = 'ambiguous_write', answer = @answer, updated_at = @at
      WHERE request_id = @requestId AND state = 'pending'`),
    countAmbiguous: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM mutation_records WHERE state = \'ambiguous\''),
    campaignsOfTask: db.prepare<[string], { campaign_id: string }>('SELECT DISTINCT campaign_id FROM mutation_records WHERE task_id = ? ORDER BY campaign_id')
  }
}

/** the lease views (leases.ts; the ticket reads one too) */
function leaseStatements (db: Database.Database) {
  return {
    getLease: db.prepare<[string], LeaseRow>('SELECT * FROM campaign_leases WHERE campaign_id = ?'),
    putLease: db.prepare<Params>(`INSERT INTO campaign_leases
      (campaign_id, known, controller_id, epoch, expires_at, max_epoch_seen, updated_at)
      VALUES (@campaignId, 1, @controllerId, @epoch, @expiresAt, coalesce(@epoch, 0), @at)
      ON CONFLICT (campaign_id) DO UPDATE SET known = 1, controller_id = excluded.controller_id,
        epoch = excluded.epoch, expires_at = excluded.expires_at,
        max_epoch_seen = max(max_epoch_seen, excluded.max_epoch_seen), updated_at = excluded.updated_at`),
    // the lease last seen stays (meaningful only when known); maxEpochSeen never moves down
    markLeaseUnknown: db.prepare<[string, number]>(`INSERT INTO campaign_leases (campaign_id, known, updated_at) VALUES (?, 0, ?)
      ON CONFLICT (campaign_id) DO UPDATE SET known = 0, updated_at = excluded.updated_at`),
    forgetAllLeases: db.prepare<[number]>('UPDATE campaign_leases SET known = 0, updated_at = ? WHERE known = 1')
  }
}

/** the bound tasks (bound-tasks.ts) */
function boundTaskStatements (db: Database.Database) {
  return {
    getBoundTask: db.prepare<[string], BoundTaskRow>('SELECT * FROM bound_tasks WHERE campaign_id = ?'),
    setBoundTask: db.prepare<Params>(`INSERT INTO bound_tasks (campaign_id, task_id, request_id, bound_at)
      VALUES (@campaignId, @taskId, @requestId, @boundAt)
      ON CONFLICT (campaign_id) DO UPDATE SET task_id = excluded.task_id, request_id = excluded.request_id, bound_at = excluded.bound_at`),
    clearBoundTask: db.prepare<[string]>('DELETE FROM bound_tasks WHERE campaign_id = ?')
  }
}

/** the audit trail, retention, the remote's clock and the readiness ping (export.ts, retention.ts, clock.ts, sqlite-ledger.ts) */
function operatorStatements (db: Database.Database) {
  return {
    // the position as a row value, which SQLite seeks to on mutation_records_created (migration 9);
    // a campaign's export apart, on the campaign's index: `@c IS NULL OR campaign_id = @c` is
    // planned once, for both cases, and never by that index (docs/design.md#ledger)
    exportRecords: db.prepare<ExportParams, RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE created_at >= @since AND (created_at, request_id) > (@afterAt, @afterId)
      ORDER BY created_at, request_id LIMIT @limit`),
    exportCampaignRecords: db.prepare<ExportParams & { campaignId: string }, RecordRow>(`SELECT ${RECORD_COLUMNS} FROM mutation_records
      WHERE campaign_id = @campaignId AND created_at >= @since AND (created_at, request_id) > (@afterAt, @afterId)
      ORDER BY created_at, request_id LIMIT @limit`),
    // the record stays; what a caller sent, what it was answered and an operator's note go
    // (docs/design.md#request-ids-are-forever). The answer a replay gives is rebuilt from what stays
    prune: db.prepare<Params>(`UPDATE mutation_records
      SET params = 'null', answer = NULL, resolution = json_set(resolution, '$.note', NULL), pruned_at = @at
      WHERE rowid IN (SELECT rowid FROM mutation_records
        WHERE pruned_at IS NULL AND state IN ('applied', 'rejected', 'not_applied') AND updated_at < @before
        LIMIT @limit)`),
    countRecords: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM mutation_records'),
    putRemoteClock: db.prepare<{ instanceId: string; lo: number; hi: number; at: number }>(`INSERT INTO remote_clock (instance_id, lo_ms, hi_ms, measured_at) VALUES (@instanceId, @lo, @hi, @at)
      ON CONFLICT (instance_id) DO UPDATE SET lo_ms = excluded.lo_ms, hi_ms = excluded.hi_ms, measured_at = excluded.measured_at`),
    freshRemoteClock: db.prepare<{ since: number }, { lo_ms: number; hi_ms: number; measured_at: number }>(
      'SELECT lo_ms, hi_ms, measured_at FROM remote_clock WHERE measured_at >= @since ORDER BY measured_at DESC LIMIT 1'),
    pruneFrontReads: db.prepare<Params>(`DELETE FROM front_sends WHERE rowid IN (
      SELECT rowid FROM front_sends WHERE kind = 'read' AND created_at < @before LIMIT @limit)`),
    ping: db.prepare<[], { ok: number }>('SELECT 1 AS ok')
  }
}

/** the controller bindings and the live leases that keep one (bindings.ts) */
function bindingStatements (db: Database.Database) {
  return {
    binding: db.prepare<[string], BindingRow>('SELECT controller_id, identity, caller, bound_at FROM controller_bindings WHERE controller_key = ?'),
    bind: db.prepare<Params>(`INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at)
      VALUES (@key, @controllerId, @identity, @caller, @boundAt) ON CONFLICT (controller_key) DO NOTHING`),
    bindings: db.prepare<[], BindingRow>('SELECT controller_id, identity, caller, bound_at FROM controller_bindings ORDER BY controller_key'),
    unbind: db.prepare<[string], BindingRow>('DELETE FROM controller_bindings WHERE controller_key = ? RETURNING controller_id, identity, caller, bound_at'),
    // lower() is ASCII-only here, as `lower(… COLLATE "C")` is on PostgreSQL; controller ids are ASCII
    liveLeasesOf: db.prepare<[string, number], { campaign_id: string }>(`SELECT campaign_id FROM campaign_leases
      WHERE lower(controller_id) = ? AND expires_at * 1000 > ? ORDER BY campaign_id`)
  }
}

/** the front door's sends (front-sends.ts) */
function frontSendStatements (db: Database.Database) {
  return {
    frontSend: db.prepare<[string, string], FrontSendRow>(`SELECT ${FRONT_SEND_COLUMNS} FROM front_sends WHERE identity = ? AND message_id = ?`),
    putFrontSend: db.prepare<Params>(`INSERT INTO front_sends (${FRONT_SEND_COLUMNS})
      VALUES (@identity, @messageId, @caller, @contentHash, @kind, @campaignId, @taskId, @answer, @createdAt)
      ON CONFLICT (identity, message_id) DO NOTHING`),
    settleFrontSend: db.prepare<Params>(`UPDATE front_sends SET task_id = coalesce(@taskId, task_id), answer = coalesce(@answer, answer)
      WHERE identity = @identity AND message_id = @messageId`),
    frontTaskOf: db.prepare<[string, string], FrontSendRow>(`SELECT ${FRONT_SEND_COLUMNS} FROM front_sends
      WHERE task_id = ? AND identity = ? ORDER BY created_at LIMIT 1`)
  }
}

/** every role's statements, one object in the store's state */
export function prepareStatements (db: Database.Database) {
  return {
    ...recordStatements(db),
    ...leaseStatements(db),
    ...boundTaskStatements(db),
    ...operatorStatements(db),
    ...bindingStatements(db),
    ...frontSendStatements(db)
  }
}

export type Statements = ReturnType<typeof prepareStatements>
