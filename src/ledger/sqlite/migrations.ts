// The SQLite ledger's schema (docs/design.md#ledger), as migrations applied in order and
// counted by `PRAGMA user_version`; each runs in its own transaction with its version bump,
// so a crash leaves the file at one version or the next. Append, never edit, a migration.
import type Database from 'better-sqlite3'
import { toJson } from '../rows.js'
import type { AmbiguousAnswer } from '../types.js'

/**
 * SQL, or a step that needs code (it runs inside the migration's transaction), given what a
 * record it turns ambiguous answers
 */
export type Migration = string | ((db: Database.Database, ambiguousAnswer: AmbiguousAnswer) => void)

/**
 * 3 (docs/design.md#serialisation): the operation list gains `fence` (a CHECK cannot be altered
 * in SQLite: the table is rebuilt, rows copied in their order), records gain `pruned_at`, every
 * pending record but the oldest of its campaign turns ambiguous (a ledger from before could hold
 * two; each blocks its campaign until resolved, the safe side) so that the store's own index
 * can hold at most one, and the campaign generations and controller bindings arrive.
 */
function serialiseCampaigns (db: Database.Database, ambiguousAnswer: AmbiguousAnswer): void {
  db.exec(`
  CREATE TABLE mutation_records_v3 (
    request_id TEXT PRIMARY KEY,
    campaign_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    operation TEXT NOT NULL CHECK (operation IN ('claim', 'renew', 'release', 'submit', 'intervene', 'cancel', 'fence')),
    params_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    controller_epoch INTEGER,
    owner TEXT NOT NULL,
    deadline INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'rejected', 'ambiguous', 'not_applied')),
    updated_at INTEGER NOT NULL,
    answer TEXT,
    outcome_code TEXT,
    task_id TEXT,
    reconcile_failures INTEGER NOT NULL DEFAULT 0,
    last_reconcile_failure_at INTEGER,
    resolution TEXT,
    pruned_at INTEGER
  ) STRICT;
  INSERT INTO mutation_records_v3 (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
    deadline, created_at, state, updated_at, answer, outcome_code, task_id, reconcile_failures, last_reconcile_failure_at, resolution)
  SELECT request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
    deadline, created_at, state, updated_at, answer, outcome_code, task_id, reconcile_failures, last_reconcile_failure_at, resolution
  FROM mutation_records ORDER BY rowid;
  DROP TABLE mutation_records;
  ALTER TABLE mutation_records_v3 RENAME TO mutation_records;
  CREATE INDEX mutation_records_campaign ON mutation_records (campaign_id, created_at);
  CREATE INDEX mutation_records_unresolved ON mutation_records (campaign_id, created_at)
    WHERE state IN ('pending', 'ambiguous');
  CREATE INDEX mutation_records_pending ON mutation_records (deadline) WHERE state = 'pending';
  CREATE INDEX mutation_records_ambiguous ON mutation_records (campaign_id) WHERE state = 'ambiguous';
  CREATE INDEX mutation_records_unresolved_all ON mutation_records (created_at, request_id)
    WHERE state IN ('pending', 'ambiguous');
  CREATE INDEX mutation_records_prunable ON mutation_records (updated_at) WHERE pruned_at IS NULL;
  `)
  const extra = db.prepare<[], { request_id: string; campaign_id: string }>(`SELECT request_id, campaign_id FROM mutation_records
    WHERE state = 'pending' AND rowid NOT IN (SELECT min(rowid) FROM mutation_records WHERE state = 'pending' GROUP BY campaign_id)`).all()
  const turn = db.prepare(`UPDATE mutation_records SET state = 'ambiguous', outcome_code = 'ambiguous_write', answer = ?
    WHERE request_id = ? AND state = 'pending'`)
  for (const r of extra) turn.run(toJson(ambiguousAnswer(r.campaign_id, r.request_id)), r.request_id)
  db.exec(`
  CREATE UNIQUE INDEX mutation_records_one_pending ON mutation_records (campaign_id) WHERE state = 'pending';

  CREATE TABLE campaign_generations (
    campaign_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
  ) STRICT;
  INSERT INTO campaign_generations (campaign_id, generation)
    SELECT campaign_id, count(*) FROM mutation_records GROUP BY campaign_id;

  CREATE TABLE controller_bindings (
    controller_key TEXT PRIMARY KEY,
    controller_id TEXT NOT NULL,
    identity TEXT NOT NULL,
    caller TEXT NOT NULL,
    bound_at INTEGER NOT NULL
  ) STRICT;
  `)
}

