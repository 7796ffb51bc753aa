import { describe, expect, it } from 'vitest'
import type { ArgusErrorCode, Simulator } from '../../src/simulator/index.js'
import { URN, argusParams, fixtureJson, keys, pollTask, rpc, useSimulator } from './helpers.js'

const start = useSimulator()

describe('Argus reads, FastA2A lifecycle', () => {
  it('fasta2a: answers submitted at once, shaped like the FastA2A fixture, then completes through tasks/get', async () => {
    const s = await start({ profile: 'fasta2a' })
    const sent = await rpc(s, 'message/send', argusParams('supervisor.health', 'argus-health-1'), { id: 'argus-health-1' })
    const real = fixtureJson('fasta2a-0.5/response-message-send-submitted.json')
    expect(keys(sent.json)).toEqual(keys(real))
    expect(keys(sent.json.result)).toEqual(keys(real.result))
    expect(keys(sent.json.result.status)).toEqual(keys(real.result.status))
    expect(sent.json.result.status.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/)
    expect(sent.json.result.history[0]).toMatchObject({ ...real.result.history[0], contextId: sent.json.result.contextId, taskId: sent.json.result.id })

    const states = await pollTask(s, sent.json.result.id)
    expect(states.map((t) => t.status.state)).toEqual(['working', 'completed'])
    const done = states[1]
    const completed = fixtureJson('fasta2a-0.5/response-tasks-get-completed.json').result
    expect(keys(done.artifacts[0])).toEqual(keys(completed.artifacts[0]))
    // FastA2A treats historyLength 0 as "no limit".
    expect(done.history).toHaveLength(1)
    expect(done.artifacts[0].parts[0]).toMatchObject({ kind: 'data', data: { ok: true, operation: 'supervisor.health', requestId: 'argus-health-1', backend: 'simulated' } })
  })

  it('openoperator: answers a read completed at once, unless taskSteps asks for polls', async () => {
    const s = await start()
    const done = (await rpc(s, 'message/send', argusParams('supervisor.health', 'oo-1'))).json.result
    expect(done.status.state).toBe('completed')
    expect(done.artifacts[0].parts[0].data).toMatchObject({ ok: true, requestId: 'oo-1' })
    expect(s.rpcCalls().map((c) => c.method)).toEqual(['message/send'])
    await s.close()
    const polled = await start({ taskSteps: 1 })
    const sent = (await rpc(polled, 'message/send', argusParams('supervisor.health'))).json.result
    expect(sent.status.state).toBe('submitted')
    expect((await rpc(polled, 'tasks/get', { id: sent.id })).json.result.status.state).toBe('completed')
  })

  it('serves the three read payloads, echoing requestId (also for a legacy request_id)', async () => {
    const s = await start({ taskSteps: 0 })
    const read = async (params: Record<string, unknown>) => (await rpc(s, 'message/send', params)).json.result.artifacts[0].parts[0].data
    expect(await read(argusParams('supervisor.status', 'r-2'))).toEqual({ operation: 'supervisor.status', requestId: 'r-2', supervisor: { state: 'running', campaigns: 2, blocked: 0 } })
    const list = await read(argusParams('campaign.list', 'r-3'))
    expect(list.requestId).toBe('r-3')
    expect(list.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual(['camp-1', 'camp-2'])
    const legacy = argusParams('supervisor.health', 'r-4')
    ;(legacy.message as { metadata: Record<string, unknown> }).metadata = { [URN]: { operation: 'supervisor.health', request_id: 'r-4' } }
    expect(await read(legacy)).toMatchObject({ ok: true, requestId: 'r-4' })
  })

  it('a2a-js honours blocking and answers the completed task shaped like its fixture', async () => {
    const s = await start({ profile: 'a2a-js' })
    const sent = await rpc(s, 'message/send', argusParams('supervisor.health', 'argus-health-1'), { id: 'argus-health-1' })
    const real = fixtureJson('a2a-js-sdk-1.3.0/response-message-send-argus-health.json').result
    const task = sent.json.result
    expect(keys(task)).toEqual(keys(real))
    expect(keys(task.status)).toEqual(keys(real.status))
    expect(keys(task.status.message)).toEqual(keys(real.status.message))
    expect(keys(task.artifacts[0])).toEqual(keys(real.artifacts[0]))
    expect(keys(task.metadata.argus_supervisor)).toEqual(keys(real.metadata.argus_supervisor))
    expect(task.status.state).toBe('completed')
    expect(task.status.message.parts[0].data).toMatchObject({ ok: true, requestId: 'argus-health-1' })
    expect(task.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent'])
    // Without blocking it walks the lifecycle like FastA2A.
    const lazy = await rpc(s, 'message/send', argusParams('supervisor.health', 'r-5', false))
    expect(lazy.json.result.status.state).toBe('submitted')
  })
})

describe('Argus errors', () => {
  const send = (s: Simulator, op: string, mutate: (p: { message: Record<string, unknown> }) => void = () => undefined) => {
    const params = argusParams(op) as { message: Record<string, unknown> }
    mutate(params)
    return rpc(s, 'message/send', params, { id: 'e-1' })
  }

  it('refuses malformed envelopes with invalid_argus_envelope (-32602, data.code)', async () => {
    const s = await start()
    const broken: Array<(p: { message: Record<string, unknown> }) => void> = [
      (p) => { delete p.message.extensions },
      (p) => { p.message.parts = [{ kind: 'data', data: {} }] },
      (p) => { p.message.parts = [{ kind: 'text', text: 'health please' }] },
      (p) => { p.message.metadata = { [URN]: { operation: 'supervisor.health' } } },
      (p) => { p.message.metadata = { [URN]: 'supervisor.health' } }
    ]
    for (const mutate of broken) {
      const answer = await send(s, 'supervisor.health', mutate)
      expect(answer.json).toEqual({ jsonrpc: '2.0', id: 'e-1', error: { code: -32602, message: 'invalid_argus_envelope', data: { code: 'invalid_argus_envelope' } } })
    }
  })

  it('answers unsupported operations and disabled mode with their codes', async () => {
    const s = await start()
    for (const op of ['qualify.nonexistent', 'campaign.claim', 'campaign.create']) {
      expect((await send(s, op)).json.error).toEqual({ code: -32000, message: 'unsupported_argus_operation', data: { code: 'unsupported_argus_operation' } })
    }
    await s.close()
    const off = await start({ argusEnabled: false })
    expect((await send(off, 'supervisor.health')).json.error.data).toEqual({ code: 'argus_supervisor_disabled' })
  })

  it('delivers an injected code in each placement', async () => {
    const s = await start({ taskSteps: 1 })
    const code: ArgusErrorCode = 'argus_supervisor_unavailable'
    s.inject({ argusOperation: 'supervisor.status' }, { kind: 'argus-error', code, placement: 'rpc-data' }, 1)
    const data = (await send(s, 'supervisor.status')).json.error
    expect(data.data).toEqual({ code })
    expect(data.message).not.toContain(code)

    s.inject('rpc', { kind: 'argus-error', code, placement: 'rpc-message' }, 1)
    expect((await send(s, 'supervisor.status')).json.error).toEqual({ code: -32000, message: code })

    const inTask = async (placement: 'payload-string' | 'payload-object' | 'failed-task') => {
      s.inject('rpc', { kind: 'argus-error', code, placement }, 1)
      const sent = (await send(s, 'supervisor.status')).json
      expect(sent.error).toBeUndefined()
      expect(sent.result.status.state).toBe('submitted')
      const [task] = await pollTask(s, sent.result.id)
      return task
    }
    expect((await inTask('payload-string')).artifacts[0].parts[0].data).toEqual({ error: code })
    expect((await inTask('payload-object')).artifacts[0].parts[0].data).toEqual({ error: { code } })
    const failed = await inTask('failed-task')
    expect(failed.status.state).toBe('failed')
    expect(failed.status.message.parts[0].data).toEqual({ error: code })

    // Consumed: the next read succeeds.
    expect((await send(s, 'supervisor.status')).json.result.status.state).toBe('submitted')
  })

  it('never lets a tasks/get consume an Argus-only fault', async () => {
    const s = await start()
    s.inject('rpc', { kind: 'argus-error', code: 'argus_supervisor_unavailable', placement: 'rpc-message' }, 1)
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).json.result.id).toBe('task-demo-1')
    expect((await send(s, 'supervisor.health')).json.error.message).toBe('argus_supervisor_unavailable')
  })
})
