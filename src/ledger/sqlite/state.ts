// What every role file of the SQLite ledger works on (docs/design.md#ledger): the file this
// process owns, its statements, the group commit every write goes through, and the ledger's clock.
import type Database from 'better-sqlite3'
import type { AmbiguousAnswer } from '../types.js'
import type { GroupCommit } from './group-commit.js'
import type { Statements } from './statements.js'

export interface SqliteState {
  db: Database.Database
  s: Statements
  /** a write, on disk before it resolves (docs/design.md#group-commit); reads run at once */
  write: GroupCommit['write']
  /** the ledger's clock: one process owns the file, so it is this process's own */
  clock: () => number
  /** what a record this store turns ambiguous answers (the control plane's rendering) */
  ambiguousAnswer: AmbiguousAnswer
}
