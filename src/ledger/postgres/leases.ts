// The PostgreSQL ledger's lease views (docs/design.md#ledger): what the gateway last saw of each
// campaign's lease, and the highest epoch ever seen, which never moves down.
import { bindState } from '../bind-state.js'
import { toLease, type LeaseRow } from '../rows.js'
import type { LeaseStore, LeaseView } from '../types.js'
import { one, q, type PgState } from './session.js'

export const LEASE_COLUMNS = 'campaign_id, known, controller_id, epoch, expires_at, max_epoch_seen, updated_at'

async function getLease (st: PgState, campaignId: string): Promise<LeaseView | undefined> {
  const row = await one<LeaseRow>(st, `SELECT ${LEASE_COLUMNS} FROM campaign_leases WHERE campaign_id = $1`, [campaignId])
  return row === undefined ? undefined : toLease(row)
}

async function putLease (st: PgState, campaignId: string, lease: LeaseView['lease'], at: number): Promise<void> {
  await q(st, `INSERT INTO campaign_leases (campaign_id, known, controller_id, epoch, expires_at, max_epoch_seen, updated_at)
    VALUES ($1, true, $2, $3::bigint, $4::bigint, coalesce($3::bigint, 0), $5)
    ON CONFLICT (campaign_id) DO UPDATE SET known = true, controller_id = excluded.controller_id,
      epoch = excluded.epoch, expires_at = excluded.expires_at,
      max_epoch_seen = greatest(campaign_leases.max_epoch_seen, excluded.max_epoch_seen), updated_at = excluded.updated_at`,
  [campaignId, lease?.controllerId ?? null, lease?.epoch ?? null, lease?.expiresAt ?? null, at])
}

// the lease last seen stays (meaningful only when known); maxEpochSeen never moves down
async function markLeaseUnknown (st: PgState, campaignId: string, at: number): Promise<void> {
  await q(st, `INSERT INTO campaign_leases (campaign_id, known, updated_at) VALUES ($1, false, $2)
    ON CONFLICT (campaign_id) DO UPDATE SET known = false, updated_at = excluded.updated_at`, [campaignId, at])
}

async function forgetAllLeases (st: PgState, at: number): Promise<void> {
  await q(st, 'UPDATE campaign_leases SET known = false, updated_at = $1 WHERE known', [at])
}

export const leaseStore = (st: PgState): LeaseStore => bindState(st, { getLease, putLease, markLeaseUnknown, forgetAllLeases })
