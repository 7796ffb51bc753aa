// The in-process per-campaign lock (docs/design.md#ledger): beyond the contract's ordering
// rules, the map of mutexes must not keep a campaign after its last holder or waiter leaves.
import { describe, expect, it } from 'vitest'
import { createCampaignLocks } from '../../src/ledger/campaign-locks.js'

describe('campaign locks', () => {
  it('forgets a campaign once nobody holds or awaits it', async () => {
    const locks = createCampaignLocks()
    const held = await locks.lock('a', 100)
    const waiter = locks.lock('a', 1_000)
    expect(await locks.lock('a', 10)).toBeUndefined()
    await locks.lock('b', 10).then(r => r?.())
    expect(locks.size()).toBe(1)
    await held!()
    await (await waiter)!()
    expect(locks.size()).toBe(0)
  })

  it('a waitMs of 0 takes a free lock and refuses a held one', async () => {
    const locks = createCampaignLocks()
    const held = await locks.lock('a', 0)
    expect(held).toBeTypeOf('function')
    expect(await locks.lock('a', 0)).toBeUndefined()
    await held!()
    expect(locks.size()).toBe(0)
  })
})
