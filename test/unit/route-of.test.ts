// routeOf (src/core/route-of.ts): Fastify's routeOptions read once per request, and what it reads
// is that request's own route, never another's (the object is kept per request, not per route).
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { routeOf, routeUrlOf } from '../../src/core/route-of.js'

describe('routeOf', () => {
  it('is the request\'s own routeOptions, read once, per request', async () => {
    const app = Fastify()
    const seen: Array<{ url: string | undefined, again: boolean, scope: unknown, logged: string | undefined }> = []
    app.addHook('onRequest', (request, _reply, done) => {
      const first = routeOf(request)
      seen.push({ url: first.url, again: routeOf(request) === first, scope: first.config.scope, logged: routeUrlOf(request) })
      done()
    })
    app.get('/a/:id', { config: { scope: 'read' } }, async () => 'a')
    app.get('/b', async () => 'b')
    await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
      for (const path of ['/a/1', '/b', '/a/2', '/nowhere']) await (await fetch(base + path)).text()
    } finally {
      await app.close()
    }
    expect(seen).toEqual([
      { url: '/a/:id', again: true, scope: 'read', logged: '/a/:id' },
      { url: '/b', again: true, scope: undefined, logged: '/b' },
      { url: '/a/:id', again: true, scope: 'read', logged: '/a/:id' },
      { url: undefined, again: true, scope: undefined, logged: undefined }
    ])
    // something logged as a request that Fastify did not make: its own routeOptions, or none
    expect(routeUrlOf({ routeOptions: { url: '/x' } })).toBe('/x')
    expect(routeUrlOf({})).toBeUndefined()
  })
})
