// What a started tracing setup hands the app (docs/design.md#tracing). Type-only, so that
// src/app.ts and src/server.ts load no OpenTelemetry code while tracing is off.
import type { FastifyPluginAsync } from 'fastify'
import type { UpstreamClient } from '../upstream/client.js'

export interface Tracing {
  /** the server span per request (@fastify/otel), registered first in buildApp */
  plugin: FastifyPluginAsync
  /** the upstream client with a client span per call and `traceparent` sent to the remote */
  wrapUpstream: (client: UpstreamClient, origin: string) => UpstreamClient
  /** pino mixin: `traceId` of the active span on every log line */
  logMixin: () => object
  /** export what is buffered (at close: spans of the last requests are not lost) */
  flush: () => Promise<void>
}
