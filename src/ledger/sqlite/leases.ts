// The SQLite ledger's lease views (docs/design.md#ledger): what the gateway last saw of each
// campaign's lease, and the highest epoch ever seen, which never moves down.
import { bindState } from '../bind-state.js'
import { toLease } from '../rows.js'
import type { LeaseStore, LeaseView } from '../types.js'
import type { SqliteState } from './state.js'

async function getLease (st: SqliteState, campaignId: string): Promise<LeaseView | undefined> {
  const row = st.s.getLease.get(campaignId)
  return row === undefined ? undefined : toLease(row)
}

async function putLease (st: SqliteState, campaignId: string, lease: LeaseView['lease'], at: number): Promise<void> {
  const row = { campaignId, controllerId: lease?.controllerId ?? null, epoch: lease?.epoch ?? null, expiresAt: lease?.expiresAt ?? null, at }
  await st.write(() => st.s.putLease.run(row))
}

async function markLeaseUnknown (st: SqliteState, campaignId: string, at: number): Promise<void> {
  await st.write(() => st.s.markLeaseUnknown.run(campaignId, at))
}

async function forgetAllLeases (st: SqliteState, at: number): Promise<void> {
  await st.write(() => st.s.forgetAllLeases.run(at))
}

export const leaseStore = (st: SqliteState): LeaseStore => bindState(st, { getLease, putLease, markLeaseUnknown, forgetAllLeases })
