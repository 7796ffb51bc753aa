// The SQLite ledger (docs/design.md#ledger): the Ledger interface on one better-sqlite3 file
// owned by this process. The file is in synchronous=FULL WAL mode and every write goes through
// the group commit (docs/design.md#group-commit), so a write is on disk before its method
// resolves; reads run at once and see only what is committed. One file per role (records,
// leases, bound tasks, bindings, front-door sends, clock, retention, export), each a set of
// functions over the state this factory opens (`state.ts`); the factory assembles them.
//
// At open the ledger does not touch `pending` records: the control plane calls
// `expireAllPending(now)` at start (this process owns the file, so no other owner can still
// be waiting for one of them).
import type Database from 'better-sqlite3'
import type { Logger } from 'pino'
import { createCampaignLocks } from '../campaign-locks.js'
import { UNGUARDED } from '../guard.js'
import type { AmbiguousAnswer, Ledger } from '../types.js'
import { bindingStore } from './bindings.js'
import { boundTaskStore } from './bound-tasks.js'
import { clockStore } from './clock.js'
import { exportStore } from './export.js'
import { frontSendStore } from './front-sends.js'
import { createGroupCommit, type GroupCommit } from './group-commit.js'
import { leaseStore } from './leases.js'
import { migrate } from './migrations.js'
import { openSqliteDatabase } from './open.js'
import { recordStore } from './records.js'
import { retentionStore } from './retention.js'
import type { SqliteState } from './state.js'
import { prepareStatements, type Statements } from './statements.js'

export { LedgerLockedError } from './open.js'

export interface SqliteLedgerOptions {
  /** the file (its directory is created if missing), or ':memory:' for tests */
  path: string
  /** what a record this store turns ambiguous answers (the control plane's rendering) */
  ambiguousAnswer: AmbiguousAnswer
  logger?: Logger
  /**
   * the ledger's clock: one process owns the file, so it is this process's own (the control
   * plane's, which tests move); default Date.now
   */
  now?: (() => number) | undefined
}

const databases = new WeakMap<Ledger, { db: Database.Database; group: GroupCommit }>()
const unguarded = (ledger: Ledger): Ledger => (ledger as Ledger & { [UNGUARDED]?: Ledger })[UNGUARDED] ?? ledger

/** the database behind a SQLite ledger, for tests and diagnostics (pragmas, batching) */
export function sqliteDatabaseOf (ledger: Ledger): Database.Database | undefined {
  return databases.get(unguarded(ledger))?.db
}

/** a SQLite ledger's commits and the writes they held since open (the bench, tests) */
export function sqliteCommitStatsOf (ledger: Ledger): { batches: number; writes: number } | undefined {
  const s = databases.get(unguarded(ledger))?.group.stats
  return s === undefined ? undefined : { ...s }
}

/** throws LedgerLockedError when another process (or handle) owns the file */
export function createSqliteLedger (opts: SqliteLedgerOptions): Ledger {
  const db = openSqliteDatabase(opts.path)
  let s: Statements
  try {
    const { from, to } = migrate(db, opts.ambiguousAnswer)
    s = prepareStatements(db)
    opts.logger?.info({ path: opts.path, schemaVersion: to, migratedFrom: from }, 'ledger opened')
  } catch (err) {
    db.close()
    throw err
  }
  const group = createGroupCommit(db)
  const st: SqliteState = { db, s, write: group.write, clock: opts.now ?? Date.now, ambiguousAnswer: opts.ambiguousAnswer }
  const ledger: Ledger = {
    kind: 'sqlite',
    singleWriter: true,
    ...recordStore(st),
    lockCampaign: createCampaignLocks().lock,
    ...leaseStore(st),
    ...boundTaskStore(st),
    ...bindingStore(st),
    ...frontSendStore(st),
    ...clockStore(st),
    ...retentionStore(st),
    ...exportStore(st),
    ping: async () => {
      try {
        return s.ping.get()?.ok === 1
      } catch {
        return false
      }
    },
    close: async () => {
      if (!db.open) return
      // what is queued is committed, and its callers answered, before the file closes
      group.flush()
      db.close()
      opts.logger?.info({ path: opts.path }, 'ledger closed')
    }
  }
  databases.set(ledger, { db, group })
  return ledger
}
