// The PostgreSQL ledger's clock (docs/design.md#one-clock): the server's own, shared by every
// replica, and each replica's last measurement of the remote's clock against it.
import { bindState } from '../bind-state.js'
import type { ClockStore } from '../types.js'
import { nowMs, one, q, shift, type PgState } from './session.js'

async function now (st: PgState): Promise<number> {
  return (await one<{ now: number }>(st, `SELECT ${nowMs('$1')} AS now`, [shift(st)]))!.now
}

async function putRemoteClock (st: PgState, instanceId: string, m: { lo: number; hi: number }): Promise<void> {
  await q(st, `INSERT INTO remote_clock (instance_id, lo_ms, hi_ms, measured_at) VALUES ($1, $2::bigint, $3::bigint, ${nowMs('$4')})
    ON CONFLICT (instance_id) DO UPDATE SET lo_ms = excluded.lo_ms, hi_ms = excluded.hi_ms, measured_at = excluded.measured_at`, [instanceId, Math.floor(m.lo), Math.ceil(m.hi), shift(st)])
}

async function freshRemoteClock (st: PgState, maxAgeMs: number): Promise<{ lo: number; hi: number; ageMs: number } | undefined> {
  const row = await one<{ lo: string; hi: string; age: string }>(st, `SELECT lo_ms AS lo, hi_ms AS hi, ${nowMs('$1')} - measured_at AS age FROM remote_clock
    WHERE measured_at >= ${nowMs('$1')} - $2::bigint ORDER BY measured_at DESC LIMIT 1`, [shift(st), maxAgeMs])
  return row === undefined ? undefined : { lo: Number(row.lo), hi: Number(row.hi), ageMs: Math.max(0, Number(row.age)) }
}

export const clockStore = (st: PgState): ClockStore => bindState(st, { now, putRemoteClock, freshRemoteClock })
