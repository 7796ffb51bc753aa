// A remote that answers with JSON nested deeper than a serializer's stack
// (docs/design.md#upstream-wire-rules): 502 upstream_invalid_response in the contract's shape,
// never a 500 from a stack overflow on the way out.
import { describe, expect } from 'vitest'
import { it, test } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

const SECRET = 'deep-secret-5b1e02c7d9a4'
test.override({ pairOptions: { sim: { secret: SECRET, profile: 'openoperator' } } })

/** `{"a":{"a":…}}` `depth` levels deep, as text: JSON.stringify itself cannot build it */
function deepJson (depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

const completedTask = (id: string, data: string): string =>
  `{"id":${JSON.stringify(id)},"contextId":"ctx-deep","kind":"task","status":{"state":"completed"},"artifacts":[{"artifactId":"art-1","name":"result","parts":[{"kind":"data","data":${data}}]}]}`

function expectInvalid (res: Awaited<ReturnType<typeof call>>): void {
  expect(res.status).toBe(502)
  expect(res.body.error.code).toBe('upstream_invalid_response')
  expect(res.body.error.retryable).toBe(false)
  expect(typeof res.headers['x-request-id']).toBe('string')
}

describe('JSON nested past the depth bound', () => {
  it('an Argus read whose payload is 10,000 levels deep is 502 upstream_invalid_response, not 500', async ({ sim: s, gw: g }) => {
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'raw-result', json: `{"kind":"message","role":"agent","messageId":"m-1","parts":[{"kind":"data","data":${deepJson(10_000)}}]}` }, 1)
    const res = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
    expectInvalid(res)
    expect(res.body.error.requestId).toMatch(/^argus-/)
    // the gateway still serves the next read
    expect((await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })).status).toBe(200)
    expect(g.logs.join('')).not.toContain('Maximum call stack')
  })

  it('a task whose artifact is 10,000 levels deep is 502 upstream_invalid_response, not 500', async ({ sim: s, gw: g }) => {
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'raw-result', json: completedTask('task-deep', deepJson(10_000)) }, 1)
    const res = await call(`${g.url}/v1/tasks/task-deep`, { token: g.tokens.reader })
    expectInvalid(res)
    expect(g.logs.join('')).not.toContain('Maximum call stack')
  })

  it('a payload within the bound (32 levels) is served', async ({ sim: s, gw: g }) => {
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'raw-result', json: completedTask('task-ok', deepJson(32)) }, 1)
    const res = await call(`${g.url}/v1/tasks/task-ok`, { token: g.tokens.reader })
    expect(res.status).toBe(200)
    expect(res.body.taskId).toBe('task-ok')
  })
})
