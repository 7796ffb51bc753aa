// JSON-RPC under A2A v1.0 as an @a2a-js/sdk 1.x server answers it: version negotiation
// (-32009), SendMessage/GetTask/CancelTask and their errors, v0.3 names refused, the Argus
// reads in v1.0 shapes, and one task store read under both versions on a dual server.
import { describe, expect, it } from 'vitest'
import { DEMO_TASK_ID } from '../../src/simulator/index.js'
import { argusParams, call, plainParams, rpc, useSimulator } from './helpers.js'
import { argusParams1, errorInfo, rpc1, textParams1 } from './v1-helpers.js'

const start = useSimulator()
const STATE = /^TASK_STATE_[A-Z_]+$/

/** No `kind` key anywhere in a v1.0 answer. */
function kindless (value: unknown): boolean {
  if (Array.isArray(value)) return value.every(kindless)
  if (typeof value !== 'object' || value === null) return true
  return !('kind' in value) && Object.values(value).every(kindless)
}

describe('version negotiation', () => {
  it('a v1.0-only server answers -32009 for a missing, 0.3 or 2.0 A2A-Version, naming the version as sent', async () => {
    const s = await start({ protocol: 'v1.0' })
    for (const [version, named] of [[null, '0.3'], ['0.3', '0.3'], ['2.0', '2.0']] as const) {
      const answer = await rpc1(s, 'GetTask', { id: DEMO_TASK_ID }, { id: '1', version })
      expect(answer.status).toBe(200)
      expect(answer.json).toEqual({
        jsonrpc: '2.0',
        id: '1',
        error: { code: -32009, message: `The requested A2A protocol version '${named}' is not supported. Supported versions: 1.0`, data: errorInfo('VERSION_NOT_SUPPORTED') }
      })
    }
    // the v0.3 method under no header: the version is refused before the method is looked at
    expect((await rpc(s, 'tasks/get', { id: DEMO_TASK_ID })).json.error.code).toBe(-32009)
    // bad JSON is refused before the version
    const bad = await call(s, 'POST', '/a2a/', { body: '{', headers: { 'content-type': 'application/json' } })
    expect(bad.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload.' } })
  })

  it('a dual server keeps today\'s v0.3 behaviour without a header or with 0.3, serves v1.0 with 1.0, refuses the rest', async () => {
    const s = await start({ protocol: 'dual' })
    // the openoperator profile's v0.3 answers: no ErrorInfo, FastA2A's plain 500 for a refused request
    expect((await rpc(s, 'tasks/get', { id: 'nope' }, { id: 'k' })).json.error).toEqual({ code: -32001, message: 'Task not found' })
    expect((await rpc(s, 'tasks/get', {})).status).toBe(500)
    expect((await rpc1(s, 'tasks/get', { id: DEMO_TASK_ID }, { version: '0.3' })).json.result.status.state).toBe('completed')
    expect((await rpc1(s, 'GetTask', { id: DEMO_TASK_ID })).json.result.status.state).toBe('TASK_STATE_COMPLETED')
    const refused = await rpc1(s, 'GetTask', { id: DEMO_TASK_ID }, { id: '1', version: '0.5' })
    expect(refused.json.error).toEqual({ code: -32009, message: "The requested A2A protocol version '0.5' is not supported. Supported versions: 1.0, 0.3", data: errorInfo('VERSION_NOT_SUPPORTED') })
  })

  it('v0.3 method names under 1.0 are "Invalid method.", as is anything unknown', async () => {
    const s = await start({ protocol: 'dual', profile: 'a2a-js' })
    for (const method of ['message/send', 'tasks/get', 'tasks/cancel', 'nope']) {
      expect((await rpc1(s, method, { id: DEMO_TASK_ID }, { id: 'x' })).json).toEqual({ jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Invalid method.' } })
    }
    // and v1.0 names under v0.3 are the profile's own unknown method
    expect((await rpc(s, 'GetTask', { id: DEMO_TASK_ID }, { id: 'y' })).json.error).toEqual({ code: -32601, message: 'Method not found: GetTask' })
  })
})

describe('SendMessage', () => {
  it('blocks by default: the plain message answers {task} finished, in v1.0 shapes with no kind', async () => {
    const s = await start({ protocol: 'v1.0' })
    const answer = await rpc1(s, 'SendMessage', textParams1('hi'), { id: 's-1' })
    expect(answer.json.id).toBe('s-1')
    expect(Object.keys(answer.json.result)).toEqual(['task'])
    const task = answer.json.result.task
    expect(kindless(task)).toBe(true)
    expect(task).toMatchObject({ id: expect.any(String), contextId: expect.any(String), status: { state: 'TASK_STATE_COMPLETED' } })
    expect(task.status.timestamp).toMatch(/Z$/)
    expect(task.artifacts).toEqual([{ artifactId: expect.any(String), name: 'result', parts: [{ data: { status: 'ok' } }] }])
    expect(task.history).toEqual([{ messageId: 'm-hi', role: 'ROLE_USER', parts: [{ text: 'hi' }], contextId: task.contextId, taskId: task.id }])
  })

  it('returnImmediately answers the task in its first state; GetTask then walks it', async () => {
    const s = await start({ protocol: 'v1.0', taskSteps: 2 })
    const task = (await rpc1(s, 'SendMessage', textParams1('later', true))).json.result.task
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED')
    expect(task).not.toHaveProperty('artifacts')
    const states = []
    for (let i = 0; i < 2; i++) states.push((await rpc1(s, 'GetTask', { id: task.id, historyLength: 0 })).json.result.status.state)
    expect(states).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'])
  })

  it('takes url and raw parts, and honours configuration.historyLength', async () => {
    const s = await start({ protocol: 'v1.0' })
    const parts = [{ url: 'https://example.invalid/r.json', mediaType: 'application/json', filename: 'r.json' }, { raw: 'aGk=', mediaType: 'text/plain' }]
    const params = { message: { messageId: 'm-files', role: 'ROLE_USER', parts } }
    const task = (await rpc1(s, 'SendMessage', params)).json.result.task
    expect(task.history[0].parts).toEqual(parts)
    const trimmed = (await rpc1(s, 'SendMessage', { ...textParams1('x'), configuration: { historyLength: 0 } })).json.result.task
    expect(trimmed).not.toHaveProperty('history')
  })

  it('refuses bad params with -32602 and an INVALID_PARAMS ErrorInfo: v0.3 kinds and roles, snake_case, no messageId', async () => {
    const s = await start({ protocol: 'v1.0' })
    const bad = [
      plainParams('v03'),
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ kind: 'text', text: 'hi' }] } },
      { message: { messageId: 'm', role: 'user', parts: [{ text: 'hi' }] } },
      { message: { message_id: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      { message: { role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi', data: {} }] } },
      {}
    ]
    for (const params of bad) {
      const error = (await rpc1(s, 'SendMessage', params)).json.error
      expect(error).toMatchObject({ code: -32602, data: errorInfo('INVALID_PARAMS') })
    }
    expect((await rpc1(s, 'SendMessage', [])).json.error).toEqual({ code: -32602, message: 'Invalid method parameters.', data: errorInfo('INVALID_PARAMS') })
    const framing = await call(s, 'POST', '/a2a/', { body: JSON.stringify({ jsonrpc: '1.0', id: 'f', method: 'GetTask', params: {} }), headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' } })
    expect(framing.json).toEqual({ jsonrpc: '2.0', id: 'f', error: { code: -32602, message: 'Invalid JSON-RPC Request.', data: errorInfo('INVALID_PARAMS') } })
  })
})

describe('GetTask and CancelTask', () => {
  it('GetTask answers the task itself, not wrapped; historyLength 0 leaves history out; a file part has url/mediaType/filename', async () => {
    const s = await start({ protocol: 'v1.0' })
    const task = (await rpc1(s, 'GetTask', { id: DEMO_TASK_ID, historyLength: 0 })).json.result
    expect(task).toMatchObject({ id: DEMO_TASK_ID, contextId: 'ctx-demo-1', status: { state: 'TASK_STATE_COMPLETED' } })
    expect(task).not.toHaveProperty('history')
    expect(kindless(task)).toBe(true)
    expect(task.artifacts[1].parts).toEqual([{ url: `${s.url}/artifacts/task-demo-1/report.json`, filename: 'report.json', mediaType: 'application/json' }])
    const full = (await rpc1(s, 'GetTask', { id: DEMO_TASK_ID })).json.result
    expect(full.history.map((m: { role: string }) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT', 'ROLE_AGENT'])
    expect((await rpc1(s, 'GetTask', { id: DEMO_TASK_ID, historyLength: 1 })).json.result.history).toHaveLength(1)
    expect((await rpc1(s, 'GetTask', { id: 'nope' }, { id: 'g' })).json).toEqual({
      jsonrpc: '2.0', id: 'g', error: { code: -32001, message: 'Task not found: nope', data: errorInfo('TASK_NOT_FOUND') }
    })
    expect((await rpc1(s, 'GetTask', { historyLength: 0 })).json.error.code).toBe(-32602)
    expect((await rpc1(s, 'GetTask', { id: '' })).json.error).toEqual({ code: -32602, message: 'Task ID is required', data: errorInfo('INVALID_PARAMS') })
  })

  it('CancelTask cancels a running task and answers it; a finished task is -32002 TASK_NOT_CANCELABLE; unknown -32001', async () => {
    const s = await start({ protocol: 'v1.0' })
    const task = (await rpc1(s, 'SendMessage', textParams1('run', true))).json.result.task
    const canceled = (await rpc1(s, 'CancelTask', { id: task.id, metadata: { why: 'test' } })).json.result
    expect(canceled).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } })
    expect(kindless(canceled)).toBe(true)
    expect((await rpc1(s, 'CancelTask', { id: DEMO_TASK_ID }, { id: 'c' })).json).toEqual({
      jsonrpc: '2.0', id: 'c', error: { code: -32002, message: `Task not cancelable: ${DEMO_TASK_ID}`, data: errorInfo('TASK_NOT_CANCELABLE') }
    })
    expect((await rpc1(s, 'CancelTask', { id: 'nope' })).json.error).toEqual({ code: -32001, message: 'Task not found: nope', data: errorInfo('TASK_NOT_FOUND') })
  })

  it('faults and the task-states script work the same under 1.0 (v1.0 state names accepted)', async () => {
    const s = await start({ protocol: 'v1.0' })
    s.inject({ rpcMethod: 'GetTask' }, { kind: 'rpc-error', code: -32603, message: 'boom' }, 1)
    expect((await rpc1(s, 'GetTask', { id: DEMO_TASK_ID }, { id: 'f' })).json).toEqual({ jsonrpc: '2.0', id: 'f', error: { code: -32603, message: 'boom' } })
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['TASK_STATE_WORKING', 'TASK_STATE_FAILED'], final: { error: 'argus_supervisor_unavailable' } })
    const task = (await rpc1(s, 'SendMessage', argusParams1('supervisor.health', 'r-1', true))).json.result.task
    expect(task.status.state).toBe('TASK_STATE_WORKING')
    const failed = (await rpc1(s, 'GetTask', { id: task.id })).json.result
    expect(failed.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ data: { error: 'argus_supervisor_unavailable' } }] } })
  })
})

