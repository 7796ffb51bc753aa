// Load shedding counts the loop's pressure from when the gateway is ready (docs/design.md#load-shedding):
// a start that blocks the loop (here a plugin after load shedding spinning for 800 ms, as a slow
// migration or a loaded machine's start does) is not pressure, and the first requests are served.
import fp from 'fastify-plugin'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import loadShedding from '../../src/http/load-shedding.js'

describe('load shedding after a slow start', () => {
  it('serves the first requests after a start that blocked the loop', { tags: ['slow'] }, async () => {
    const app = Fastify()
    await app.register(fp(async (a) => {
      a.decorate('gatewayConfig', { pressure: { maxEventLoopDelayMs: 200, maxEventLoopUtilization: 0 } } as never)
    }, { name: 'gateway-config' }))
    await app.register(fp(async (a) => {
      a.setErrorHandler((err: Error & { code?: string }, _request, reply) => { void reply.code(503).send({ code: err.code }) })
    }, { name: 'error-handler' }))
    await app.register(fp(async () => {}, { name: 'request-id' }))
    await app.register(loadShedding)
    await app.register(fp(async () => {
      const end = Date.now() + 800
      while (Date.now() < end) { /* the rest of a slow start */ }
    }))
    app.get('/x', async () => ({ ok: true }))
    await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/x`
      const statuses: number[] = []
      for (let i = 0; i < 10; i++) {
        statuses.push((await fetch(url)).status)
        await new Promise((resolve) => setTimeout(resolve, 60))
      }
      expect(statuses).toEqual(Array(10).fill(200))
    } finally {
      await app.close()
    }
  })
})
