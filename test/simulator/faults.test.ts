import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { argusParams, call, plainParams, rpc, useSimulator } from './helpers.js'

const start = useSimulator()
const CARD = '/a2a/.well-known/agent-card.json'

describe('fault injection', () => {
  it('delay waits, then answers normally', async () => {
    const s = await start()
    s.inject('health', { kind: 'delay', ms: 120 }, 1)
    const t0 = Date.now()
    expect((await call(s, 'GET', '/health')).json.status).toBe('ok')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110)
  })

  it('status answers plainly; times counts down; faults are consumed in order', async () => {
    const s = await start()
    s.inject('rpc', { kind: 'status', status: 503 }, 2)
    s.inject('rpc', { kind: 'status', status: 502, body: '<html>bad gateway</html>', contentType: 'text/html' }, 1)
    const first = await rpc(s, 'tasks/get', { id: 'task-demo-1' })
    expect([first.status, first.text, first.headers['content-type']]).toEqual([503, 'Service Unavailable', 'text/plain; charset=utf-8'])
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).status).toBe(503)
    const third = await rpc(s, 'tasks/get', { id: 'task-demo-1' })
    expect([third.status, third.text, third.headers['content-type']]).toEqual([502, '<html>bad gateway</html>', 'text/html'])
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).status).toBe(200)
    expect(s.rpcCalls()).toHaveLength(4)
  })

  it('targets card paths, rpc methods and Argus operations separately', async () => {
    const s = await start()
    s.inject('agent-json', { kind: 'status', status: 500 })
    expect((await call(s, 'GET', CARD)).status).toBe(200)
    expect((await call(s, 'GET', '/a2a/.well-known/agent.json')).status).toBe(500)
    s.clearFaults()
    s.inject('card', { kind: 'status', status: 500 })
    expect((await call(s, 'GET', CARD)).status).toBe(500)
    expect((await call(s, 'GET', '/a2a/.well-known/agent.json')).status).toBe(500)
    s.clearFaults()
    s.inject({ rpcMethod: 'tasks/cancel' }, { kind: 'rpc-error', code: -32601, message: 'Method not found' })
    s.inject({ argusOperation: 'campaign.list' }, { kind: 'rpc-error', code: -32603, message: 'Internal error', data: { retry: false } })
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).json.result).toBeDefined()
    expect((await rpc(s, 'tasks/cancel', { id: 'task-demo-1' }, { id: 'k-1' })).json).toEqual({ jsonrpc: '2.0', id: 'k-1', error: { code: -32601, message: 'Method not found' } })
    expect((await rpc(s, 'message/send', argusParams('supervisor.health'))).json.result).toBeDefined()
    expect((await rpc(s, 'message/send', argusParams('campaign.list'), { id: 7 })).json).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error', data: { retry: false } } })
  })

  it('result plants an answer under the request\'s own id and applies nothing', async () => {
    const s = await start()
    s.inject({ rpcMethod: 'tasks/cancel' }, { kind: 'result', result: { planted: true } }, 1)
    expect((await rpc(s, 'tasks/cancel', { id: 'task-demo-1' }, { id: 'r-9' })).json).toEqual({ jsonrpc: '2.0', id: 'r-9', result: { planted: true } })
    expect(s.getTask('task-demo-1')?.status).not.toMatchObject({ state: 'canceled' })
    s.inject('health', { kind: 'result', result: {} }, 1)
    expect((await call(s, 'GET', '/health')).json.status).toBe('ok')
  })

  it('drop destroys a GET at once, and applies an rpc call before hanging up', async () => {
    const s = await start()
    s.inject('card', { kind: 'drop' }, 1)
    await expect(call(s, 'GET', CARD)).rejects.toThrow()
    const task = (await rpc(s, 'message/send', plainParams())).json.result
    s.inject({ rpcMethod: 'tasks/cancel' }, { kind: 'drop' }, 1)
    await expect(rpc(s, 'tasks/cancel', { id: task.id })).rejects.toThrow()
    expect(s.getTask(task.id)?.status).toMatchObject({ state: 'canceled' })
  })

  it('redirect answers with its status and location', async () => {
    const s = await start()
    s.inject('agent-card', { kind: 'redirect', location: 'https://elsewhere.invalid/card.json' }, 1)
    s.inject('rpc', { kind: 'redirect', status: 308, location: '/a2a/v2/' }, 1)
    const card = await call(s, 'GET', CARD)
    expect([card.status, card.headers.location]).toEqual([302, 'https://elsewhere.invalid/card.json'])
    const post = await rpc(s, 'tasks/get', { id: 'task-demo-1' })
    expect([post.status, post.headers.location]).toEqual([308, '/a2a/v2/'])
  })

  it('oversized sends valid JSON of about the asked size, chunked or with an honest content-length', async () => {
    const s = await start()
    const bytes = 2 * 1024 * 1024
    s.inject('card', { kind: 'oversized', bytes, mode: 'chunked' }, 1)
    const chunked = await call(s, 'GET', CARD)
    expect(chunked.headers['content-length']).toBeUndefined()
    expect(chunked.headers['transfer-encoding']).toBe('chunked')
    expect(Buffer.byteLength(chunked.text)).toBe(bytes)
    expect(chunked.json.name).toBe('OpenOperator')

    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'oversized', bytes, mode: 'content-length' }, 1)
    const sized = await rpc(s, 'tasks/get', { id: 'task-demo-1' }, { id: 'big-1' })
    expect(sized.headers['content-length']).toBe(String(bytes))
    expect(sized.json).toMatchObject({ jsonrpc: '2.0', id: 'big-1', result: { kind: 'task' } })
  })

  it('survives a client that hangs up in the middle of an oversized body', async () => {
    const s = await start()
    s.inject('card', { kind: 'oversized', bytes: 32 * 1024 * 1024, mode: 'chunked' }, 1)
    const res = await request(`${s.url}${CARD}`)
    let seen = 0
    for await (const chunk of res.body) {
      seen += (chunk as Buffer).length
      if (seen > 256 * 1024) break // leaving the loop destroys the body, as a byte cap would
    }
    expect(seen).toBeGreaterThan(256 * 1024)
    expect((await call(s, 'GET', CARD)).json.name).toBe('OpenOperator')
  })

  it('wrong-id answers a real result under another id; invalid-json is a 200 that does not parse', async () => {
    const s = await start()
    s.inject('rpc', { kind: 'wrong-id' }, 1)
    const wrong = await rpc(s, 'tasks/get', { id: 'task-demo-1' }, { id: 'w-1' })
    expect(wrong.json.id).not.toBe('w-1')
    expect(wrong.json.result.id).toBe('task-demo-1')
    s.inject('rpc', { kind: 'invalid-json' }, 1)
    const invalid = await rpc(s, 'tasks/get', { id: 'task-demo-1' })
    expect(invalid.status).toBe(200)
    expect(invalid.headers['content-type']).toMatch(/^application\/json/)
    expect(invalid.json).toBeUndefined()
  })

  it('task-states scripts the next Argus task, one state per poll, and stays on the last', async () => {
    const s = await start()
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['working', 'input-required'] }, 1)
    const sent = (await rpc(s, 'message/send', argusParams('supervisor.health'))).json.result
    expect(sent.status.state).toBe('working')
    for (let i = 0; i < 3; i++) {
      expect((await rpc(s, 'tasks/get', { id: sent.id })).json.result.status.state).toBe('input-required')
    }
    s.inject('rpc', { kind: 'task-states', states: ['submitted', 'failed'], final: { error: 'argus_supervisor_unavailable' } }, 1)
    const failing = (await rpc(s, 'message/send', argusParams('supervisor.status'))).json.result
    const failed = (await rpc(s, 'tasks/get', { id: failing.id })).json.result
    expect(failed.status.state).toBe('failed')
    expect(failed.artifacts[0].parts[0].data).toEqual({ error: 'argus_supervisor_unavailable' })
    s.inject('rpc', { kind: 'task-states', states: ['completed'] }, 1)
    const done = (await rpc(s, 'message/send', argusParams('campaign.list'))).json.result
    expect(done.artifacts[0].parts[0].data.operation).toBe('campaign.list')
  })

  it('reset clears received and faults but keeps tasks', async () => {
    const s = await start()
    const task = (await rpc(s, 'message/send', plainParams())).json.result
    s.inject('health', { kind: 'status', status: 500 })
    s.reset()
    expect(s.received).toHaveLength(0)
    expect((await call(s, 'GET', '/health')).status).toBe(200)
    expect(s.getTask(task.id)).toBeDefined()
    expect(s.received).toHaveLength(1)
  })

  it('close does not wait for a client stuck in an injected delay', async () => {
    const s = await start()
    s.inject('health', { kind: 'delay', ms: 60_000 })
    const stuck = call(s, 'GET', '/health').catch((error: unknown) => error)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const t0 = Date.now()
    await s.close()
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(await stuck).toBeInstanceOf(Error)
  })
})
