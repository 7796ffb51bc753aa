// Late arrivals on the campaign-control remote: a `hold` fault parks a request before the
// handler (unapplied, uncounted, its connection open) until the test delivers it, when it runs
// as if it had just arrived, or drops it. A delayed call whose client gave up still lands.
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import type { Simulator } from '../../src/simulator/index.js'
import { call, rpc, useSimulator } from './helpers.js'
import { CAMPAIGN, ME, SEED_OPERATIONS as OPS, claim, control, mutationParams, submitParams } from './control-helpers.js'

const start = useSimulator()
const status = async (s: Simulator, requestId: string) =>
  (await control(s, OPS.request_status, { campaign_id: CAMPAIGN, request_id: requestId })).json.result

async function waitFor (check: () => boolean, what: string, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A JSON-RPC call whose client gives up (its own timeout) once the remote has it: the socket is closed. */
async function callThenGiveUp (s: Simulator, method: string, params: Record<string, unknown>, arrived: () => boolean): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: params.request_id, method, params })
  const abort = new AbortController()
  const sent = request(`${s.url}/a2a/`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: abort.signal })
  sent.catch(() => undefined)
  await waitFor(arrived, `${method} to reach the remote`)
  abort.abort()
  await expect(sent).rejects.toThrow()
}

describe('held requests (hold fault)', () => {
  it('a held submission is not_applied until delivered, then applied with its task, and its client gets the answer', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: 'message/send' }, { kind: 'hold' }, 1)
    const pending = rpc(s, 'message/send', submitParams(1, { request_id: 'sub-held' }), { id: 'sub-held' })
    await waitFor(() => s.held().length === 1, 'the submission to be held')
    expect(s.held()).toEqual([{ method: 'message/send', id: 'sub-held' }])

    expect(await status(s, 'sub-held')).toEqual({ request_id: 'sub-held', state: 'not_applied' })
    expect(s.control.requestCounts().has('sub-held')).toBe(false)
    expect(s.control.applied().map((a) => a.operation)).toEqual(['claim_control'])

    expect(s.deliverHeld()).toBe(1)
    expect(s.held()).toEqual([])
    const applied = await status(s, 'sub-held')
    expect(applied).toEqual({ request_id: 'sub-held', state: 'applied', task_id: expect.any(String) })
    const answer = await pending
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 'sub-held', result: { kind: 'task', id: applied.task_id } })
    expect(s.control.requestCounts().get('sub-held')).toBe(1)
  })

  it('a held intervention whose client hung up stays held, and still applies when delivered', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'hold' }, 1)
    await callThenGiveUp(s, OPS.intervene, mutationParams(1, { request_id: 'int-held', intervention: { action: 'pause' } }), () => s.held().length === 1)
    expect(s.held()).toEqual([{ method: OPS.intervene, id: 'int-held' }])
    expect((await status(s, 'int-held')).state).toBe('not_applied')

    expect(s.deliverHeld()).toBe(1)
    expect(s.control.interventions(CAMPAIGN).map((i) => i.requestId)).toEqual(['int-held'])
    expect((await status(s, 'int-held')).state).toBe('applied')
    // The discarded answer left the server serving.
    expect((await call(s, 'GET', '/health')).status).toBe(200)
  })

  it('delivery runs the request as it arrives now: after a takeover it is refused, and counted', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'hold' }, 2)
    const first = control(s, OPS.intervene, mutationParams(1, { request_id: 'int-a', intervention: {} }))
    await waitFor(() => s.held().length === 1, 'the first hold')
    const second = control(s, OPS.intervene, mutationParams(1, { request_id: 'int-b', intervention: {} }))
    await waitFor(() => s.held().length === 2, 'the second hold')
    expect(s.held().map((r) => r.id)).toEqual(['int-a', 'int-b'])

    expect(s.deliverHeld((r) => r.id === 'int-b')).toBe(1)
    expect((await second).json.result).toEqual({ accepted: true })
    s.control.setLease(CAMPAIGN, { controller_id: 'ctl-other', epoch: 2, expires_at: Math.floor(s.control.now() / 1000) + 600 })
    expect(s.deliverHeld()).toBe(1)
    expect((await first).json.error).toMatchObject({ code: -32003, data: { reason: 'lease_held' } })
    expect(s.control.interventions(CAMPAIGN).map((i) => i.requestId)).toEqual(['int-b'])
    expect(s.control.requestCounts().get('int-a')).toBe(1)
    expect(s.deliverHeld()).toBe(0)
  })

  it('dropHeld loses the request: never applied nor counted, and its connection is reset', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject('rpc', { kind: 'hold' }, 2)
    const lost = rpc(s, 'message/send', submitParams(1, { request_id: 'sub-lost' }), { id: 'sub-lost' })
    const kept = rpc(s, 'tasks/get', { id: 'task-demo-1' }, { id: 'get-kept' })
    await waitFor(() => s.held().length === 2, 'both holds')
    expect(s.dropHeld((r) => r.method === 'message/send')).toBe(1)
    await expect(lost).rejects.toThrow()
    expect(s.held()).toEqual([{ method: 'tasks/get', id: 'get-kept' }])
    expect((await status(s, 'sub-lost')).state).toBe('not_applied')
    expect(s.control.requestCounts().has('sub-lost')).toBe(false)
    expect(s.deliverHeld()).toBe(1)
    expect((await kept).json.result.id).toBe('task-demo-1')
  })

  it('close drops held requests instead of waiting for them', async () => {
    const s = await start({ profile: 'campaign-control' })
    s.inject('rpc', { kind: 'hold' })
    const pending = rpc(s, 'tasks/get', { id: 'task-demo-1' })
    await waitFor(() => s.held().length === 1, 'the hold')
    const t0 = Date.now()
    await s.close()
    expect(Date.now() - t0).toBeLessThan(1_000)
    await expect(pending).rejects.toThrow()
    expect(s.held()).toEqual([])
  })

  it('hold is for POST /a2a/ only: a GET route never takes it', async () => {
    const s = await start()
    s.inject('card', { kind: 'hold' })
    s.inject('health', { kind: 'hold' })
    expect((await call(s, 'GET', '/a2a/.well-known/agent-card.json')).status).toBe(200)
    expect((await call(s, 'GET', '/health')).status).toBe(200)
    expect(s.held()).toEqual([])
  })
})

describe('delayed calls whose client gave up', () => {
  it('the delayed intervention is applied after the client timed out and left', async () => {
    const s = await start({ profile: 'campaign-control' })
    await claim(s)
    s.inject({ rpcMethod: OPS.intervene }, { kind: 'delay', ms: 300 }, 1)
    await callThenGiveUp(s, OPS.intervene, mutationParams(1, { request_id: 'int-late', intervention: {} }), () => s.rpcCalls().some((c) => c.id === 'int-late'))
    expect(s.control.interventions(CAMPAIGN)).toEqual([])
    await waitFor(() => s.control.interventions(CAMPAIGN).length === 1, 'the late intervention')
    expect(s.control.applied().at(-1)).toMatchObject({ operation: 'intervene', requestId: 'int-late', controllerId: ME, epoch: 1, leaseLive: true })
    expect((await status(s, 'int-late')).state).toBe('applied')
  })
})
