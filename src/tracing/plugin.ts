// The server span per request (docs/design.md#tracing): @fastify/otel, registered first so that
// every later hook, the handler and the upstream calls run inside the request's context. What a
// span may say is narrowed here: the path without its query (a caller may put a token there),
// the route template as the span's name, the caller's configured name once authenticated, the
// status — and for an error, the status alone: neither the error's message nor its stack, which
// may quote what the caller sent.
import type { FastifyOtelInstrumentation } from '@fastify/otel'
import { SpanStatusCode } from '@opentelemetry/api'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** probes every few seconds would drown the traces that matter */
const UNTRACED = new Set(['/healthz', '/readyz'])

function pathOf (url: string): string {
  const q = url.indexOf('?')
  return (q < 0 ? url : url.slice(0, q)).slice(0, 512)
}

/** the options @fastify/otel is built with; its `requestHook` names the span and drops the query */
export function fastifyOtelOptions (): ConstructorParameters<typeof FastifyOtelInstrumentation>[0] {
  return {
    // the request span only: a span per hook and per handler would multiply the cost by ten
    instrumentHooks: false,
    instrumentHandler: false,
    // an exception event carries the error's message and stack
    recordExceptions: false,
    ignorePaths: (route) => UNTRACED.has(route.url ?? ''),
    requestHook: (span, request) => {
      const req = request as FastifyRequest
      const route = req.routeOptions.url
      span.updateName(route !== undefined ? `${req.method} ${route}` : req.method)
      span.setAttribute('url.path', pathOf(req.url))
    }
  }
}

export function tracingPlugin (otel: FastifyOtelInstrumentation): FastifyPluginAsync {
  return fp(async (app) => {
    await app.register(otel.plugin())
    // instance-level onSend runs before @fastify/otel's route-level one, which ends the span
    app.addHook('onSend', (request, reply, payload, done) => {
      const { span } = request.opentelemetry()
      if (span != null) {
        if (request.caller != null) span.setAttribute('gateway.caller', request.caller.name)
        // replaces the status @fastify/otel set from the error's message
        if (reply.statusCode >= 400 && (reply.statusCode >= 500 || (span as unknown as { status?: { code?: number } }).status?.code === SpanStatusCode.ERROR)) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${reply.statusCode}` })
        }
      }
      done(null, payload)
    })
  }, { name: 'tracing', dependencies: [] })
}
