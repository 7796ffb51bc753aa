// Liveness and readiness (docs/design.md#readiness): ready when the ledger is reachable and a
// card has been discovered; after failed refreshes the last good card keeps the gateway ready.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { HealthSchema, ReadySchema } from '../schemas/rest.js'

const health: FastifyPluginAsyncZod = async (app) => {
  app.get('/healthz', { schema: { hide: true, response: { 200: HealthSchema } } }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', { schema: { hide: true, response: { 200: ReadySchema, 503: ReadySchema } } }, async (_request, reply) => {
    const snap = app.discovery.snapshot()
    const card = snap.card !== undefined
    const ledger = await app.ledger.ping()
    const body = { ready: card && ledger, checks: { card, ledger }, mode: snap.mode }
    return reply.code(body.ready ? 200 : 503).send(body)
  })
}

export default health
