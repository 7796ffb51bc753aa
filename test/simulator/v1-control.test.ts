// Campaign control over A2A v1.0: the extension methods keep their snake_case wire but need
// `A2A-Version: 1.0` on a v1.0-only server; a submission is SendMessage with
// returnImmediately; the cancel is CancelTask. Every rule, replay, fault, held request and
// ground-truth log works the same whichever version carried the request.
import { describe, expect, it } from 'vitest'
import type { Simulator } from '../../src/simulator/index.js'
import { rpc, useSimulator } from './helpers.js'
import { CAMPAIGN, CONSTRAINTS, ME, SEED_OPERATIONS as OPS, claimParams, mutationParams, submitParams } from './control-helpers.js'
import { errorInfo, rpc1, submitParams1 } from './v1-helpers.js'

const start = useSimulator()

async function claim1 (s: Simulator, over: Record<string, unknown> = {}): Promise<{ controller_id: string; epoch: number; expires_at: number }> {
  const params = claimParams(over)
  const answer = await rpc1(s, OPS.claim_control, params, { id: params.request_id })
  if (answer.json?.result?.lease === undefined) throw new Error(`claim failed: ${answer.text}`)
  return answer.json.result.lease
}

const status1 = async (s: Simulator, requestId: string) =>
  (await rpc1(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: requestId })).json.result

