// The simulator's faults for the qualification's negative cases: a wrong route that answers
// (a misrouted server), /docs/a2a.json replaced, and /a2a/tasks/cancel among the wrong routes.
import { describe, expect, it } from 'vitest'
import { call, useSimulator } from './helpers.js'

const start = useSimulator()

describe('simulator faults for qualification', () => {
  it('a wrongRoute fault answers that route alone, GET and POST, then the route refuses again', async () => {
    const s = await start()
    s.inject({ wrongRoute: '/a2a/tasks/get' }, { kind: 'status', status: 200, body: 'ok' }, 2)
    expect((await call(s, 'GET', '/a2a/message/send')).status).toBe(404)
    expect((await call(s, 'GET', '/a2a/tasks/get')).status).toBe(200)
    expect((await call(s, 'POST', '/a2a/tasks/get', { body: '{}' })).status).toBe(200)
    expect((await call(s, 'GET', '/a2a/tasks/get')).status).toBe(404)
    expect(s.rpcCalls()).toEqual([])
  })

  it('/a2a/tasks/cancel is a wrong route: 404 to GET, 405 to POST, and listed in /docs/a2a.json', async () => {
    const s = await start()
    expect((await call(s, 'GET', '/a2a/tasks/cancel')).status).toBe(404)
    expect((await call(s, 'POST', '/a2a/tasks/cancel', { body: '{}' })).status).toBe(405)
    expect((await call(s, 'GET', '/docs/a2a.json')).json.methodsAreNotPaths).toContain('/a2a/tasks/cancel')
  })

  it('an a2a-docs fault replaces /docs/a2a.json', async () => {
    const s = await start()
    s.inject('a2a-docs', { kind: 'status', status: 503 }, 1)
    expect((await call(s, 'GET', '/docs/a2a.json')).status).toBe(503)
    expect((await call(s, 'GET', '/docs/a2a.json')).json.endpoint).toBe('/a2a/')
  })
})
