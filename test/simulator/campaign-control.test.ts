// The campaign-control remote (CONTRACT §6, the seed's remote-side rules): the card entry and
// its options, the happy path of every operation (submit and cancel included), takeover epochs.
import { describe, expect, it } from 'vitest'
import { CONTROL_URN } from '../../src/simulator/index.js'
import { call, plainParams, rpc, useSimulator } from './helpers.js'
import { CAMPAIGN, ME, SEED_OPERATIONS as OPS, claim, claimParams, control, mutationParams, submitParams } from './control-helpers.js'

const start = useSimulator()
const cardOf = async (s: Awaited<ReturnType<typeof start>>) => (await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json

describe('card advertisement', () => {
  it('campaign-control profile advertises the seed map with every enforcement flag true', async () => {
    const s = await start({ profile: 'campaign-control' })
    expect((await cardOf(s)).capabilities.extensions).toEqual([
      { uri: CONTROL_URN, params: { lease_epoch_enforced: true, policy_enforced: true, project_selection: true, operations: OPS } }
    ])
    expect(CONTROL_URN).toBe('urn:openoperator:campaign-control:v1')
  })

  it('reflects each option; a null drops the operation; setCard still applies on top', async () => {
    const s = await start({ campaignControl: { leaseEpochEnforced: false, policyEnforced: false, projectSelection: false, operations: { claim_control: 'ctl.claim', intervene: null } } })
    const [ext] = (await cardOf(s)).capabilities.extensions
    expect(ext.params).toMatchObject({ lease_epoch_enforced: false, policy_enforced: false, project_selection: false })
    const { intervene: _dropped, ...rest } = OPS
    expect(ext.params.operations).toEqual({ ...rest, claim_control: 'ctl.claim' })
    s.setCard((c) => ({ ...c, capabilities: { streaming: false } }))
    expect((await cardOf(s)).capabilities).toEqual({ streaming: false })
  })

  it('advertise: false serves the extension without a card entry; the plain openoperator profile has neither', async () => {
    const s = await start({ campaignControl: { advertise: false } })
    expect((await cardOf(s)).capabilities.extensions).toBeUndefined()
    expect((await claim(s)).epoch).toBe(1)
    await s.close()
    const plain = await start()
    expect((await cardOf(plain)).capabilities.extensions).toBeUndefined()
    expect((await rpc(plain, OPS.claim_control, claimParams())).status).toBe(500)
  })
})

describe('operations', () => {
  it('claim, read, renew, intervene, release: one lease, one epoch, new expiries', async () => {
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0, 500)
    const s = await start({ campaignControl: { now: () => t0 } })
    expect((await control(s, OPS.read_control, { campaign_id: CAMPAIGN })).json.result).toEqual({ lease: null })
    const answer = await control(s, OPS.claim_control, claimParams({ request_id: 'claim-0001' }))
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: 'claim-0001', result: { lease: { controller_id: ME, epoch: 1, expires_at: Math.floor(t0 / 1000) + 60 } } })
    const lease = answer.json.result.lease
    expect((await control(s, OPS.read_control, { campaign_id: CAMPAIGN })).json.result).toEqual({ lease })
    s.control.advanceClock(10_000)
    const renewed = (await control(s, OPS.renew_control, mutationParams(1, { ttl_seconds: 60 }))).json.result.lease
    expect(renewed).toEqual({ ...lease, expires_at: lease.expires_at + 10 })
    expect(s.control.lease(CAMPAIGN)).toEqual(renewed)

    const intervention = { action: 'pause', reason: 'operator check' }
    expect((await control(s, OPS.intervene, mutationParams(1, { request_id: 'int-0001', intervention }))).json.result).toEqual({ accepted: true })
    expect(s.control.interventions(CAMPAIGN)).toEqual([{ requestId: 'int-0001', controllerId: ME, epoch: 1, intervention, at: t0 + 10_000 }])

    expect((await control(s, OPS.release_control, mutationParams(1))).json.result).toEqual({ released: true })
    expect((await control(s, OPS.read_control, { campaign_id: CAMPAIGN })).json.result).toEqual({ lease: null })
    expect((await claim(s)).epoch).toBe(2)
    expect(s.control.applied().map((a) => a.operation)).toEqual(['claim_control', 'renew_control', 'intervene', 'release_control', 'claim_control'])
  })

  it('the holder claiming again keeps its epoch; after expiry a claim is a takeover with epoch + 1', async () => {
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0)
    const s = await start({ campaignControl: { now: () => t0 } })
    const first = await claim(s)
    s.control.advanceClock(5_000)
    const again = await claim(s)
    expect(again).toEqual({ ...first, expires_at: first.expires_at + 5 })
    s.control.advanceClock(60_000)
    expect(s.control.lease(CAMPAIGN)).toBeNull()
    expect((await control(s, OPS.read_control, { campaign_id: CAMPAIGN })).json.result.lease).toBeNull()
    expect(await claim(s, { controller_id: 'ctl-other' })).toMatchObject({ controller_id: 'ctl-other', epoch: 2 })
    // Epochs are per campaign.
    expect((await claim(s, { campaign_id: 'camp-2' })).epoch).toBe(1)
  })

  it('claims are serialised: of two at once, exactly one wins', async () => {
    const s = await start({ profile: 'campaign-control' })
    const answers = await Promise.all(['ctl-a', 'ctl-b'].map((who) => control(s, OPS.claim_control, claimParams({ controller_id: who }))))
    expect(answers.filter((a) => a.json.result !== undefined)).toHaveLength(1)
    expect(answers.filter((a) => a.json.error?.data?.reason === 'lease_held')).toHaveLength(1)
  })

  it('submits a non-blocking task at once, binds it to the request id, and reads it back', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    const sent = await rpc(s, 'message/send', submitParams(1, { request_id: 'sub-0001', project: 'proj-a' }), { id: 'sub-0001' })
    const task = sent.json.result
    expect(sent.json.id).toBe('sub-0001')
    expect(task).toMatchObject({ kind: 'task', id: expect.any(String), contextId: expect.any(String), status: { state: 'submitted' } })
    expect(task.metadata).toEqual({ argus_supervisor: { campaign_id: CAMPAIGN, controller_id: ME, controller_epoch: 1, request_id: 'sub-0001', project: 'proj-a' } })
    expect((await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: 'sub-0001' })).json.result).toEqual({ request_id: 'sub-0001', state: 'applied', task_id: task.id })
    expect((await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: 'never-sent' })).json.result).toEqual({ request_id: 'never-sent', state: 'not_applied' })
    expect((await rpc(s, 'tasks/get', { id: task.id })).json.result.status.state).toBe('working')
    // A plain message/send is still just a task.
    expect((await rpc(s, 'message/send', plainParams())).json.result.status.state).toBe('submitted')
  })

  it('refuses a submission that is blocking, names another messageId, or picks a project when selection is off', async () => {
    const s = await start({ campaignControl: { projectSelection: false } })
    await claim(s)
    const blocking = submitParams(1)
    ;(blocking.configuration as Record<string, unknown>).blocking = true
    expect((await rpc(s, 'message/send', blocking)).json.error.code).toBe(-32602)
    const renamed = submitParams(1)
    ;(renamed.message as Record<string, unknown>).messageId = 'something-else'
    expect((await rpc(s, 'message/send', renamed)).json.error.code).toBe(-32602)
    expect((await rpc(s, 'message/send', submitParams(1, { project: 'proj-a' }))).json.error).toMatchObject({ code: -32003, data: { reason: 'policy_violation' } })
    expect(s.control.applied().map((a) => a.operation)).toEqual(['claim_control'])
  })

  it('cancel ignores its metadata for authority: cancels a running task, -32002 when finished, -32001 unknown', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    const task = (await rpc(s, 'message/send', submitParams(1))).json.result
    const metadata = { argus_supervisor: { ...mutationParams(99, { controller_id: 'nobody', request_id: 'cancel-0001' }), constraints: {} } }
    const canceled = await rpc(s, OPS.cancel, { id: task.id, metadata }, { id: 'cancel-0001' })
    expect(canceled.json.result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'canceled' } })
    expect((await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: 'cancel-0001' })).json.result.state).toBe('applied')
    const again = await rpc(s, OPS.cancel, { id: task.id, metadata: { argus_supervisor: { ...metadata.argus_supervisor, request_id: 'cancel-0002' } } }, { id: 'c-2' })
    expect(again.json.error).toEqual({ code: -32002, message: 'Task not cancelable' })
    const unknown = { argus_supervisor: { ...metadata.argus_supervisor, request_id: 'cancel-0003' } }
    expect((await rpc(s, OPS.cancel, { id: 'no-such-task', metadata: unknown })).json.error.code).toBe(-32001)
    expect(s.control.applied().filter((a) => a.operation === 'cancel')).toHaveLength(1)
  })
  it('submissionStates scripts the submitted task, one state per tasks/get', async () => {
    const s = await start({ campaignControl: { submissionStates: ['submitted', 'completed'] } })
    await claim(s)
    const task = (await rpc(s, 'message/send', submitParams(1))).json.result
    expect((await rpc(s, 'tasks/get', { id: task.id })).json.result.status.state).toBe('completed')
    expect((await rpc(s, OPS.cancel, { id: task.id })).json.error.code).toBe(-32002)
  })
})
