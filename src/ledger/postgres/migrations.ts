// The PostgreSQL ledger's schema (docs/design.md#ledger), as migrations applied in order and
// counted in `ledger_schema`; they run in one transaction under a transaction-level advisory
// lock, so two replicas starting together apply each migration once and the second finds it
// done. A database at a newer version than this gateway knows is refused. Append, never edit.
import type pg from 'pg'
import { toJson } from '../rows.js'
import type { AmbiguousAnswer } from '../types.js'

/**
 * SQL, or a step that needs code (it runs inside the migrations' transaction), given what a
 * record it turns ambiguous answers
 */
export type Migration = string | ((c: pg.PoolClient, ambiguousAnswer: AmbiguousAnswer) => Promise<void>)

/** the advisory lock key (pg_advisory_xact_lock(bigint)) that serialises migrations */
export const MIGRATION_LOCK = 7_260_113_000_001n

/**
 * 3 (docs/design.md#serialisation): the operation list gains `fence`, records gain `pruned_at`,
 * every pending record but the oldest of its campaign turns ambiguous (a ledger from before could
 * hold two; each blocks its campaign until resolved, the safe side) so that the store's own index
 * can hold at most one, and the campaign generations and controller bindings arrive.
 */
async function serialiseCampaigns (c: pg.PoolClient, ambiguousAnswer: AmbiguousAnswer): Promise<void> {
  await c.query(`
  ALTER TABLE mutation_records DROP CONSTRAINT mutation_records_operation_check;
  ALTER TABLE mutation_records ADD CONSTRAINT mutation_records_operation_check
    CHECK (operation IN ('claim', 'renew', 'release', 'submit', 'intervene', 'cancel', 'fence'));
  ALTER TABLE mutation_records ADD COLUMN pruned_at BIGINT;
  CREATE INDEX mutation_records_prunable ON mutation_records (updated_at) WHERE pruned_at IS NULL;
  `)
  const extra = await c.query<{ request_id: string; campaign_id: string }>(`SELECT request_id, campaign_id FROM mutation_records
    WHERE state = 'pending' AND seq NOT IN (SELECT min(seq) FROM mutation_records WHERE state = 'pending' GROUP BY campaign_id)`)
  for (const r of extra.rows) {
    await c.query(`UPDATE mutation_records SET state = 'ambiguous', outcome_code = 'ambiguous_write', answer = $1
      WHERE request_id = $2 AND state = 'pending'`, [toJson(ambiguousAnswer(r.campaign_id, r.request_id)), r.request_id])
  }
  await c.query(`
  CREATE UNIQUE INDEX mutation_records_one_pending ON mutation_records (campaign_id) WHERE state = 'pending';

  CREATE TABLE campaign_generations (
    campaign_id TEXT PRIMARY KEY,
    generation BIGINT NOT NULL
  );
  INSERT INTO campaign_generations (campaign_id, generation)
    SELECT campaign_id, count(*) FROM mutation_records GROUP BY campaign_id;

  CREATE TABLE controller_bindings (
    controller_key TEXT PRIMARY KEY,
    controller_id TEXT NOT NULL,
    identity TEXT NOT NULL,
    caller TEXT NOT NULL,
    bound_at BIGINT NOT NULL
  );
  `)
}