describe('campaign control on a v1.0-only server', () => {
  it('claim, submit, read back, cancel: the extension wire unchanged, the A2A methods in v1.0 shapes', async () => {
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0)
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control', campaignControl: { now: () => t0 } })
    const claimed = await rpc1(s, OPS.claim_control, claimParams({ request_id: 'claim-v1' }), { id: 'claim-v1' })
    expect(claimed.json).toEqual({ jsonrpc: '2.0', id: 'claim-v1', result: { lease: { controller_id: ME, epoch: 1, expires_at: Math.floor(t0 / 1000) + 60 } } })
    expect((await rpc1(s, OPS.read_control, { campaign_id: CAMPAIGN })).json.result).toEqual({ lease: claimed.json.result.lease })

    const sent = await rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-v1', project: 'proj-a' }), { id: 'sub-v1' })
    const task = sent.json.result.task
    expect(task).toMatchObject({ id: expect.any(String), contextId: expect.any(String), status: { state: 'TASK_STATE_SUBMITTED' } })
    expect(task).not.toHaveProperty('kind')
    expect(task.metadata).toEqual({ argus_supervisor: { campaign_id: CAMPAIGN, controller_id: ME, controller_epoch: 1, request_id: 'sub-v1', project: 'proj-a' } })
    expect(task.history).toEqual([{ messageId: 'sub-v1', role: 'ROLE_USER', parts: [{ text: 'run the next stage' }], metadata: expect.any(Object), contextId: task.contextId, taskId: task.id }])
    expect(await status1(s, 'sub-v1')).toEqual({ request_id: 'sub-v1', state: 'applied', task_id: task.id })
    expect((await rpc1(s, 'GetTask', { id: task.id })).json.result.status.state).toBe('TASK_STATE_WORKING')

    // a replay answers the stored task, in v1.0 shape, and applies nothing
    const replay = await rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-v1', project: 'proj-a' }), { id: 'sub-v1' })
    expect(replay.json.result.task.id).toBe(task.id)

    const metadata = { argus_supervisor: mutationParams(1, { request_id: 'cancel-v1' }) }
    const canceled = await rpc1(s, 'CancelTask', { id: task.id, metadata }, { id: 'cancel-v1' })
    expect(canceled.json.result).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } })
    expect(await status1(s, 'cancel-v1')).toMatchObject({ state: 'applied' })
    const again = await rpc1(s, 'CancelTask', { id: task.id, metadata: { argus_supervisor: mutationParams(1, { request_id: 'cancel-v1b' }) } })
    expect(again.json.error).toEqual({ code: -32002, message: `Task not cancelable: ${task.id}`, data: errorInfo('TASK_NOT_CANCELABLE') })

    expect(s.control.applied().map((a) => [a.operation, a.requestId])).toEqual([['claim_control', 'claim-v1'], ['submit', 'sub-v1'], ['cancel', 'cancel-v1']])
    expect(s.control.requestCounts()).toEqual(new Map([['claim-v1', 1], ['sub-v1', 2], ['cancel-v1', 1], ['cancel-v1b', 1]]))
  })

  it('every extension method without A2A-Version: 1.0 is -32009, applying and counting nothing', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control' })
    for (const version of [null, '0.3']) {
      const answer = await rpc1(s, OPS.claim_control, claimParams({ request_id: 'claim-no-header' }), { version })
      expect(answer.json.error).toMatchObject({ code: -32009, data: errorInfo('VERSION_NOT_SUPPORTED') })
      expect((await rpc(s, 'message/send', submitParams(1))).json.error.code).toBe(-32009)
    }
    expect(s.control.received()).toEqual([])
    expect(s.control.applied()).toEqual([])
  })

  it('the rules hold under 1.0: a blocking submission, a stale epoch, the policy envelope, another holder', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control' })
    await claim1(s)
    const blocking = submitParams1(1)
    ;(blocking.configuration as Record<string, unknown>).returnImmediately = false
    expect((await rpc1(s, 'SendMessage', blocking)).json.error).toEqual({ code: -32602, message: 'a submission must set configuration.returnImmediately to true' })
    const absent = submitParams1(1)
    delete (absent as { configuration?: unknown }).configuration
    expect((await rpc1(s, 'SendMessage', absent)).json.error.code).toBe(-32602)
    expect((await rpc1(s, 'SendMessage', submitParams1(7))).json.error).toMatchObject({ code: -32003, data: { reason: 'stale_epoch' } })
    expect((await rpc1(s, 'SendMessage', submitParams1(1, { constraints: { ...CONSTRAINTS, allow_merge: true } }))).json.error).toMatchObject({ code: -32003, data: { reason: 'policy_violation' } })
    expect((await rpc1(s, OPS.claim_control, claimParams({ controller_id: 'ctl-other' }))).json.error).toMatchObject({ code: -32003, data: { reason: 'lease_held' } })
    expect((await rpc1(s, OPS.intervene, mutationParams(1, { intervention: 'not an object' }))).json.error.code).toBe(-32602)
    expect(s.control.applied().map((a) => a.operation)).toEqual(['claim_control'])
  })

  it('a held SendMessage submission is not applied until delivered, then its client gets the v1.0 answer', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control' })
    await claim1(s)
    s.inject({ rpcMethod: 'SendMessage' }, { kind: 'hold' }, 1)
    const pending = rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-held' }), { id: 'sub-held' })
    for (let i = 0; i < 200 && s.held().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(s.held()).toEqual([{ method: 'SendMessage', id: 'sub-held' }])
    expect(await status1(s, 'sub-held')).toEqual({ request_id: 'sub-held', state: 'not_applied' })
    expect(s.deliverHeld()).toBe(1)
    const answer = await pending
    expect(answer.json.result.task.status.state).toBe('TASK_STATE_SUBMITTED')
    expect(await status1(s, 'sub-held')).toEqual({ request_id: 'sub-held', state: 'applied', task_id: answer.json.result.task.id })
  })

  it('drop after apply: the submission lands though its answer is lost; the retry replays it', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control' })
    await claim1(s)
    s.inject({ rpcMethod: 'SendMessage' }, { kind: 'drop' }, 1)
    await expect(rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-drop' }))).rejects.toThrow()
    const applied = await status1(s, 'sub-drop')
    expect(applied.state).toBe('applied')
    expect((await rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-drop' }))).json.result.task.id).toBe(applied.task_id)
    expect(s.control.applied().filter((a) => a.requestId === 'sub-drop')).toHaveLength(1)
  })

  it('a null cancel removes CancelTask itself; a renamed cancel serves both names', async () => {
    const removed = await start({ protocol: 'v1.0', campaignControl: { operations: { cancel: null } } })
    expect((await rpc1(removed, 'CancelTask', { id: 'task-demo-1' })).json.error).toEqual({ code: -32601, message: 'Invalid method.' })
    await removed.close()
    const renamed = await start({ protocol: 'v1.0', campaignControl: { operations: { cancel: 'campaign/cancel' } } })
    await claim1(renamed)
    const task = (await rpc1(renamed, 'SendMessage', submitParams1(1))).json.result.task
    expect((await rpc1(renamed, 'campaign/cancel', { id: task.id })).json.result.status.state).toBe('TASK_STATE_CANCELED')
  })
})

