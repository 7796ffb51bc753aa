import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import type { Simulator } from '../../src/simulator/index.js'
import { call, rpc } from './helpers.js'

const SECRET = 'sim-secret-0123456789'
let sim: Simulator | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
})

const getDemo = (s: Simulator, headers: Record<string, string> = {}) => rpc(s, 'tasks/get', { id: 'task-demo-1' }, { headers })

describe('auth of POST /a2a/', () => {
  it('is open when no secret is set', async () => {
    sim = await startSimulator()
    expect(sim.secret).toBeUndefined()
    expect((await getDemo(sim)).json.result.id).toBe('task-demo-1')
  })

  it('accepts Bearer and X-API-KEY, refuses anything else with a 401 that echoes nothing', async () => {
    sim = await startSimulator({ secret: SECRET })
    expect(sim.secret).toBe(SECRET)
    expect((await getDemo(sim, { authorization: `Bearer ${SECRET}` })).status).toBe(200)
    expect((await getDemo(sim, { 'x-api-key': SECRET })).status).toBe(200)
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-secret-value' }, { 'x-api-key': 'wrong-secret-value' }, { authorization: `Basic ${SECRET}` }, { authorization: SECRET }]
    for (const headers of attempts) {
      const refused = await getDemo(sim, headers)
      expect(refused.status).toBe(401)
      expect(refused.headers['content-type']).toMatch(/^application\/json/)
      expect(refused.json).toEqual({ error: 'unauthorized' })
      expect(refused.text).not.toContain('wrong-secret-value')
      expect(refused.text).not.toContain(SECRET)
    }
    // Refused calls are recorded too, headers lower-cased.
    expect(sim.received).toHaveLength(7)
    expect(sim.received[1]?.headers['x-api-key']).toBe(SECRET)
    expect(sim.rpcCalls()).toHaveLength(7)
  })

  it('honours the configured schemes', async () => {
    sim = await startSimulator({ secret: SECRET, authSchemes: ['x-api-key'] })
    expect((await getDemo(sim, { authorization: `Bearer ${SECRET}` })).status).toBe(401)
    expect((await getDemo(sim, { 'x-api-key': SECRET })).status).toBe(200)
    await sim.close()
    sim = await startSimulator({ secret: SECRET, authSchemes: ['bearer'] })
    expect((await getDemo(sim, { 'x-api-key': SECRET })).status).toBe(401)
    expect((await getDemo(sim, { authorization: `bearer ${SECRET}` })).status).toBe(200)
  })

  it('never guards the discovery routes', async () => {
    sim = await startSimulator({ secret: SECRET })
    for (const path of ['/health', '/docs', '/docs/a2a.json', '/a2a/docs', '/a2a/.well-known/agent.json', '/a2a/.well-known/agent-card.json']) {
      expect((await call(sim, 'GET', path)).status).toBe(200)
    }
    const card = (await call(sim, 'GET', '/a2a/.well-known/agent-card.json')).json
    expect(Object.keys(card.securitySchemes).sort()).toEqual(['apiKey', 'bearer'])
    expect(JSON.stringify(card)).not.toContain(SECRET)
  })
})
