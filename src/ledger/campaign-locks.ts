// The in-process per-campaign lock (docs/design.md#ledger): mutations of one campaign run one
// at a time, FIFO, and a caller waits at most `waitMs` (then answers 409 campaign_busy). With
// the SQLite ledger one process owns the file, so an in-process mutex serialises everything
// there is; a mutex is kept only while someone holds or awaits it.
import { E_TIMEOUT, Mutex, withTimeout } from 'async-mutex'

export type LockCampaign = (campaignId: string, waitMs: number) => Promise<(() => Promise<void>) | undefined>

export interface CampaignLocks {
  lock: LockCampaign
  /** campaigns with a holder or a waiter (tests: the map does not grow without bound) */
  size: () => number
}

export function createCampaignLocks (): CampaignLocks {
  const entries = new Map<string, { mutex: Mutex; users: number }>()

  async function lock (campaignId: string, waitMs: number): Promise<(() => Promise<void>) | undefined> {
    let entry = entries.get(campaignId)
    if (entry === undefined) {
      entry = { mutex: new Mutex(), users: 0 }
      entries.set(campaignId, entry)
    }
    const e = entry
    e.users++
    const leave = (): void => {
      // a timed-out waiter may still sit in the old mutex's queue; it releases at once when
      // reached, so a fresh mutex for a later caller cannot overlap real work
      if (--e.users === 0 && entries.get(campaignId) === e) entries.delete(campaignId)
    }
    let release: () => void
    try {
      // a free campaign's lock is taken at once: no wait to bound, so no timer (docs/design.md#hot-path)
      release = e.mutex.isLocked() ? await withTimeout(e.mutex, Math.max(0, waitMs)).acquire() : await e.mutex.acquire()
    } catch (err) {
      leave()
      if (err === E_TIMEOUT) return undefined
      throw err
    }
    let released = false
    return async () => {
      if (released) return
      released = true
      release()
      leave()
    }
  }

  return { lock, size: () => entries.size }
}
