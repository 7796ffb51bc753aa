// Event-loop load shedding (docs/design.md#load-shedding) with @fastify/under-pressure: when the
// event loop's mean delay or its utilisation over the last sample passes its bound, a request is
// refused in onRequest — before authentication, validation or any upstream call, so nothing was
// done — with 503 `overloaded`, retryable, and Retry-After. Liveness and readiness are exempt:
// a probe must see the process alive while it sheds, and readiness failing on pressure would
// pull every busy replica out of the ingress at once.
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import { GatewayError } from '../errors.js'

/** how often the loop is sampled; the pressure seen lasts until the next sample */
export const PRESSURE_SAMPLE_MS = 500
const RETRY_AFTER_S = 1
const EXEMPT: ReadonlySet<string | undefined> = new Set(['/healthz', '/readyz'])

export default fp(async (app) => {
  const { maxEventLoopDelayMs, maxEventLoopUtilization } = app.gatewayConfig.pressure
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxEventLoopUtilization,
    eventLoopUtilizationMode: 'interval',
    sampleInterval: PRESSURE_SAMPLE_MS,
    pressureHandler: async (request) => {
      if (EXEMPT.has(request.routeOptions.url)) return
      throw new GatewayError('overloaded', { headers: { 'retry-after': String(RETRY_AFTER_S) } })
    }
  })
}, { name: 'load-shedding', dependencies: ['gateway-config', 'error-handler', 'request-id'] })
