// The three Argus reads as `app.argus` (docs/design.md#argus-reads): the reader over the
// upstream client, gated by the discovered capabilities, coalesced reads counted in the metrics.
import fp from 'fastify-plugin'
import { createArgusReader, type ArgusReader } from '../argus/reader.js'

declare module 'fastify' {
  interface FastifyInstance { argus: ArgusReader }
}

export default fp<{ coalesce?: boolean }>(async (app, opts) => {
  const config = app.gatewayConfig
  const { metrics } = app
  app.decorate('argus', createArgusReader({
    client: app.upstream,
    discovery: app.discovery,
    readTimeoutMs: config.upstream.readTimeoutMs,
    maxTaskResponseBytes: config.upstream.maxTaskResponseBytes,
    coalesce: opts.coalesce ?? true,
    onCoalesced: metrics.countCoalesced
  }))
}, { name: 'argus', dependencies: ['gateway-config', 'upstream', 'discovery', 'metrics'] })