describe('campaign control on a dual server', () => {
  it('one book and one task store: a v1.0 submission is read, replayed and canceled over v0.3, and the reverse', async () => {
    const s = await start({ protocol: 'dual', profile: 'campaign-control' })
    await claim1(s, { request_id: 'claim-dual' })
    // the lease claimed over v1.0 authorises a v0.3 submission
    const old = (await rpc(s, 'message/send', submitParams(1, { request_id: 'sub-v03' }), { id: 'sub-v03' })).json.result
    expect(old).toMatchObject({ kind: 'task', status: { state: 'submitted' } })
    const oldSeen = (await rpc1(s, 'GetTask', { id: old.id })).json.result
    expect(oldSeen).toMatchObject({ id: old.id, status: { state: 'TASK_STATE_WORKING' }, metadata: old.metadata })
    expect(oldSeen.history[0]).toMatchObject({ messageId: 'sub-v03', role: 'ROLE_USER', parts: [{ text: 'run the next stage' }] })
    // a v1.0 replay of the v0.3 submission answers its task in v1.0 shape
    expect((await rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-v03' }))).json.result.task.id).toBe(old.id)

    const fresh = (await rpc1(s, 'SendMessage', submitParams1(1, { request_id: 'sub-v1' }), { id: 'sub-v1' })).json.result.task
    const freshSeen = (await rpc(s, 'tasks/get', { id: fresh.id })).json.result
    expect(freshSeen).toMatchObject({ kind: 'task', id: fresh.id, status: { state: 'working' } })
    expect((await rpc(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: 'sub-v1' })).json.result).toEqual({ request_id: 'sub-v1', state: 'applied', task_id: fresh.id })

    // cancel by either name on either wire follows the same rules and the same book
    const metadata = { argus_supervisor: mutationParams(1, { request_id: 'cancel-v03' }) }
    expect((await rpc(s, 'tasks/cancel', { id: fresh.id, metadata })).json.result.status.state).toBe('canceled')
    expect((await rpc1(s, 'CancelTask', { id: fresh.id, metadata })).json.result).toMatchObject({ id: fresh.id, status: { state: 'TASK_STATE_CANCELED' } })
    expect((await rpc1(s, 'CancelTask', { id: old.id, metadata: { argus_supervisor: mutationParams(1, { request_id: 'cancel-v1' }) } })).json.result.status.state).toBe('TASK_STATE_CANCELED')
    expect((await rpc(s, 'tasks/cancel', { id: old.id })).json.error).toEqual({ code: -32002, message: 'Task not cancelable' })

    expect(s.control.applied().map((a) => [a.operation, a.requestId])).toEqual([
      ['claim_control', 'claim-dual'], ['submit', 'sub-v03'], ['submit', 'sub-v1'], ['cancel', 'cancel-v03'], ['cancel', 'cancel-v1']
    ])
    expect(s.control.requestCounts().get('sub-v03')).toBe(2)
    expect(s.control.requestCounts().get('cancel-v03')).toBe(2)
  })
})
