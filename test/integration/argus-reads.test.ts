// The Argus reads as FastA2A and real A2A servers answer them (docs/design.md#argus-reads,
// docs/design.md#fasta2a-polling).
import { describe, expect } from 'vitest'
import { it, test } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

test.override({ pairOptions: { sim: { secret: 'argus-secret-123456' } } })
const get = async (g: TestGateway, path: string) => await call(`${g.url}${path}`, { token: g.tokens.reader })

describe('the three reads', () => {
  for (const profile of ['openoperator', 'fasta2a', 'a2a-js'] as const) {
    it(`serve status and the campaign list (${profile})`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { profile } })
      const status = await get(g, '/v1/supervisor/status')
      expect(status.status).toBe(200)
      expect(status.body.operation).toBe('supervisor.status')
      expect(status.body.result.requestId).toBe(status.body.requestId)
      const list = await get(g, '/v1/campaigns')
      expect(list.status).toBe(200)
      expect(list.body.operation).toBe('campaign.list')
      expect(Array.isArray(list.body.result.campaigns)).toBe(true)
      const ops = s.rpcCalls().filter((c) => c.method === 'message/send').map((c) => c.params.message.metadata['urn:openoperator:argus-supervisor:v1'].operation)
      expect(ops).toEqual(['supervisor.status', 'campaign.list'])
    })
  }

  it('503 without an upstream call when the card lacks the skill', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { card: (c) => ({ ...c, skills: (c.skills as Array<{ id: string }>).filter((k) => k.id !== 'argus_campaign_list') }) } })
    const res = await get(g, '/v1/campaigns')
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('capability_unavailable')
    expect((await get(g, '/v1/supervisor/status')).status).toBe(200)
    expect(s.rpcCalls().filter((c) => c.method === 'message/send')).toHaveLength(1)
  })

  it('a skill renamed but with the same id still counts; a display name alone never does', async ({ startPair }) => {
    const { gw: g } = await startPair({
      sim: {
        card: (c) => ({
          ...c,
          skills: [{ id: 'general_assistance', name: 'argus_supervisor_health argus_supervisor_status argus_campaign_list', description: 'supervisor.health campaign.list' }]
        })
      }
    })
    expect((await get(g, '/v1/supervisor/health')).body.error.code).toBe('capability_unavailable')
  })
})

describe('Argus error codes, wherever the remote puts them', () => {
  const expected = {
    invalid_argus_envelope: 502,
    argus_supervisor_disabled: 503,
    unsupported_argus_operation: 501,
    argus_supervisor_unavailable: 503
  } as const
  for (const placement of ['rpc-data', 'rpc-message', 'payload-string', 'payload-object', 'failed-task'] as const) {
    for (const [code, status] of Object.entries(expected) as Array<[keyof typeof expected, number]>) {
      it(`${code} in ${placement} → ${status} ${code}`, async ({ startPair }) => {
        const { sim: s, gw: g } = await startPair({ sim: { profile: 'openoperator', taskSteps: 1 } })
        s.inject({ argusOperation: 'supervisor.status' }, { kind: 'argus-error', code, placement }, 1)
        const res = await get(g, '/v1/supervisor/status')
        expect(res.status).toBe(status)
        expect(res.body.error.code).toBe(code)
        expect(res.body.error.requestId).toMatch(/^argus-/)
        expect(res.body.result).toBeUndefined()
      })
    }
  }

  it('a payload error that is not one of the four codes is 502 upstream_rejected', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'a2a-js' } })
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['completed'], final: { error: 'database_on_fire' } }, 1)
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.text).not.toContain('database_on_fire')
  })
})

