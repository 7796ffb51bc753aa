// The campaign-control remote under replays and faults: persistent request-id idempotency
// (applied once, every receipt counted), faults per advertised method name (a drop applies
// first; status and rpc-error answer before anything is applied), custom and removed names.
import { describe, expect, it } from 'vitest'
import { rpc, useSimulator } from './helpers.js'
import { CAMPAIGN, ME, SEED_OPERATIONS as OPS, claim, claimParams, control, mutationParams, submitParams } from './control-helpers.js'

const start = useSimulator()
const status = async (s: Awaited<ReturnType<typeof start>>, requestId: string) =>
  (await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: requestId })).json.result.state

describe('persistent request-id idempotency', () => {
  it('a replayed claim, intervention, renewal or submission answers the stored result and applies nothing', async () => {
    const s = await start({ profile: 'campaign-control' })
    const claimed = claimParams({ request_id: 'claim-replay' })
    const first = (await control(s, OPS.claim_control, claimed)).json
    s.control.advanceClock(20_000)
    expect((await control(s, OPS.claim_control, claimed)).json).toEqual(first)

    const intervene = mutationParams(1, { request_id: 'int-replay', intervention: { action: 'pause' } })
    const renew = mutationParams(1, { request_id: 'renew-replay', ttl_seconds: 60 })
    const renewed = (await control(s, OPS.renew_control, renew)).json.result
    s.control.advanceClock(5_000)
    expect((await control(s, OPS.renew_control, renew)).json.result).toEqual(renewed)
    for (let i = 0; i < 2; i++) expect((await control(s, OPS.intervene, intervene)).json.result).toEqual({ accepted: true })
    expect(s.control.interventions(CAMPAIGN)).toHaveLength(1)

    const submission = submitParams(1, { request_id: 'sub-replay' })
    const task = (await rpc(s, 'message/send', submission)).json.result
    expect((await rpc(s, 'message/send', submission)).json.result).toEqual(task)

    expect(s.control.applied().map((a) => `${a.operation} ${a.requestId}`)).toEqual([
      'claim_control claim-replay', 'renew_control renew-replay', 'intervene int-replay', 'submit sub-replay'
    ])
    const counts = s.control.requestCounts()
    for (const id of ['claim-replay', 'renew-replay', 'int-replay', 'sub-replay']) expect(counts.get(id)).toBe(2)
  })

  it('a replay is answered even after the lease moved on; a refused id may be tried again', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    const intervene = mutationParams(1, { request_id: 'int-late', intervention: {} })
    await control(s, OPS.intervene, intervene)
    s.control.setLease(CAMPAIGN, { controller_id: 'ctl-other', epoch: 7, expires_at: Math.floor(s.control.now() / 1000) + 600 })
    expect((await control(s, OPS.intervene, intervene)).json.result).toEqual({ accepted: true })
    expect((await control(s, OPS.renew_control, mutationParams(1, { ttl_seconds: 60 }))).json.error.data.reason).toBe('lease_held')

    s.control.setLease(CAMPAIGN, null)
    const retried = claimParams({ request_id: 'claim-after-refusal' })
    expect((await claim(s, retried)).epoch).toBe(8)
    expect(await status(s, 'claim-after-refusal')).toBe('applied')
  })

  it('one request id for two operations is -32602 and applies nothing', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s, { request_id: 'shared-id' })
    const answer = await control(s, OPS.intervene, mutationParams(1, { request_id: 'shared-id', intervention: {} }))
    expect(answer.json.error.code).toBe(-32602)
    expect(s.control.interventions(CAMPAIGN)).toEqual([])
  })
})