describe('Argus reads over v1.0', () => {
  it('serves the three reads from the seed envelope in v1.0 shape: the payload in an artifact {data} part', async () => {
    const s = await start({ protocol: 'v1.0' })
    const read = async (operation: string, id: string) => (await rpc1(s, 'SendMessage', argusParams1(operation, id))).json.result.task
    const health = await read('supervisor.health', 'r-h')
    expect(health.status.state).toBe('TASK_STATE_COMPLETED')
    expect(health.artifacts[0].parts).toEqual([{ data: expect.objectContaining({ ok: true, operation: 'supervisor.health', requestId: 'r-h' }) }])
    expect((await read('supervisor.status', 'r-s')).artifacts[0].parts[0].data).toEqual({ operation: 'supervisor.status', requestId: 'r-s', supervisor: { state: 'running', campaigns: 2, blocked: 0 } })
    expect((await read('campaign.list', 'r-l')).artifacts[0].parts[0].data.campaigns).toHaveLength(2)
    expect(s.rpcCalls().map((c) => c.method)).toEqual(['SendMessage', 'SendMessage', 'SendMessage'])
  })

  it('answers the same safe error codes as today: envelope, disabled, unsupported, and injected placements', async () => {
    const s = await start({ protocol: 'v1.0', argusEnabled: false })
    expect((await rpc1(s, 'SendMessage', argusParams1('supervisor.health'))).json.error).toEqual({ code: -32000, message: 'argus_supervisor_disabled', data: { code: 'argus_supervisor_disabled' } })
    await s.close()
    const on = await start({ protocol: 'v1.0', profile: 'a2a-js' })
    const noExtension = argusParams1('supervisor.health')
    delete (noExtension.message as Record<string, unknown>).extensions
    expect((await rpc1(on, 'SendMessage', noExtension)).json.error).toEqual({ code: -32602, message: 'invalid_argus_envelope', data: { code: 'invalid_argus_envelope' } })
    expect((await rpc1(on, 'SendMessage', argusParams1('qualify.nonexistent'))).json.error.message).toBe('unsupported_argus_operation')
    on.inject({ argusOperation: 'supervisor.status' }, { kind: 'argus-error', code: 'argus_supervisor_unavailable', placement: 'failed-task' }, 1)
    const failed = (await rpc1(on, 'SendMessage', argusParams1('supervisor.status'))).json.result.task
    expect(failed.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { parts: [{ data: { error: 'argus_supervisor_unavailable' } }] } })
    on.inject({ argusOperation: 'supervisor.status' }, { kind: 'argus-error', code: 'argus_supervisor_unavailable', placement: 'payload-object' }, 1)
    const payload = (await rpc1(on, 'SendMessage', argusParams1('supervisor.status'))).json.result.task
    expect(payload.artifacts[0].parts).toEqual([{ data: { error: { code: 'argus_supervisor_unavailable' } } }])
    // the a2a-js profile's interop metadata rides along, in v1.0 shape
    expect(payload.metadata.argus_supervisor).toMatchObject({ run_id: 'run-sdk' })
  })
})

