// A CLIENT span per upstream call (docs/design.md#tracing), wrapped around the upstream client
// rather than woven into it: the client stays free of tracing code and costs nothing more when
// tracing is off (the wrapper is then never installed). A JSON-RPC call's span follows
// OpenTelemetry's A2A conventions (src/tracing/a2a.ts): named `{a2a.method.name}` — v1.0's name
// whichever generation the wire speaks, the campaign extension's as named — with the message,
// task, state and context the call and its answer carry, the protocol version on the wire, the
// remote card's agent name and version, the remote's endpoint, and `error.type` (the JSON-RPC
// code as text, or the failure's class). It covers the logical call, the read's single retry
// included. The gateway's own facts keep its prefix: the logical operation, read or mutation,
// the request id, the campaign, the outcome class of a mutation. Never the params, the answer, a
// header or the remote's text. What a mutation's answer means is the control plane's to say
// (docs/design.md#outcomes): its classes are handed in, tracing knows no control code.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api'
import type { GetOptions, GetResult, RpcCall, RpcResult, UpstreamClient } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'
import { a2aFacts, a2aMethodName, agentAttributes, endpointAttributes, factAttributes } from './a2a.js'

type Attrs = Record<string, string | number>

/** a mutation's outcome class (applied, rejected, ambiguous) from its answer or its failure: the span's `gateway.mutation.outcome` */
export interface MutationOutcomes {
  ofAnswer: (r: RpcResult) => string
  ofFailure: (err: unknown) => string
}

export interface UpstreamTraceOptions {
  /** the remote's origin: `server.address`, `server.port` */
  origin: string
  outcomes: MutationOutcomes
  /** the remote's card as discovery holds it now, if any: `gen_ai.agent.name`, `gen_ai.agent.version` */
  remoteCard: () => { name?: unknown; version?: unknown } | undefined
}

function failed (span: Span, err: unknown): void {
  // the outcome's class, never the error's message (it may quote the remote)
  const outcome = err instanceof UpstreamCallError ? err.outcome : 'network'
  span.setAttributes({ 'gateway.upstream.outcome': outcome, 'error.type': outcome })
  if (err instanceof UpstreamCallError && err.httpStatus !== undefined) span.setAttribute('http.response.status_code', err.httpStatus)
  span.setStatus({ code: SpanStatusCode.ERROR, message: outcome })
}

export function traceUpstream (inner: UpstreamClient, o: UpstreamTraceOptions, tracer: Tracer = trace.getTracer('openoperator-gateway')): UpstreamClient {
  const server: Attrs = {}
  endpointAttributes(new URL(o.origin), server)

  async function rpc (call: RpcCall): Promise<RpcResult> {
    const method = a2aMethodName(call.method)
    const attributes: Attrs = Object.assign({}, server, {
      'a2a.method.name': method,
      // the v1.0 wire sends A2A-Version; v0.3's sends none (src/upstream/a2a-wire.ts)
      'a2a.protocol.version': call.headers?.['a2a-version'] ?? '0.3',
      'gateway.upstream.operation': call.op,
      'gateway.upstream.kind': call.kind
    })
    agentAttributes(o.remoteCard(), attributes)
    const asked = a2aFacts(call.params, undefined)
    // Argus reads and mutations send their request id as the JSON-RPC id; other reads get a random
    // one, and name a request only when they ask about it (request_status)
    asked.requestId = call.id ?? asked.requestId
    factAttributes(asked, attributes)
    return await tracer.startActiveSpan(method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const headers: Record<string, string> = { ...call.headers }
      propagation.inject(context.active(), headers)
      try {
        const r = await inner.rpc({ ...call, headers })
        span.setAttribute('http.response.status_code', r.httpStatus)
        span.setAttribute('gateway.upstream.outcome', r.ok ? 'ok' : 'rpc_error')
        if (!r.ok) {
          span.setAttribute('error.type', String(r.error.code))
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'rpc_error' })
        } else {
          // what the answer adds: the task a send created, its state, its context
          const answered = a2aFacts({}, r.result)
          const more: Attrs = {}
          factAttributes({ taskId: asked.taskId === undefined ? answered.taskId : undefined, taskState: answered.taskState, contextId: asked.contextId === undefined ? answered.contextId : undefined }, more)
          span.setAttributes(more)
        }
        if (call.kind === 'mutation') span.setAttribute('gateway.mutation.outcome', o.outcomes.ofAnswer(r))
        return r
      } catch (err) {
        failed(span, err)
        if (call.kind === 'mutation') span.setAttribute('gateway.mutation.outcome', o.outcomes.ofFailure(err))
        throw err
      } finally {
        span.end()
      }
    })
  }

  // a card fetch is plain HTTP, no A2A method: an HTTP client span, `{method} {path}` (the card's fixed paths)
  async function get (suffix: string, opts: GetOptions): Promise<GetResult> {
    const attributes: Attrs = Object.assign({}, server, { 'http.request.method': 'GET', 'url.path': suffix, 'gateway.upstream.operation': opts.op })
    return await tracer.startActiveSpan(`GET ${suffix}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const r = await inner.get(suffix, opts)
        span.setAttribute('http.response.status_code', r.status)
        if (r.status >= 400) {
          span.setAttribute('error.type', String(r.status))
          span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${r.status}` })
        }
        return r
      } catch (err) {
        failed(span, err)
        throw err
      } finally {
        span.end()
      }
    })
  }

  return { rpc, get, close: inner.close }
}