describe('faults on advertised methods', () => {
  it('drop applies the intervention, then hangs up; the replay applies nothing', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'drop' }, 1)
    const params = mutationParams(1, { request_id: 'int-dropped', intervention: { action: 'pause' } })
    await expect(control(s, OPS.intervene, params)).rejects.toThrow()
    expect(s.control.interventions(CAMPAIGN)).toHaveLength(1)
    expect(await status(s, 'int-dropped')).toBe('applied')
    expect((await control(s, OPS.intervene, params)).json.result).toEqual({ accepted: true })
    expect(s.control.interventions(CAMPAIGN)).toHaveLength(1)
    expect(s.control.requestCounts().get('int-dropped')).toBe(2)
  })

  it('drop on a submission: the task exists and request_status names it', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: 'message/send' }, { kind: 'drop' }, 1)
    await expect(rpc(s, 'message/send', submitParams(1, { request_id: 'sub-dropped' }))).rejects.toThrow()
    const answer = (await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: 'sub-dropped' })).json.result
    expect(answer).toEqual({ request_id: 'sub-dropped', state: 'applied', task_id: expect.any(String) })
    expect(s.getTask(answer.task_id)?.metadata).toMatchObject({ argus_supervisor: { request_id: 'sub-dropped' } })
  })

  it('delay answers late but applies; status and rpc-error answer before anything is applied or counted', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'delay', ms: 150 }, 1)
    const t0 = Date.now()
    expect((await control(s, OPS.intervene, mutationParams(1, { request_id: 'int-slow', intervention: {} }))).json.result).toEqual({ accepted: true })
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)

    s.inject({ rpcMethod: OPS.intervene }, { kind: 'status', status: 503 }, 1)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'rpc-error', code: -32601, message: 'Method not found' }, 1)
    s.inject({ rpcMethod: OPS.renew_control }, { kind: 'rpc-error', code: -32603, message: 'Internal error' }, 1)
    expect((await control(s, OPS.intervene, mutationParams(1, { request_id: 'int-503', intervention: {} }))).status).toBe(503)
    expect((await control(s, OPS.intervene, mutationParams(1, { request_id: 'int-32601', intervention: {} }))).json.error).toEqual({ code: -32601, message: 'Method not found' })
    const renew = await control(s, OPS.renew_control, mutationParams(1, { request_id: 'renew-32603', ttl_seconds: 60 }))
    expect(renew.json).toEqual({ jsonrpc: '2.0', id: 'renew-32603', error: { code: -32603, message: 'Internal error' } })
    for (const id of ['int-503', 'int-32601', 'renew-32603']) {
      expect(await status(s, id)).toBe('not_applied')
      expect(s.control.requestCounts().has(id)).toBe(false)
    }
    expect(s.control.interventions(CAMPAIGN).map((i) => i.requestId)).toEqual(['int-slow'])
  })
})

describe('method names', () => {
  it('serves and fault-targets the advertised custom names; the seed names become unknown', async () => {
    const s = await start({ profile: 'campaign-control', campaignControl: { operations: { claim_control: 'ctl.claim', read_control: 'ctl.read' } } })
    const answer = await rpc(s, 'ctl.claim', claimParams({ request_id: 'custom-claim' }), { id: 'custom-claim' })
    expect(answer.json.result.lease).toMatchObject({ controller_id: ME, epoch: 1 })
    expect((await rpc(s, 'ctl.read', { campaign_id: CAMPAIGN })).json.result.lease.epoch).toBe(1)
    const seedName = await rpc(s, OPS.claim_control, claimParams())
    expect([seedName.status, seedName.text]).toEqual([500, 'Internal Server Error'])
    s.inject({ rpcMethod: 'ctl.claim' }, { kind: 'rpc-error', code: -32603, message: 'Internal error' }, 1)
    expect((await rpc(s, 'ctl.claim', claimParams())).json.error.code).toBe(-32603)
  })

  it('a null operation answers as an unknown method: plain 500 on FastA2A profiles, -32601 on a2a-js', async () => {
    const oo = await start({ campaignControl: { operations: { intervene: null } } })
    await claim(oo)
    const plain = await control(oo, OPS.intervene, mutationParams(1, { intervention: {} }))
    expect([plain.status, plain.text]).toEqual([500, 'Internal Server Error'])
    expect(oo.control.interventions(CAMPAIGN)).toEqual([])
    await oo.close()

    const js = await start({ profile: 'a2a-js', campaignControl: { operations: { intervene: null, cancel: null } } })
    const missing = await rpc(js, OPS.intervene, mutationParams(1, { intervention: {} }), { id: 'x-1' })
    expect(missing.json).toEqual({ jsonrpc: '2.0', id: 'x-1', error: { code: -32601, message: `Method not found: ${OPS.intervene}` } })
    expect((await rpc(js, 'tasks/cancel', { id: 'task-demo-1' })).json.error.code).toBe(-32601)
  })
})