export const migrations: readonly Migration[] = [
  // 1: records, leases, bound tasks
  `
  CREATE TABLE mutation_records (
    request_id TEXT PRIMARY KEY,
    campaign_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    operation TEXT NOT NULL CHECK (operation IN ('claim', 'renew', 'release', 'submit', 'intervene', 'cancel')),
    params_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    controller_epoch INTEGER,
    owner TEXT NOT NULL,
    deadline INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'rejected', 'ambiguous', 'not_applied')),
    updated_at INTEGER NOT NULL,
    answer TEXT,
    outcome_code TEXT,
    task_id TEXT,
    reconcile_failures INTEGER NOT NULL DEFAULT 0,
    last_reconcile_failure_at INTEGER,
    resolution TEXT
  ) STRICT;
  CREATE INDEX mutation_records_campaign ON mutation_records (campaign_id, created_at);
  -- small partial indexes: the ambiguity block, expiry and the gauge read only unresolved rows
  CREATE INDEX mutation_records_unresolved ON mutation_records (campaign_id, created_at)
    WHERE state IN ('pending', 'ambiguous');
  CREATE INDEX mutation_records_pending ON mutation_records (deadline) WHERE state = 'pending';
  CREATE INDEX mutation_records_ambiguous ON mutation_records (campaign_id) WHERE state = 'ambiguous';

  CREATE TABLE campaign_leases (
    campaign_id TEXT PRIMARY KEY,
    known INTEGER NOT NULL CHECK (known IN (0, 1)),
    controller_id TEXT,
    epoch INTEGER,
    expires_at INTEGER,
    max_epoch_seen INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL,
    CHECK ((controller_id IS NULL) = (epoch IS NULL) AND (epoch IS NULL) = (expires_at IS NULL))
  ) STRICT;

  CREATE TABLE bound_tasks (
    campaign_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES mutation_records (request_id),
    bound_at INTEGER NOT NULL
  ) STRICT;
  `,
  // 2: the unresolved records of every campaign in creation order, for GET /v1/requests (its
  // keyset pages): the index of 1 leads with the campaign and cannot serve a listing across them
  `
  CREATE INDEX mutation_records_unresolved_all ON mutation_records (created_at, request_id)
    WHERE state IN ('pending', 'ambiguous');
  `,
  serialiseCampaigns,
  // 4 (docs/api.md#a2a-front-door): the A2A front door's sends, one per (caller identity, message
  // id), and through them the owner of each task a submission created: shared by replicas
  `
  CREATE TABLE front_sends (
    identity TEXT NOT NULL,
    message_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('read', 'submit')),
    campaign_id TEXT,
    task_id TEXT,
    answer TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (identity, message_id)
  ) STRICT;
  CREATE INDEX front_sends_task ON front_sends (task_id, identity) WHERE task_id IS NOT NULL;
  `,
  // 5 (docs/api.md#a2a-front-door): retention finds the front door's old reads without a scan
  `
  CREATE INDEX front_sends_reads ON front_sends (created_at) WHERE kind = 'read';
  `,
  // 6 (docs/design.md#request-records): each record's owner is an identity, never its caller's
  // name. A static caller's records keep their meaning (`static:<name>`: static names never start
  // with `jwt:`, in any letter case); a JWT caller's written before this carry no subject, so
  // their owner stays unknown (NULL, which no caller's identity equals)
  `
  ALTER TABLE mutation_records ADD COLUMN identity TEXT;
  UPDATE mutation_records SET identity = 'static:' || caller WHERE lower(substr(caller, 1, 4)) <> 'jwt:';
  `,
  // 7 (docs/design.md#one-clock): each replica's last measurement of the remote's clock against
  // the ledger's, for replicas that have none of their own; one writer never reads it back
  `
  CREATE TABLE remote_clock (
    instance_id TEXT PRIMARY KEY,
    lo_ms INTEGER NOT NULL,
    hi_ms INTEGER NOT NULL,
    measured_at INTEGER NOT NULL
  ) STRICT;
  `,
  // 8 (docs/design.md#grants): a task's campaign, for a caller whose grants reach only some
  // campaigns, found without a scan
  `
  CREATE INDEX mutation_records_task ON mutation_records (task_id) WHERE task_id IS NOT NULL;
  `,
  // 9 (docs/design.md#ledger): every record in the export's order, so each page of `ledger export`
  // seeks to its keyset position instead of scanning and sorting the whole ledger (issue 47).
  // A campaign's export reads the campaign's index of 1 (its creation times, ties sorted alone)
  `
  CREATE INDEX mutation_records_created ON mutation_records (created_at, request_id);
  `
]

/**
 * brings the file to the latest version; refuses a file written by a newer gateway. Foreign keys
 * are off while it runs (a rebuilt table is dropped and renamed, which SQLite's own procedure
 * for altering a table requires; the pragma is ignored inside a transaction) and each migration
 * checks them before it commits.
 */
export function migrate (db: Database.Database, ambiguousAnswer: AmbiguousAnswer, list: readonly Migration[] = migrations): { from: number; to: number } {
  const from = db.pragma('user_version', { simple: true }) as number
  if (from > list.length) {
    throw new Error(`ledger schema version ${from} is newer than this gateway knows (${list.length})`)
  }
  if (from === list.length) return { from, to: from }
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number
  db.pragma('foreign_keys = OFF')
  try {
    for (let v = from; v < list.length; v++) {
      db.transaction(() => {
        const m = list[v]!
        if (typeof m === 'string') db.exec(m)
        else m(db, ambiguousAnswer)
        if ((db.pragma('foreign_key_check') as unknown[]).length > 0) throw new Error(`ledger migration ${v + 1} broke a foreign key`)
        db.pragma(`user_version = ${v + 1}`)
      })()
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys}`)
  }
  return { from, to: list.length }
}
