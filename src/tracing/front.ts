// The A2A front door's SERVER span (docs/design.md#tracing), in OpenTelemetry's A2A conventions
// (src/tracing/a2a.ts): one per `POST /a2a/`, beneath the request's HTTP server span as the
// conventions draw it, and active while the door works, so the CLIENT spans of the calls it makes
// to the remote lie beneath it. Named `{a2a.method.name}` once the door has read the method —
// v1.0's name whichever generation the caller spoke, the extension's `campaign/*` as named,
// `_OTHER` for a body that is no request or a method the door does not know (never the caller's
// text). It carries the version spoken, the message, task, state and context of the request and
// its answer, the gateway's own card's agent name and version, the endpoint the caller reached,
// `error.type` the JSON-RPC code of a refusal as text; and the gateway's own facts under its
// prefix: the campaign, the request id, the outcome `gateway_a2a_requests_total` counts.
import { SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { a2aFacts, a2aMethodName, agentAttributes, endpointAttributes, factAttributes, OTHER } from './a2a.js'

type Attrs = Record<string, string | number>

/** what the door answered, as far as a span reads it (src/front/door.ts's FrontAnswer) */
export interface FrontExchange {
  /** the canonical method, or `invalid` / `unknown` */
  rpcMethod: string
  outcome: string
  rpcErrorCode?: number | undefined
  /** the version spoken, the params as sent, the result: absent when the body was no request */
  trace?: { version: string; params?: Record<string, unknown> | undefined; result?: unknown } | undefined
}

export interface FrontTraceOptions {
  /** the gateway's own card's name and version */
  agent: { name: string; version: string }
  /** GATEWAY_PUBLIC_URL: the endpoint callers are told of; without it, the socket's local end */
  publicUrl?: string | undefined
}

/** the door's answer to one request, its span around it; the same signature, so the route calls either */
export type FrontHandler<R extends { socket: { localAddress?: string | undefined; localPort?: number | undefined } }, P, A extends FrontExchange> = (request: R, reply: P) => Promise<A>

export function traceFrontDoor<R extends { socket: { localAddress?: string | undefined; localPort?: number | undefined } }, P, A extends FrontExchange> (
  handle: FrontHandler<R, P, A>, o: FrontTraceOptions, tracer: Tracer = trace.getTracer('openoperator-gateway')
): FrontHandler<R, P, A> {
  const fixed: Attrs = {}
  agentAttributes(o.agent, fixed)
  if (o.publicUrl !== undefined) endpointAttributes(new URL(o.publicUrl), fixed)
  return async (request, reply) => {
    // the name is known once the door has read the request: `_OTHER` until then
    const attributes: Attrs = Object.assign({ 'a2a.method.name': OTHER }, fixed)
    if (o.publicUrl === undefined) {
      const { localAddress, localPort } = request.socket
      if (localAddress !== undefined) attributes['server.address'] = localAddress.replace(/^::ffff:/, '')
      if (localPort !== undefined) attributes['server.port'] = localPort
    }
    return await tracer.startActiveSpan(OTHER, { kind: SpanKind.SERVER, attributes }, async (span) => {
      try {
        const a = await handle(request, reply)
        const method = a.rpcMethod === 'invalid' || a.rpcMethod === 'unknown' ? OTHER : a2aMethodName(a.rpcMethod)
        span.updateName(method)
        const more: Attrs = { 'a2a.method.name': method, 'gateway.a2a.outcome': a.outcome }
        if (a.trace !== undefined) {
          more['a2a.protocol.version'] = a.trace.version
          factAttributes(a2aFacts(a.trace.params ?? {}, a.trace.result), more)
        }
        if (a.rpcErrorCode !== undefined) {
          more['error.type'] = String(a.rpcErrorCode)
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(a.rpcErrorCode) })
        }
        span.setAttributes(more)
        return a
      } catch (err) {
        // the route's own failure (the door answers every error itself): the class, never the message
        span.setAttributes({ 'a2a.method.name': OTHER, 'error.type': OTHER })
        span.setStatus({ code: SpanStatusCode.ERROR })
        throw err
      } finally {
        span.end()
      }
    })
  }
}
