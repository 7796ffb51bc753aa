// x-request-id on every response (docs/design.md#errors): a caller's well-formed id is kept for
// correlation; anything else is replaced by a fresh one.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function genReqId (req: IncomingMessage): string {
  const h = req.headers['x-request-id']
  return typeof h === 'string' && SAFE_ID.test(h) ? h : randomUUID()
}

export default fp(async (app) => {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
}, { name: 'request-id' })
