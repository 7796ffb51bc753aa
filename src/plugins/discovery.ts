// Agent card discovery as `app.discovery` (docs/design.md#discovery-and-capabilities): the first
// refresh when the app is ready — a failure there is not fatal, /readyz reports it and the timer
// retries — then the periodic refresh until the app closes. The metrics read its state at scrape
// time.
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { createDiscovery, type Discovery } from '../discovery/discovery.js'
import { trustedKeysFromFile } from '../core/trusted-keys.js'

declare module 'fastify' {
  interface FastifyInstance { discovery: Discovery }
}

export default fp<{ now?: (() => number) | undefined }>(async (app, opts) => {
  const config = app.gatewayConfig
  const { metrics } = app
  const logger = (app.log as Logger).child({ component: 'discovery' })
  const { cardJwks } = config
  // re-read when the file changes: keys rotate without a restart (src/core/operator-files.ts)
  const trustedKeys = cardJwks === undefined
    ? undefined
    : trustedKeysFromFile('GATEWAY_CARD_JWKS_FILE', cardJwks.path, cardJwks.jwks, {
      log: logger,
      onRefused: (reason) => { metrics.operatorFileRefusals.inc({ file: 'GATEWAY_CARD_JWKS_FILE', reason }) }
    })
  const discovery = createDiscovery({
    client: app.upstream,
    origin: config.upstream.origin,
    basePath: config.upstream.basePath,
    cardMaxBytes: config.upstream.cardMaxBytes,
    controlEnabled: config.controlEnabled,
    intervalMs: config.discoveryIntervalMs,
    minIntervalMs: config.discoveryMinIntervalMs,
    trustedKeys,
    logger,
    onRefresh: (outcome) => metrics.discovery.inc({ outcome }),
    now: opts.now
  })
  metrics.bindDiscovery(() => discovery.snapshot())
  app.decorate('discovery', discovery)
  app.addHook('onReady', async () => {
    await discovery.refresh()
    discovery.start()
  })
  app.addHook('onClose', async () => { discovery.stop(); trustedKeys?.close() })
}, { name: 'discovery', dependencies: ['gateway-config', 'upstream', 'metrics'] })
