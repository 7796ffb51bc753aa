import { describe, expect, it } from 'vitest'
import { DEMO_FILE_PATH } from '../../src/simulator/index.js'
import { fixtureJson, keys, plainParams, pollTask, rpc, useSimulator } from './helpers.js'

const start = useSimulator()

describe('tasks', () => {
  it('seeds task-demo-1 with campaign metadata, history, a data and a file artifact', async () => {
    const s = await start()
    const task = (await rpc(s, 'tasks/get', { id: 'task-demo-1', historyLength: 0 })).json.result
    expect(task.status.state).toBe('completed')
    expect(keys(task.metadata.argus_supervisor)).toEqual(keys(fixtureJson('fasta2a-0.5/response-tasks-get-completed.json').result.metadata.argus_supervisor))
    expect(task.metadata.metrics).toBeDefined()
    expect(task.metadata.stdout).toEqual(expect.any(String))
    expect(task.history.length).toBeGreaterThan(1)
    const parts = task.artifacts.flatMap((a: { parts: unknown[] }) => a.parts)
    expect(parts.map((p: { kind: string }) => p.kind)).toEqual(['data', 'file'])
    expect(parts[1].file).toEqual({ name: 'report.json', mimeType: 'application/json', uri: `${s.url}${DEMO_FILE_PATH}` })
    expect(s.getTask('task-demo-1')).toEqual(task)
  })

  it('walks taskSteps polls from submitted to completed and then stays', async () => {
    const s = await start({ taskSteps: 3 })
    const sent = (await rpc(s, 'message/send', plainParams())).json.result
    expect(sent.status.state).toBe('submitted')
    const states = await pollTask(s, sent.id)
    expect(states.map((t) => t.status.state)).toEqual(['working', 'working', 'completed'])
    expect((await rpc(s, 'tasks/get', { id: sent.id })).json.result.status.state).toBe('completed')
  })

  it('copies message.metadata.argus_supervisor onto a submitted task', async () => {
    const s = await start()
    const supervisor = { campaign_id: 'camp-1', controller_id: 'ctl-1', controller_epoch: 3, request_id: 'req-sub-1' }
    const sent = (await rpc(s, 'message/send', plainParams('go', { argus_supervisor: supervisor }))).json.result
    expect(sent.metadata).toEqual({ argus_supervisor: supervisor })
    expect(s.rpcCalls()[0]?.params.message.metadata.argus_supervisor).toEqual(supervisor)
  })

  it('limits history by historyLength: FastA2A treats 0 as no limit, a2a-js omits history', async () => {
    const s = await start()
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1', historyLength: 0 })).json.result.history).toHaveLength(3)
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1', historyLength: 1 })).json.result.history).toHaveLength(1)
    await s.close()
    const js = await start({ profile: 'a2a-js' })
    const none = (await rpc(js, 'tasks/get', { id: 'task-demo-1', historyLength: 0 }, { id: 'get-1' })).json
    expect(none.result).not.toHaveProperty('history')
    expect(keys(none)).toEqual(keys(fixtureJson('a2a-js-sdk-1.3.0/response-tasks-get-historyLength-0.json')))
    expect((await rpc(js, 'tasks/get', { id: 'task-demo-1' })).json.result.history).toHaveLength(3)
  })

  it('cancels a running task, refuses a finished one with -32002, unknown with -32001', async () => {
    const s = await start()
    const sent = (await rpc(s, 'message/send', plainParams())).json.result
    const canceled = await rpc(s, 'tasks/cancel', { id: sent.id, metadata: { argus_supervisor: { request_id: 'x' } } })
    expect(canceled.json.result.status.state).toBe('canceled')
    expect((await rpc(s, 'tasks/get', { id: sent.id })).json.result.status.state).toBe('canceled')
    const again = await rpc(s, 'tasks/cancel', { id: sent.id }, { id: 'c-1' })
    expect(again.json).toEqual({ jsonrpc: '2.0', id: 'c-1', error: { code: -32002, message: 'Task not cancelable' } })
    expect((await rpc(s, 'tasks/cancel', { id: 'nope' })).json.error.code).toBe(-32001)
  })

  it('a2a-js: -32002 names the task as its fixture does; fasta2a hands back the finished task unchanged', async () => {
    const js = await start({ profile: 'a2a-js' })
    const refused = (await rpc(js, 'tasks/cancel', { id: 'task-demo-1' }, { id: 'c-1' })).json
    expect(keys(refused.error)).toEqual(keys(fixtureJson('a2a-js-sdk-1.3.0/response-cancel-completed-task.json').error))
    expect(refused.error).toEqual({ code: -32002, message: 'Task not cancelable: task-demo-1' })
    await js.close()
    const fasta2a = await start({ profile: 'fasta2a' })
    expect((await rpc(fasta2a, 'tasks/cancel', { id: 'task-demo-1' })).json.result.status.state).toBe('completed')
  })

  it('stores arbitrary tasks with addTask and serves them as given', async () => {
    const s = await start()
    const task = { id: 'custom-1', contextId: 'ctx', kind: 'task', status: { state: 'input-required' }, extra: { deep: [1, 2] } }
    s.addTask(task)
    task.extra.deep.push(3) // the store keeps its own copy
    expect((await rpc(s, 'tasks/get', { id: 'custom-1' })).json.result).toEqual({ ...task, extra: { deep: [1, 2] } })
    expect(() => s.addTask({ kind: 'task' })).toThrow()
    s.reset()
    expect(s.getTask('custom-1')).toBeDefined()
  })
})
