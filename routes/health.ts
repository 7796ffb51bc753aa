// Liveness and readiness (docs/design.md#readiness): ready when the ledger is reachable and a
// card has been discovered; after failed refreshes the last good card keeps the gateway ready.
// Draining (docs/design.md#shutdown) is never ready: `draining: true`, 503.
// With GATEWAY_REDIS_URL, `checks.redis` reports whether Redis answers a ping (never a reason for 503).
// `checks.upstreamCircuit` reports the upstream circuit breaker (docs/design.md#circuit-breaker),
// never a reason for 503 either: every replica sees the same remote, and an unready fleet would
// answer callers nothing instead of a 503 with Retry-After. With JWT callers, `checks.jwtKeys`
// reports whether the identity provider's keys are held — reported only, for the same reason
// (every replica fetches the same JWKS) and because static callers are served without them.
// `checks.clock` reports this replica's clock offsets (docs/design.md#one-clock), reported only.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { HealthSchema, ReadySchema } from '../schemas/rest.js'

const health: FastifyPluginAsyncZod = async (app) => {
  app.get('/healthz', { schema: { hide: true, response: { 200: HealthSchema } } }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', { schema: { hide: true, response: { 200: ReadySchema, 503: ReadySchema } } }, async (_request, reply) => {
    const snap = app.discovery.snapshot()
    const card = snap.card !== undefined
    const ledger = await app.ledger.ping()
    // Redis is reported, but its absence does not make the gateway unready: rate limits fail open
    const redis = app.redis === undefined ? undefined : await app.redis.ping().then(() => true, () => false)
    const draining = app.lifecycle.draining
    const upstreamCircuit = app.upstreamCircuit.state()
    const jwtKeys = app.jwtKeysHeld?.()
    // reported only: reads go on whatever the clocks say; mutations refuse (docs/design.md#one-clock)
    const c = app.control.clocks.status()
    const clock = { ok: c.ok, ledgerOffsetMs: c.ledgerOffsetMs ?? null, remoteOffsetMs: c.remoteOffsetMs ?? null, marginMs: c.marginMs }
    const body = { ready: !draining && card && ledger, draining, checks: { card, ledger, upstreamCircuit, ...(redis !== undefined && { redis }), ...(jwtKeys !== undefined && { jwtKeys }), clock }, mode: snap.mode }
    return reply.code(body.ready ? 200 : 503).send(body)
  })
}

export default health
