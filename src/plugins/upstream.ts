// The one upstream client as `app.upstream` (docs/design.md#upstream-wire-rules): built from the
// configuration, its exchanges counted in the metrics, behind the circuit breaker
// (`app.upstreamCircuit`, docs/design.md#circuit-breaker), its connection pools closed when the
// app closes.
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { createUpstreamClient, type UpstreamClient } from '../upstream/client.js'
import { createUpstreamCircuit, type UpstreamCircuit } from '../upstream/breaker.js'
import { mutationOutcomes } from '../control/outcome.js'
import type { UpstreamTraceOptions } from '../tracing/upstream.js'

declare module 'fastify' {
  interface FastifyInstance { upstream: UpstreamClient; upstreamCircuit: UpstreamCircuit }
}

/** gateway_upstream_circuit_state: 0 closed, 1 half-open, 2 open */
const CIRCUIT_GAUGE = { closed: 0, half_open: 1, open: 2 } as const

export interface UpstreamPluginOptions {
  /** the client span per call, when tracing is on (src/tracing/upstream.ts) */
  wrap?: ((client: UpstreamClient, o: UpstreamTraceOptions) => UpstreamClient) | undefined
}

export default fp<UpstreamPluginOptions>(async (app, opts) => {
  const { metrics } = app
  const upstream = createUpstreamClient({
    ...app.gatewayConfig.upstream,
    // the root logger is the pino instance buildApp was given
    logger: (app.log as Logger).child({ component: 'upstream' }),
    observe: (op, outcome, seconds) => {
      metrics.countUpstream(op, outcome)
      metrics.upstreamDurationOf(op).observe(seconds)
    }
  })
  const { breakerFailures, breakerOpenMs } = app.gatewayConfig.upstream
  const circuit = createUpstreamCircuit({
    failures: breakerFailures,
    halfOpenAfterMs: breakerOpenMs,
    logger: (app.log as Logger).child({ component: 'upstream' }),
    onChange: (state) => {
      metrics.upstreamCircuitState.set(CIRCUIT_GAUGE[state])
      metrics.upstreamCircuitTransitions.inc({ to: state })
    }
  })
  const guarded = circuit.wrap(upstream)
  app.decorate('upstreamCircuit', circuit)
  // a mutation span's outcome class is the control plane's (docs/design.md#outcomes), handed in;
  // the remote's card is discovery's, registered after this plugin and read only at call time
  const traced = opts.wrap?.(guarded, {
    origin: app.gatewayConfig.upstream.origin,
    outcomes: mutationOutcomes,
    remoteCard: () => app.hasDecorator('discovery') ? app.discovery.snapshot().card : undefined
  })
  app.decorate('upstream', traced ?? guarded)
  // through the decorated client: whatever wraps it (breaker, tracing) closes the same pools
  app.addHook('onClose', async () => { await app.upstream.close() })
}, { name: 'upstream', dependencies: ['gateway-config', 'metrics'] })
