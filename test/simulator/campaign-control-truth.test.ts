// The remote's ground truth for invariant checks: every applied mutation names the sender's
// controller id and epoch, the campaign's epoch just before it, and whether the sender held a
// live lease at that epoch then; received() lists every mutating request that reached a
// handler, replays included.
import { describe, expect, it } from 'vitest'
import { rpc, useSimulator } from './helpers.js'
import { CAMPAIGN, ME, SEED_OPERATIONS as OPS, claim, claimParams, control, mutationParams, submitParams } from './control-helpers.js'

const start = useSimulator()
const OTHER = 'ctl-other'

describe('applied(): who sent it, and the book just before', () => {
  it('a cancel applied after another controller took over: leaseLive false, its epoch behind the current one', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    const task = (await rpc(s, 'message/send', submitParams(1, { request_id: 'sub-1' }))).json.result
    s.control.setLease(CAMPAIGN, { controller_id: OTHER, epoch: 5, expires_at: Math.floor(s.control.now() / 1000) + 600 })
    const metadata = { argus_supervisor: mutationParams(1, { request_id: 'cancel-stale' }) }
    expect((await rpc(s, OPS.cancel, { id: task.id, metadata }, { id: 'cancel-stale' })).json.result.status.state).toBe('canceled')

    const cancel = s.control.applied().find((a) => a.requestId === 'cancel-stale')
    expect(cancel).toEqual({ operation: 'cancel', requestId: 'cancel-stale', campaignId: CAMPAIGN, at: expect.any(Number), controllerId: ME, epoch: 1, currentEpoch: 5, leaseLive: false })
    expect(cancel!.epoch!).toBeLessThan(cancel!.currentEpoch)
    expect(s.control.applied().find((a) => a.requestId === 'sub-1')).toMatchObject({ operation: 'submit', controllerId: ME, epoch: 1, currentEpoch: 1, leaseLive: true })
  })

  it('a cancel whose metadata names no controller records nulls', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    const task = (await rpc(s, 'message/send', submitParams(1))).json.result
    const metadata = { argus_supervisor: { campaign_id: CAMPAIGN, request_id: 'cancel-bare', controller_epoch: 'one' } }
    await rpc(s, OPS.cancel, { id: task.id, metadata })
    expect(s.control.applied().at(-1)).toMatchObject({ operation: 'cancel', controllerId: null, epoch: null, currentEpoch: 1, leaseLive: false })
  })

  it('an intervention with the right epoch has leaseLive true; claims, renewals and releases are witnessed before they change the lease', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s, { request_id: 'claim-first' })
    await claim(s, { request_id: 'claim-again' })
    await control(s, OPS.intervene, mutationParams(1, { request_id: 'int-ok', intervention: { action: 'pause' } }))
    await control(s, OPS.renew_control, mutationParams(1, { request_id: 'renew-ok', ttl_seconds: 60 }))
    await control(s, OPS.release_control, mutationParams(1, { request_id: 'release-ok' }))
    await claim(s, { request_id: 'claim-other', controller_id: OTHER })

    const truth = s.control.applied().map(({ requestId, controllerId, epoch, currentEpoch, leaseLive }) => ({ requestId, controllerId, epoch, currentEpoch, leaseLive }))
    expect(truth).toEqual([
      { requestId: 'claim-first', controllerId: ME, epoch: null, currentEpoch: 0, leaseLive: false },
      { requestId: 'claim-again', controllerId: ME, epoch: null, currentEpoch: 1, leaseLive: true },
      { requestId: 'int-ok', controllerId: ME, epoch: 1, currentEpoch: 1, leaseLive: true },
      { requestId: 'renew-ok', controllerId: ME, epoch: 1, currentEpoch: 1, leaseLive: true },
      { requestId: 'release-ok', controllerId: ME, epoch: 1, currentEpoch: 1, leaseLive: true },
      // after the release: no live lease, and the takeover's epoch is the next one
      { requestId: 'claim-other', controllerId: OTHER, epoch: null, currentEpoch: 1, leaseLive: false }
    ])
    expect(s.control.lease(CAMPAIGN)).toMatchObject({ controller_id: OTHER, epoch: 2 })
  })

  it('with lease enforcement off an intervention without a lease is applied, and shows it', async () => {
    const s = await start({ campaignControl: { leaseEpochEnforced: false } })
    await claim(s)
    await control(s, OPS.intervene, mutationParams(42, { controller_id: 'anyone', request_id: 'int-anyone', intervention: {} }))
    expect(s.control.applied().at(-1)).toMatchObject({ requestId: 'int-anyone', controllerId: 'anyone', epoch: 42, currentEpoch: 1, leaseLive: false })
  })
})

describe('received(): every mutating request that reached a handler', () => {
  it('a replayed request id is received twice and applied once; refused and malformed ones are received only', async () => {
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0)
    const s = await start({ campaignControl: { now: () => t0 } })
    await claim(s, { request_id: 'claim-1' })
    const intervene = mutationParams(1, { request_id: 'int-replayed', intervention: {} })
    await control(s, OPS.intervene, intervene)
    s.control.advanceClock(1_000)
    await control(s, OPS.intervene, intervene)
    await control(s, OPS.renew_control, mutationParams(3, { request_id: 'renew-stale', ttl_seconds: 60 }))
    await control(s, OPS.claim_control, claimParams({ request_id: 'claim-bad', campaign_id: undefined }))
    await rpc(s, 'message/send', submitParams(1, { request_id: 'sub-1' }))
    await control(s, OPS.read_control, { campaign_id: CAMPAIGN })

    expect(s.control.received()).toEqual([
      { requestId: 'claim-1', operation: 'claim_control', campaignId: CAMPAIGN, at: t0 },
      { requestId: 'int-replayed', operation: 'intervene', campaignId: CAMPAIGN, at: t0 },
      { requestId: 'int-replayed', operation: 'intervene', campaignId: CAMPAIGN, at: t0 + 1_000 },
      { requestId: 'renew-stale', operation: 'renew_control', campaignId: CAMPAIGN, at: t0 + 1_000 },
      { requestId: 'claim-bad', operation: 'claim_control', campaignId: null, at: t0 + 1_000 },
      { requestId: 'sub-1', operation: 'submit', campaignId: CAMPAIGN, at: t0 + 1_000 }
    ])
    expect(s.control.applied().map((a) => a.requestId)).toEqual(['claim-1', 'int-replayed', 'sub-1'])
    expect(s.control.requestCounts()).toEqual(new Map([['claim-1', 1], ['int-replayed', 2], ['renew-stale', 1], ['claim-bad', 1], ['sub-1', 1]]))
  })
})
