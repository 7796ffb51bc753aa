// The campaign-control remote's refusals (CONTRACT §6): each lease and policy rule answers
// a JSON-RPC error with its `data.reason`, malformed params are -32602, and nothing refused
// is applied.
import { describe, expect, it } from 'vitest'
import { rpc, useSimulator } from './helpers.js'
import { CONSTRAINTS, SEED_OPERATIONS as OPS, claim, claimParams, control, mutationParams, submitParams } from './control-helpers.js'

const start = useSimulator()

describe('refusals carry error.data.reason', () => {
  const refusal = (answer: { json: { error?: { code: number; data?: { reason?: string } } } }) => [answer.json.error?.code, answer.json.error?.data?.reason]

  it('lease_held, stale_epoch and lease_expired on claims and every mutation', async () => {
    const s = await start({ profile: 'campaign-control' })
    expect(refusal(await control(s, OPS.renew_control, mutationParams(0, { ttl_seconds: 60 })))).toEqual([-32003, 'lease_expired'])
    await claim(s, { controller_id: 'ctl-other' })
    expect(refusal(await control(s, OPS.claim_control, claimParams()))).toEqual([-32003, 'lease_held'])
    expect(refusal(await control(s, OPS.intervene, mutationParams(1, { intervention: {} })))).toEqual([-32003, 'lease_held'])
    expect(refusal(await rpc(s, 'message/send', submitParams(1)))).toEqual([-32003, 'lease_held'])
    s.control.advanceClock(60_000)
    await claim(s)
    expect(refusal(await control(s, OPS.renew_control, mutationParams(1, { ttl_seconds: 60 })))).toEqual([-32003, 'stale_epoch'])
    expect(refusal(await rpc(s, 'message/send', submitParams(1)))).toEqual([-32003, 'stale_epoch'])
    s.control.advanceClock(60_000)
    expect(refusal(await control(s, OPS.release_control, mutationParams(2)))).toEqual([-32003, 'lease_expired'])
    expect(refusal(await control(s, OPS.intervene, mutationParams(2, { intervention: {} })))).toEqual([-32003, 'lease_expired'])
    expect(s.control.applied().map((a) => a.operation)).toEqual(['claim_control', 'claim_control'])
  })

  it('policy_violation unless the constraints are exactly the envelope; bad params are -32602', async () => {
    const s = await start({ profile: 'campaign-control' })
    const wrong = [undefined, {}, { ...CONSTRAINTS, allow_merge: true }, { ...CONSTRAINTS, extra: false }, { ...CONSTRAINTS, version: '1' }]
    for (const constraints of wrong) {
      expect(refusal(await control(s, OPS.claim_control, claimParams({ constraints })))).toEqual([-32003, 'policy_violation'])
    }
    await claim(s)
    expect(refusal(await control(s, OPS.intervene, mutationParams(1, { intervention: {}, constraints: { ...CONSTRAINTS, execution: 'local' } })))).toEqual([-32003, 'policy_violation'])
    expect(refusal(await rpc(s, 'message/send', submitParams(1, { constraints: undefined })))).toEqual([-32003, 'policy_violation'])
    for (const bad of [{ ttl_seconds: '60' }, { campaign_id: undefined }, { request_id: 7 }]) {
      const answer = await control(s, OPS.claim_control, claimParams(bad))
      expect(answer.json.error.code).toBe(-32602)
      expect(answer.json.error.data).toBeUndefined()
    }
    expect((await control(s, OPS.intervene, mutationParams(1, { intervention: 'pause' }))).json.error.code).toBe(-32602)
    expect(s.control.applied()).toHaveLength(1)
  })

  it('enforcement flags off: the remote checks neither policy nor lease', async () => {
    const s = await start({ campaignControl: { leaseEpochEnforced: false, policyEnforced: false } })
    await claim(s, { constraints: undefined })
    expect((await control(s, OPS.intervene, mutationParams(42, { controller_id: 'anyone', intervention: {}, constraints: { allow_merge: true } }))).json.result).toEqual({ accepted: true })
  })
})
