// The one upstream client as `app.upstream` (docs/design.md#upstream-wire-rules): built from the
// configuration, its exchanges counted in the metrics, its connection pools closed when the app
// closes.
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { createUpstreamClient, type UpstreamClient } from '../upstream/client.js'

declare module 'fastify' {
  interface FastifyInstance { upstream: UpstreamClient }
}

export interface UpstreamPluginOptions {
  /** the client span per call, when tracing is on (src/tracing/upstream.ts) */
  wrap?: ((client: UpstreamClient, origin: string) => UpstreamClient) | undefined
}

export default fp<UpstreamPluginOptions>(async (app, opts) => {
  const { metrics } = app
  const upstream = createUpstreamClient({
    ...app.gatewayConfig.upstream,
    // the root logger is the pino instance buildApp was given
    logger: (app.log as Logger).child({ component: 'upstream' }),
    observe: (op, outcome, seconds) => {
      metrics.upstreamRequests.inc({ rpc_method: op, outcome })
      metrics.upstreamDuration.observe({ rpc_method: op }, seconds)
    }
  })
  app.decorate('upstream', opts.wrap?.(upstream, app.gatewayConfig.upstream.origin) ?? upstream)
  app.addHook('onClose', async () => { await upstream.close() })
}, { name: 'upstream', dependencies: ['gateway-config', 'metrics'] })
