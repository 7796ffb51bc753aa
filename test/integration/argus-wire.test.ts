// The exact Argus envelope as the simulator received it (docs/design.md#upstream-wire-rules,
// docs/design.md#argus-reads): camelCase, /a2a/ exactly, the extension header, the configured
// auth scheme, a fresh id per call.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { allKeys, call } from '../helpers/http.js'

describe('GET /v1/supervisor/health on the wire', () => {
  it('sends the seed envelope, once, to /a2a/ with Bearer auth and the extension header', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { secret: 'sim-secret-123456', profile: 'a2a-js' } })
    const res = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    expect(res.status).toBe(200)
    const sends = sim.rpcCalls().filter((c) => c.method === 'message/send')
    expect(sends).toHaveLength(1)
    const rpc = sends[0]!
    const R = rpc.id as string
    expect(typeof R).toBe('string')
    expect(rpc.params).toEqual({
      configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
      message: {
        role: 'user',
        kind: 'message',
        messageId: R,
        extensions: ['urn:openoperator:argus-supervisor:v1'],
        metadata: { 'urn:openoperator:argus-supervisor:v1': { operation: 'supervisor.health', requestId: R } },
        parts: [{ kind: 'data', data: { params: {} } }]
      }
    })
    expect(rpc.headers['x-a2a-extensions']).toBe('urn:openoperator:argus-supervisor:v1')
    expect(rpc.headers.authorization).toBe('Bearer sim-secret-123456')
    expect(rpc.headers['x-api-key']).toBeUndefined()
    const posted = sim.received.filter((r) => r.method === 'POST')
    expect(posted.map((r) => r.path)).toEqual(['/a2a/'])
    expect(res.body).toMatchObject({ operation: 'supervisor.health', requestId: R })
    expect(res.body.result).toMatchObject({ ok: true })
  })

  it('uses a fresh id per call and never a snake_case A2A key, also while polling FastA2A tasks', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { secret: 'sim-secret-123456', profile: 'openoperator', taskSteps: 2 } })
    const a = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    const b = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(a.body.requestId).not.toBe(b.body.requestId)
    const calls = sim.rpcCalls()
    expect(calls.some((c) => c.method === 'tasks/get')).toBe(true)
    for (const c of calls) {
      const keys = allKeys(c.params)
      expect(keys.filter((k) => k.includes('_'))).toEqual([])
      if (c.method === 'tasks/get') expect(c.params.historyLength).toBe(0)
    }
    const ids = calls.map((c) => c.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('sends X-API-KEY instead of Authorization when configured', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { secret: 'sim-secret-abcdef', authSchemes: ['x-api-key'], profile: 'a2a-js' }, env: { UPSTREAM_AUTH_SCHEME: 'x-api-key' } })
    const res = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    expect(res.status).toBe(200)
    const rpc = sim.rpcCalls()[0]!
    expect(rpc.headers['x-api-key']).toBe('sim-secret-abcdef')
    expect(rpc.headers.authorization).toBeUndefined()
  })

  it('answers 503 capability_unavailable without calling upstream when the card lacks the skill', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { argusEnabled: false } })
    const res = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    expect(res.status).toBe(503)
    expect(res.body.error).toMatchObject({ code: 'capability_unavailable', retryable: false })
    expect(res.body.error.missingPrerequisites).toEqual(['card does not advertise skill id argus_supervisor_health'])
    expect(sim.rpcCalls()).toHaveLength(0)
  })
})
