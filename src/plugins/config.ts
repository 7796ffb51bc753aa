// The validated configuration as `app.gatewayConfig`: the plugins that wire the domain
// factories read their settings here, never from the environment (docs/design.md#configuration).
import fp from 'fastify-plugin'
import type { Config } from '../config/index.js'

declare module 'fastify' {
  interface FastifyInstance { gatewayConfig: Config }
}

export default fp<{ config: Config }>(async (app, opts) => {
  app.decorate('gatewayConfig', opts.config)
}, { name: 'gateway-config' })
