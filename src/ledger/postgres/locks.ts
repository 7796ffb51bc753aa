// The PostgreSQL ledger's campaign lock (docs/design.md#serialisation): the in-process mutex first
// (so one replica's waiters queue fairly and hold one connection at most), then a session advisory
// lock on a connection of its own, waited for within the same bound. A queue, nothing more: a
// held lock whose session dies is released by the server, counted, and relied on for nothing.
import type pg from 'pg'
import { bindState } from '../bind-state.js'
import type { CampaignLockStore } from '../types.js'
import { prepared, type PgState } from './session.js'

/** the first key of the campaign locks' advisory keys (pg_advisory_lock(int4, int4)) */
const LOCK_NAMESPACE = 726_011
const TRY_LOCK = 'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok'
const UNLOCK = 'SELECT pg_advisory_unlock($1, hashtext($2))'

type Release = () => Promise<void>
type OnError = (err: Error & { code?: string }) => void

/** a connection within `ms`, or undefined; one that arrives late goes straight back */
async function connectWithin (pool: pg.Pool, ms: number): Promise<pg.PoolClient | undefined> {
  if (ms <= 0) return undefined
  // more idle connections than waiters: one is handed over at the next tick, in the queue's order,
  // so there is no wait to bound, no timer and no race (docs/design.md#hot-path)
  if (pool.idleCount > pool.waitingCount) return await pool.connect()
  let timer: NodeJS.Timeout | undefined
  let late = false
  const connecting = pool.connect()
  const gaveUp = new Promise<undefined>((resolve) => { timer = setTimeout(() => { late = true; resolve(undefined) }, ms) })
  const client = await Promise.race([connecting, gaveUp])
  clearTimeout(timer)
  if (client === undefined && late) connecting.then((c) => { c.release() }, () => undefined)
  return client
}

// a held lock's session died (a failover, pg_terminate_backend, a pooler's idle timeout): the
// server released the lock. Counted and logged; nothing relied on it (docs/design.md#serialisation)
/** one handler per held lock: a dying session may report more than one error */
function heldErrorHandler (st: PgState): OnError {
  let lost = false
  return (err) => {
    if (lost) return
    lost = true
    st.opts.onLockSessionLost?.()
    st.opts.logger?.warn({ code: err.code }, 'ledger lock session lost; the server released its lock, and the insert checks still serialise the campaign')
  }
}

async function lockCampaign (st: PgState, campaignId: string, waitMs: number): Promise<Release | undefined> {
  const started = Date.now()
  const local = await st.locks.lock(campaignId, waitMs)
  if (local === undefined) return undefined
  let client: pg.PoolClient | undefined
  let timeoutSet = false
  const onHeldError = heldErrorHandler(st)
  try {
    // every lock connection busy: wait for one within the same bound, else the campaign is busy
    client = await connectWithin(st.lockPool, waitMs - (Date.now() - started))
    if (client === undefined) {
      await local()
      return undefined
    }
    // a held lock's session may die (a restart, pg_terminate_backend): the server then
    // releases the lock; the client's error must not crash the process
    client.on('error', onHeldError)
    // a free lock is taken in one round trip; the server queues a try behind any waiter, so it
    // never jumps another replica's turn. Only a held one is waited for, under lock_timeout
    // (0 would mean no bound at all), set for that wait and reset at release
    if ((await client.query<{ ok: boolean }>(prepared(TRY_LOCK, [LOCK_NAMESPACE, campaignId]))).rows[0]?.ok !== true) {
      const left = Math.max(1, waitMs - (Date.now() - started))
      timeoutSet = true
      await client.query(`SET lock_timeout = ${left}`)
      await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_NAMESPACE, campaignId])
    }
  } catch (err) {
    const timedOut = (err as { code?: string }).code === '55P03'
    client?.off('error', onHeldError)
    client?.release(!timedOut)
    await local()
    if (timedOut) return undefined
    throw err
  }
  return releaser(campaignId, client, timeoutSet, onHeldError, local)
}

/** gives the advisory lock back, then the in-process one; once, whatever the session's state */
function releaser (campaignId: string, held: pg.PoolClient, timeoutSet: boolean, onHeldError: OnError, local: Release): Release {
  let released = false
  return async () => {
    if (released) return
    released = true
    try {
      await held.query(prepared(UNLOCK, [LOCK_NAMESPACE, campaignId]))
      if (timeoutSet) await held.query('RESET lock_timeout')
      held.off('error', onHeldError)
      held.release()
    } catch {
      // the session is gone, and the server released its locks with it
      held.off('error', onHeldError)
      held.release(true)
    } finally {
      await local()
    }
  }
}

export const campaignLockStore = (st: PgState): CampaignLockStore => bindState(st, { lockCampaign })
