// The ledger factory (docs/design.md#ledger): the configured URL picks the implementation.
// `sqlite:<path>` (and `sqlite::memory:` for tests) is the embedded ledger one process owns;
// `postgres://…` (or `postgresql://…`) serves several replicas.
import type { Logger } from 'pino'
import { createSqliteLedger } from './sqlite/sqlite-ledger.js'
import type { AmbiguousAnswer, Ledger } from './types.js'

export { LedgerLockedError, createSqliteLedger, sqliteCommitStatsOf, sqliteDatabaseOf } from './sqlite/sqlite-ledger.js'
export { LedgerSchemaError } from './postgres/migrations.js'
export type { SqliteLedgerOptions } from './sqlite/sqlite-ledger.js'
export type * from './types.js'

export interface LedgerOptions {
  /** what a record the store turns ambiguous answers (the control plane's, src/control/ambiguous-answer.ts) */
  ambiguousAnswer: AmbiguousAnswer
  logger?: Logger
  /** SQLite: the ledger's clock, this process's own (default Date.now), docs/design.md#one-clock */
  now?: (() => number) | undefined
  /**
   * PostgreSQL: the server's clock is the ledger's; tests shift it by as much as this clock is off
   * Date.now, to move time for the database as for everything else (default: no shift)
   */
  serverClock?: (() => number) | undefined
  /** PostgreSQL: a held campaign lock's session died (docs/design.md#serialisation) */
  onLockSessionLost?: (() => void) | undefined
}

export async function createLedger (url: string, opts: LedgerOptions): Promise<Ledger> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length)
    if (path === '') throw new Error('the ledger URL sqlite: needs a path, as in sqlite:./data/ledger.db')
    return createSqliteLedger({ ambiguousAnswer: opts.ambiguousAnswer, logger: opts.logger, now: opts.now, path })
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // loaded only when configured, as ioredis is: the single-replica default never needs `pg`
    const { createPostgresLedger } = await import('./postgres/postgres-ledger.js')
    const shifted = opts.serverClock
    return await createPostgresLedger({ url, ambiguousAnswer: opts.ambiguousAnswer, logger: opts.logger, clockShiftMs: shifted === undefined ? undefined : () => shifted() - Date.now(), onLockSessionLost: opts.onLockSessionLost })
  }
  // the scheme only: a URL may carry a password
  throw new Error(`unsupported ledger URL scheme ${JSON.stringify(url.split(':')[0])}: use sqlite:<path> or postgres://…`)
}
