// The ledger factory (docs/design.md#ledger): the configured URL picks the implementation.
// `sqlite:<path>` (and `sqlite::memory:` for tests) is the embedded ledger one process owns;
// `postgres://…` (or `postgresql://…`) serves several replicas.
import type { Logger } from 'pino'
import { createSqliteLedger } from './sqlite/sqlite-ledger.js'
import type { Ledger } from './types.js'

export { LedgerLockedError, createSqliteLedger, sqliteDatabaseOf } from './sqlite/sqlite-ledger.js'
export { LedgerSchemaError } from './postgres/migrations.js'
export type { SqliteLedgerOptions } from './sqlite/sqlite-ledger.js'
export { ambiguousAnswer, reconcilePath } from './ambiguous-answer.js'
export type * from './types.js'

export interface LedgerOptions {
  logger?: Logger
}

export async function createLedger (url: string, opts: LedgerOptions = {}): Promise<Ledger> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length)
    if (path === '') throw new Error('the ledger URL sqlite: needs a path, as in sqlite:./data/ledger.db')
    return createSqliteLedger({ ...opts, path })
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // loaded only when configured, as ioredis is: the single-replica default never needs `pg`
    const { createPostgresLedger } = await import('./postgres/postgres-ledger.js')
    return await createPostgresLedger({ url, logger: opts.logger })
  }
  // the scheme only: a URL may carry a password
  throw new Error(`unsupported ledger URL scheme ${JSON.stringify(url.split(':')[0])}: use sqlite:<path> or postgres://…`)
}