export const migrations: readonly Migration[] = [
  // 1: records, leases, bound tasks (the SQLite schema's twin; JSON kept as text, exactly as written)
  `
  CREATE TABLE mutation_records (
    request_id TEXT PRIMARY KEY,
    campaign_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    operation TEXT NOT NULL CHECK (operation IN ('claim', 'renew', 'release', 'submit', 'intervene', 'cancel')),
    params_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    controller_epoch BIGINT,
    owner TEXT NOT NULL,
    deadline BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'rejected', 'ambiguous', 'not_applied')),
    updated_at BIGINT NOT NULL,
    answer TEXT,
    outcome_code TEXT,
    task_id TEXT,
    reconcile_failures INTEGER NOT NULL DEFAULT 0,
    last_reconcile_failure_at BIGINT,
    resolution TEXT,
    seq BIGSERIAL NOT NULL
  );
  CREATE INDEX mutation_records_campaign ON mutation_records (campaign_id, created_at, seq);
  CREATE INDEX mutation_records_unresolved ON mutation_records (campaign_id, created_at, seq)
    WHERE state IN ('pending', 'ambiguous');
  CREATE INDEX mutation_records_pending ON mutation_records (deadline) WHERE state = 'pending';
  CREATE INDEX mutation_records_ambiguous ON mutation_records (campaign_id) WHERE state = 'ambiguous';

  CREATE TABLE campaign_leases (
    campaign_id TEXT PRIMARY KEY,
    known BOOLEAN NOT NULL,
    controller_id TEXT,
    epoch BIGINT,
    expires_at BIGINT,
    max_epoch_seen BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL,
    CHECK ((controller_id IS NULL) = (epoch IS NULL) AND (epoch IS NULL) = (expires_at IS NULL))
  );

  CREATE TABLE bound_tasks (
    campaign_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES mutation_records (request_id),
    bound_at BIGINT NOT NULL
  );
  `,
  // 2: the unresolved records of every campaign in creation order, for GET /v1/requests (its
  // keyset pages): the index of 1 leads with the campaign and cannot serve a listing across them.
  // Request ids in byte order (COLLATE "C"), as SQLite orders them, whatever the database's collation
  `
  CREATE INDEX mutation_records_unresolved_all ON mutation_records (created_at, request_id COLLATE "C")
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
    created_at BIGINT NOT NULL,
    PRIMARY KEY (identity, message_id)
  );
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
  // the ledger's (remote minus ledger, ms), stamped with the server's clock: a replica with no
  // measurement of its own uses one no older than 30 s
  `
  CREATE TABLE remote_clock (
    instance_id TEXT PRIMARY KEY,
    lo_ms BIGINT NOT NULL,
    hi_ms BIGINT NOT NULL,
    measured_at BIGINT NOT NULL
  );
  `,
  // 8 (docs/design.md#grants): a task's campaign, for a caller whose grants reach only some
  // campaigns, found without a scan
  `
  CREATE INDEX mutation_records_task ON mutation_records (task_id) WHERE task_id IS NOT NULL;
  `,
  // 9 (docs/design.md#ledger): every record in the export's order, so each page of `ledger export`
  // seeks to its keyset position instead of scanning and sorting the whole ledger (issue 47).
  // Request ids in byte order (COLLATE "C"), as in 2 and as SQLite orders them: an index in the
  // database's collation could not serve the query, which compares in "C". A campaign's export
  // reads the campaign's index of 1 (its creation times, ties sorted alone)
  `
  CREATE INDEX mutation_records_created ON mutation_records (created_at, request_id COLLATE "C");
  `
]

export class LedgerSchemaError extends Error {}

/** brings the database to the latest version; refuses one written by a newer gateway */
export async function migrate (pool: pg.Pool, ambiguousAnswer: AmbiguousAnswer, list: readonly Migration[] = migrations): Promise<{ from: number; to: number }> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    await client.query('CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)')
    const row = await client.query<{ version: number }>('SELECT version FROM ledger_schema')
    if (row.rowCount === 0) await client.query('INSERT INTO ledger_schema (version) VALUES (0)')
    const from = row.rows[0]?.version ?? 0
    if (from > list.length) {
      throw new LedgerSchemaError(`ledger schema version ${from} is newer than this gateway knows (${list.length}): run a gateway at least as new as the one that migrated it`)
    }
    for (let v = from; v < list.length; v++) {
      const m = list[v]!
      if (typeof m === 'string') await client.query(m)
      else await m(client, ambiguousAnswer)
    }
    if (from < list.length) await client.query('UPDATE ledger_schema SET version = $1', [list.length])
    await client.query('COMMIT')
    return { from, to: list.length }
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    client.release()
  }
}
