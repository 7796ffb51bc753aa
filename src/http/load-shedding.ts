// Event-loop load shedding (docs/design.md#load-shedding): when the event loop's mean delay or its
// utilisation over the last sample passes its bound, a request is refused in onRequest — before
// authentication, validation or any upstream call, so nothing was done — with 503 `overloaded`,
// retryable, and Retry-After. Liveness and readiness are exempt: a probe must see the process
// alive while it sheds, and readiness failing on pressure would pull every busy replica out of the
// ingress at once. The sampler is the gateway's own rather than @fastify/under-pressure's, which
// also read the process's memory on every sample: that read opens /proc/self/stat, and with no
// descriptor left it threw inside the timer and ended the process (docs/design.md#http-edges).
// Nothing here touches a descriptor.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import { GatewayError } from '../core/errors.js'

/** how often the loop is sampled; the pressure seen lasts until the next sample */
export const PRESSURE_SAMPLE_MS = 500
/** the delay histogram's resolution; its mean includes it, so it is taken off */
const RESOLUTION_MS = 10
const RETRY_AFTER_S = 1
const EXEMPT: ReadonlySet<string | undefined> = new Set(['/healthz', '/readyz'])

export interface LoopSample { delayMs: number; utilization: number }

/**
 * Samples the loop every `PRESSURE_SAMPLE_MS`: the mean delay over the interval (no sample at all
 * means the loop was blocked throughout: infinite) and the utilisation over the same interval.
 */
export function startLoopSampler (onSample: (s: LoopSample) => void): () => void {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  let elu = performance.eventLoopUtilization()
  // re-armed after each sample, so a blocked loop never queues samples behind it
  const timer = setTimeout(function sample () {
    const mean = histogram.mean / 1e6 - RESOLUTION_MS
    histogram.reset()
    const now = performance.eventLoopUtilization()
    const utilization = performance.eventLoopUtilization(now, elu).utilization
    elu = now
    onSample({ delayMs: Number.isNaN(mean) ? Infinity : Math.max(0, mean), utilization })
    timer.refresh()
  }, PRESSURE_SAMPLE_MS)
  timer.unref()
  return () => {
    clearTimeout(timer)
    histogram.disable()
  }
}

export default fp(async (app) => {
  const { maxEventLoopDelayMs, maxEventLoopUtilization } = app.gatewayConfig.pressure
  if (maxEventLoopDelayMs === 0 && maxEventLoopUtilization === 0) return
  let pressed = false
  // sampled from when the gateway is ready, not from here: the start that follows (the other
  // plugins, the ledger's migrations, the routes' schemas) blocks the loop, and counted as
  // pressure it shed a fresh replica's first requests (test/unit/load-shedding-start.test.ts)
  let stop = (): void => {}
  app.addHook('onReady', (done) => {
    stop = startLoopSampler((s) => {
      pressed = (maxEventLoopDelayMs > 0 && s.delayMs > maxEventLoopDelayMs) ||
        (maxEventLoopUtilization > 0 && s.utilization > maxEventLoopUtilization)
    })
    done()
  })
  app.addHook('onClose', (_app, done) => { stop(); done() })
  // callback style, one boolean on the hot path (docs/design.md#hot-path)
  app.addHook('onRequest', (request, _reply, done) => {
    if (!pressed || EXEMPT.has(request.routeOptions.url)) {
      done()
      return
    }
    done(new GatewayError('overloaded', { headers: { 'retry-after': String(RETRY_AFTER_S) } }))
  })
}, { name: 'load-shedding', dependencies: ['gateway-config', 'error-handler', 'request-id'] })
