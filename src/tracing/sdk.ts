// Starts OpenTelemetry tracing for this process (docs/design.md#tracing), once, only when the
// configuration says so (src/config/tracing.ts). Every OpenTelemetry module is imported here,
// dynamically: a gateway without tracing loads none of them and runs no tracing code at all.
// The SDK follows the OpenTelemetry environment conventions itself (OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT/PROTOCOL/HEADERS, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_PROPAGATORS, OTEL_BSP_*). Traces only: the metrics stay
// Prometheus, and no log or metric exporter is started. What a started setup hands the app
// (`Tracing`) is declared here too: this module imports OpenTelemetry only inside
// startTracing, so src/app.ts and src/server.ts can import it and still load none of it while
// tracing is off.
import type { FastifyPluginAsync } from 'fastify'
import type { UpstreamClient } from '../upstream/client.js'
import type { traceFrontDoor } from './front.js'
import type { UpstreamTraceOptions } from './upstream.js'

export interface Tracing {
  /** the server span per request (@fastify/otel), registered first in buildApp */
  plugin: FastifyPluginAsync
  /**
   * the upstream client with a CLIENT span per call and `traceparent` sent to the remote; a
   * mutation's span carries the outcome class `outcomes` gives (the control plane's), every span
   * the remote card's name and version as discovery holds it
   */
  wrapUpstream: (client: UpstreamClient, o: UpstreamTraceOptions) => UpstreamClient
  /** the front door's answer with a SERVER span per request around it (routes/a2a.ts) */
  traceFrontDoor: typeof traceFrontDoor
  /** pino mixin: `traceId` of the active span on every log line */
  logMixin: () => object
  /** export what is buffered (at close: spans of the last requests are not lost) */
  flush: () => Promise<void>
}

let started: Promise<Tracing> | undefined

export async function startTracing (): Promise<Tracing> {
  started ??= (async () => {
    const [{ NodeSDK }, { defaultResource, resourceFromAttributes }, { FastifyOtelInstrumentation }, { trace }, plugin, upstream, front, log] = await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/resources'),
      import('@fastify/otel'),
      import('@opentelemetry/api'),
      import('./plugin.js'),
      import('./upstream.js'),
      import('./front.js'),
      import('./log.js')
    ])
    const otel = new FastifyOtelInstrumentation(plugin.fastifyOtelOptions())
    const sdk = new NodeSDK({
      // a default name; OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, detected at start, win over it
      resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'openoperator-gateway' })),
      instrumentations: [otel],
      metricReaders: [],
      logRecordProcessors: []
    })
    sdk.start()
    const tracer = trace.getTracer('openoperator-gateway')
    // the API hands out a proxy; the SDK's provider behind it is the one that buffers
    const proxy = trace.getTracerProvider() as { getDelegate?: () => unknown }
    const provider = (proxy.getDelegate?.() ?? proxy) as { forceFlush?: () => Promise<void> }
    return {
      plugin: plugin.tracingPlugin(otel),
      wrapUpstream: (client, o) => upstream.traceUpstream(client, o, tracer),
      traceFrontDoor: (handle, o) => front.traceFrontDoor(handle, o, tracer),
      logMixin: log.traceIdMixin,
      flush: async () => { await provider.forceFlush?.() }
    }
  })()
  return await started
}