describe('one task store, two wires', () => {
  it('on a dual server a task made under one version reads under the other', async () => {
    const s = await start({ protocol: 'dual', profile: 'a2a-js' })
    const v03 = (await rpc(s, 'message/send', argusParams('supervisor.health', 'r-old'))).json.result
    expect(v03).toMatchObject({ kind: 'task', status: { state: 'completed' } })
    const seen1 = (await rpc1(s, 'GetTask', { id: v03.id })).json.result
    expect(seen1).toMatchObject({ id: v03.id, contextId: v03.contextId, status: { state: 'TASK_STATE_COMPLETED' } })
    expect(seen1.artifacts[0].parts[0].data).toEqual(v03.artifacts[0].parts[0].data)

    const v1 = (await rpc1(s, 'SendMessage', textParams1('new', true))).json.result.task
    const seen03 = (await rpc(s, 'tasks/get', { id: v1.id })).json.result
    expect(seen03).toMatchObject({ kind: 'task', id: v1.id, status: { state: 'working' } })
    expect(seen03.history[0]).toMatchObject({ kind: 'message', role: 'user', messageId: 'm-new', parts: [{ kind: 'text', text: 'new' }] })
    expect((await rpc(s, 'tasks/cancel', { id: v1.id })).json.result.status.state).toBe('canceled')
    expect((await rpc1(s, 'GetTask', { id: v1.id })).json.result.status.state).toBe('TASK_STATE_CANCELED')
    expect(STATE.test(seen1.status.state)).toBe(true)
  })
})
