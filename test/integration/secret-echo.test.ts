// A remote that echoes the credential the gateway sent it (docs/design.md#secret-echo): the
// upstream secret inside an Argus payload or a task artifact, under either auth scheme. No
// answer may carry it: 502 upstream_invalid_response in the contract's shape, logged without
// the value.
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

let sim: Simulator | undefined
let gw: TestGateway | undefined
afterEach(async () => { await gw?.close(); await sim?.close(); gw = undefined; sim = undefined })

const SECRET = 'echo-secret-7f3a9c2e41b84d06'

async function setup (opts: SimulatorOptions = {}, env: Record<string, string> = {}): Promise<{ s: Simulator; g: TestGateway }> {
  sim = await startSimulator({ secret: SECRET, profile: 'openoperator', ...opts })
  gw = await startGateway({ simulator: sim, env })
  return { s: sim, g: gw }
}

function expectInvalid (res: Awaited<ReturnType<typeof call>>): void {
  expect(res.status).toBe(502)
  expect(res.body.error.code).toBe('upstream_invalid_response')
  expect(res.body.error.retryable).toBe(false)
  expect(typeof res.headers['x-request-id']).toBe('string')
}

describe('a remote that echoes the upstream secret', () => {
  for (const scheme of ['bearer', 'x-api-key'] as const) {
    it(`in an Argus payload: 502 and no secret in the answer (${scheme})`, async () => {
      const { s, g } = await setup({ authSchemes: [scheme] }, { UPSTREAM_AUTH_SCHEME: scheme })
      const echoed = scheme === 'bearer' ? { authorization: `Bearer ${SECRET}` } : { 'x-api-key': SECRET }
      s.inject({ argusOperation: 'supervisor.status' }, { kind: 'result', result: { kind: 'message', role: 'agent', messageId: 'm-1', parts: [{ kind: 'data', data: { seen: echoed } }] } }, 1)
      const res = await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })
      expect(res.text).not.toContain(SECRET)
      expectInvalid(res)
      // logged without the value
      expect(g.logs.join('')).not.toContain(SECRET)
      expect(g.logs.some((l) => l.includes('upstream secret'))).toBe(true)
    })

    it(`in a task artifact: 502 and no secret in the answer (${scheme})`, async () => {
      const { s, g } = await setup({ authSchemes: [scheme] }, { UPSTREAM_AUTH_SCHEME: scheme })
      const artifact = { artifactId: 'a-1', name: 'echo', parts: [{ kind: 'text', text: `headers seen: ${scheme === 'bearer' ? 'Authorization: Bearer ' : 'X-API-KEY: '}${SECRET}` }] }
      s.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: { id: 'task-echo', contextId: 'c', kind: 'task', status: { state: 'completed' }, artifacts: [artifact] } }, 1)
      const res = await call(`${g.url}/v1/tasks/task-echo`, { token: g.tokens.reader })
      expect(res.text).not.toContain(SECRET)
      expectInvalid(res)
      expect(g.logs.join('')).not.toContain(SECRET)
    })
  }

  it('an answer without the secret is untouched', async () => {
    const { g } = await setup()
    const res = await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })
    expect(res.status).toBe(200)
  })
})
