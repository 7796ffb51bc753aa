// Opening the SQLite ledger file (docs/design.md#ledger): one process owns it. The exclusive
// locking mode is set before WAL (so WAL keeps its index in process memory and never shares
// the file) and the lock is taken at once with an empty write transaction, so a second
// gateway on the same file fails at start with a clear error instead of at its first write.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

export const MEMORY_PATH = ':memory:'

/** a short wait: the owner holds the lock until it closes, so waiting longer gains nothing */
const LOCK_WAIT_MS = 100

/** WAL grows without bound by default; keep it near this size after each checkpoint */
const WAL_SIZE_LIMIT = 16 * 1024 * 1024

export class LedgerLockedError extends Error {
  readonly path: string
  constructor (path: string, options?: { cause?: unknown }) {
    super(`ledger file ${path} is in use by another gateway process (SQLite allows one owner)`, options)
    this.name = 'LedgerLockedError'
    this.path = path
  }
}

function isBusy (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

function takeOwnership (db: Database.Database, path: string): void {
  db.pragma('locking_mode = EXCLUSIVE')
  try {
    db.exec('BEGIN IMMEDIATE')
    db.exec('COMMIT')
    const mode = db.pragma('journal_mode = WAL', { simple: true })
    if (mode !== 'wal') throw new Error(`ledger file ${path}: journal_mode is ${String(mode)}, WAL is required`)
  } catch (err) {
    if (isBusy(err)) throw new LedgerLockedError(path, { cause: err })
    throw err
  }
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
}

/** opens (creating the directory if needed), takes ownership and sets the durability pragmas */
export function openSqliteDatabase (path: string): Database.Database {
  const memory = path === MEMORY_PATH
  if (!memory) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: LOCK_WAIT_MS })
  try {
    if (!memory) takeOwnership(db, path)
    // FULL: a commit is on disk before the method resolves, power loss included
    db.pragma('synchronous = FULL')
    db.pragma('foreign_keys = ON')
    return db
  } catch (err) {
    db.close()
    throw err
  }
}