describe('FastA2A 0.5 task states', () => {
  it('polls a submitted task with tasks/get (historyLength 0) until it completes', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'openoperator' } })
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['submitted', 'working', 'working', 'completed'] }, 1)
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(200)
    expect(res.body.result.ok).toBe(true)
    const gets = s.rpcCalls().filter((c) => c.method === 'tasks/get')
    expect(gets).toHaveLength(3)
    for (const c of gets) expect(c.params).toEqual({ id: expect.any(String), historyLength: 0 })
  })

  for (const state of ['input-required', 'auth-required', 'unknown']) {
    it(`${state} stops the polling with 502 upstream_unexpected_state`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { profile: 'openoperator' } })
      s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['submitted', state] }, 1)
      const res = await get(g, '/v1/supervisor/health')
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_unexpected_state')
      expect(s.rpcCalls().filter((c) => c.method === 'tasks/get')).toHaveLength(1)
    })
  }

  for (const state of ['failed', 'rejected', 'canceled']) {
    it(`a ${state} task's data never comes back as a success`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { profile: 'openoperator' } })
      s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['submitted', state], final: 'payload' }, 1)
      const res = await get(g, '/v1/supervisor/health')
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_rejected')
      expect(res.body.result).toBeUndefined()
      expect(res.text).not.toContain('"ok"')
    })
  }

  it('a task that never finishes is 504 upstream_timeout within the read timeout', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'openoperator' }, env: { UPSTREAM_READ_TIMEOUT_MS: '700' } })
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'task-states', states: ['submitted', 'working'] }, 1)
    const started = Date.now()
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(504)
    expect(res.body.error).toMatchObject({ code: 'upstream_timeout', retryable: true })
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('an unknown method answered with a plain-text 500 is upstream_unavailable, never parsed', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'fasta2a' } })
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'status', status: 500 }, 1)
    const res = await get(g, '/v1/tasks/task-demo-1')
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('upstream_unavailable')
  })

  it('-32601 marks the capability unavailable until the card changes', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'a2a-js' } })
    s.inject({ argusOperation: 'supervisor.status' }, { kind: 'rpc-error', code: -32601, message: 'Method not found' }, 1)
    expect((await get(g, '/v1/supervisor/status')).body.error.code).toBe('capability_unavailable')
    const again = await get(g, '/v1/supervisor/status')
    expect(again.status).toBe(503)
    expect(s.rpcCalls()).toHaveLength(1)
    const u = (await get(g, '/v1/upstream')).body
    expect(u.capabilities['argus.supervisor.status']).toEqual({ state: 'unavailable', reason: 'the remote answered method not found' })
    // the same card again keeps it unavailable; a changed card clears it
    await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })
    expect((await get(g, '/v1/supervisor/status')).status).toBe(503)
    s.setCard((c) => ({ ...c, version: '0.0.2' }))
    await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })
    expect((await get(g, '/v1/supervisor/status')).status).toBe(200)
  })

  it('a2a capabilities turn available on their first valid result', async ({ startPair }) => {
    const { gw: g } = await startPair({ sim: { profile: 'openoperator', taskSteps: 1 } })
    const before = (await get(g, '/v1/upstream')).body.capabilities
    expect(before['a2a.message.send'].state).toBe('tentative')
    expect(before['a2a.tasks.get'].state).toBe('tentative')
    await get(g, '/v1/supervisor/health')
    const after = (await get(g, '/v1/upstream')).body.capabilities
    expect(after['a2a.message.send'].state).toBe('available')
    expect(after['a2a.tasks.get'].state).toBe('available')
    expect(after['a2a.artifacts'].state).toBe('available')
  })
})

describe('coalescing', () => {
  it('N concurrent identical reads make one upstream call', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'a2a-js' } })
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 300 }, 1)
    const results = await Promise.all(Array.from({ length: 10 }, async () => await get(g, '/v1/supervisor/health')))
    for (const r of results) expect(r.status).toBe(200)
    expect(new Set(results.map((r) => r.body.requestId)).size).toBe(1)
    expect(s.rpcCalls().filter((c) => c.method === 'message/send')).toHaveLength(1)
    const m = (await call(`${g.metricsUrl}/metrics`)).text
    expect(m).toMatch(/gateway_read_coalesced_total 9/)
    // every waiter gets the one answer, byte for byte (its text is made once, docs/design.md#hot-path)
    expect(new Set(results.map((r) => r.text)).size).toBe(1)
    // different reads are not coalesced, and a later identical read makes a fresh call — whose
    // answer is its own, never the text made for the earlier one
    const [later] = await Promise.all([get(g, '/v1/supervisor/health'), get(g, '/v1/supervisor/status')])
    expect(s.rpcCalls().filter((c) => c.method === 'message/send')).toHaveLength(3)
    expect(later.status).toBe(200)
    expect(later.body.requestId).not.toBe(results[0]!.body.requestId)
    expect(later.text).toContain(later.body.requestId)
  })

  it('N concurrent identical tasks/get make one upstream call', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ sim: { profile: 'fasta2a' } })
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 300 }, 1)
    const results = await Promise.all(Array.from({ length: 6 }, async () => await get(g, '/v1/tasks/task-demo-1')))
    for (const r of results) expect(r.status).toBe(200)
    expect(s.rpcCalls().filter((c) => c.method === 'tasks/get')).toHaveLength(1)
  })
})
