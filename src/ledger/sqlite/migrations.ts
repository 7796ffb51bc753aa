// The SQLite ledger's schema (docs/design.md#ledger), as migrations applied in order and
// counted by `PRAGMA user_version`; each runs in its own transaction with its version bump,
// so a crash leaves the file at one version or the next. Append, never edit, a migration.
import type Database from 'better-sqlite3'

export const migrations: readonly string[] = [
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
  `
]

/** brings the file to the latest version; refuses a file written by a newer gateway */
export function migrate (db: Database.Database, list: readonly string[] = migrations): { from: number; to: number } {
  const from = db.pragma('user_version', { simple: true }) as number
  if (from > list.length) {
    throw new Error(`ledger schema version ${from} is newer than this gateway knows (${list.length})`)
  }
  for (let v = from; v < list.length; v++) {
    db.transaction(() => {
      db.exec(list[v] as string)
      db.pragma(`user_version = ${v + 1}`)
    })()
  }
  return { from, to: list.length }
}
