// x-request-id on every response (docs/design.md#errors): a caller's well-formed id is kept for
// correlation; anything else is replaced by a fresh one.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function genReqId (req: IncomingMessage): string {
  const h = req.headers['x-request-id']
  return typeof h === 'string' && SAFE_ID.test(h) ? h : randomUUID()
}

// each request Fastify routed, by its raw request: an answer written straight to the socket (a
// body that never arrived, docs/design.md#http-edges) keeps the request's id and route
const routed = new WeakMap<IncomingMessage, FastifyRequest>()

export function routedRequest (req: IncomingMessage): FastifyRequest | undefined {
  return routed.get(req)
}

export default fp(async (app) => {
  // callback style: no promise per request (docs/design.md#hot-path)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    routed.set(request.raw, request)
    done()
  })
}, { name: 'request-id' })
