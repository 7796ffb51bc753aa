// x-request-id on every response (docs/design.md#errors), and the raw request marked as routed
// (src/http/request-id.ts).
import fp from 'fastify-plugin'
import { markRouted } from './request-id.js'

export default fp(async (app) => {
  // callback style: no promise per request (docs/design.md#hot-path)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    markRouted(request)
    done()
  })
}, { name: 'request-id' })
