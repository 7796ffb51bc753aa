// The SQLite ledger's clock (docs/design.md#one-clock): this process's own, since one process owns
// the file, and its last measurement of the remote's clock against it.
import { bindState } from '../bind-state.js'
import type { ClockStore } from '../types.js'
import type { SqliteState } from './state.js'

async function now (st: SqliteState): Promise<number> {
  return st.clock()
}

async function putRemoteClock (st: SqliteState, instanceId: string, m: { lo: number; hi: number }): Promise<void> {
  await st.write(() => st.s.putRemoteClock.run({ instanceId, lo: Math.floor(m.lo), hi: Math.ceil(m.hi), at: st.clock() }))
}

async function freshRemoteClock (st: SqliteState, maxAgeMs: number): Promise<{ lo: number; hi: number; ageMs: number } | undefined> {
  const at = st.clock()
  const row = st.s.freshRemoteClock.get({ since: at - maxAgeMs })
  return row === undefined ? undefined : { lo: row.lo_ms, hi: row.hi_ms, ageMs: Math.max(0, at - row.measured_at) }
}

export const clockStore = (st: SqliteState): ClockStore => bindState(st, { now, putRemoteClock, freshRemoteClock })
