// The PostgreSQL ledger (docs/design.md#ledger): the Ledger interface on a `pg` pool, for
// several replicas sharing one database. One file per role (records, locks, leases, bound tasks,
// bindings, front-door sends, clock, retention, export), each a set of functions over the state
// `session.ts` opens; this factory opens it and assembles the roles.
import { bindState } from '../bind-state.js'
import type { Ledger } from '../types.js'
import { bindingStore } from './bindings.js'
import { boundTaskStore } from './bound-tasks.js'
import { clockStore } from './clock.js'
import { exportStore } from './export.js'
import { frontSendStore } from './front-sends.js'
import { leaseStore } from './leases.js'
import { campaignLockStore } from './locks.js'
import { recordStore } from './records.js'
import { retentionStore } from './retention.js'
import { close, openSession, ping, type PostgresLedgerOptions } from './session.js'

export type { PostgresLedgerOptions } from './session.js'

export async function createPostgresLedger (opts: PostgresLedgerOptions): Promise<Ledger> {
  const st = await openSession(opts)
  return {
    kind: 'postgres',
    singleWriter: false,
    ...recordStore(st),
    ...campaignLockStore(st),
    ...leaseStore(st),
    ...boundTaskStore(st),
    ...bindingStore(st),
    ...frontSendStore(st),
    ...clockStore(st),
    ...retentionStore(st),
    ...exportStore(st),
    ...bindState(st, { ping, close })
  }
}
