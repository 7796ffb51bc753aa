// A client span per upstream call (docs/design.md#tracing), wrapped around the upstream client
// rather than woven into it: the client stays free of tracing code and costs nothing more when
// tracing is off (the wrapper is then never installed). The span covers the logical call — the
// read's single retry included — and carries what the exchange meant, not only what went over
// the wire: the logical operation, the request id, the task id, the outcome class of a mutation.
// Never the params, the answer, a header or the remote's text. What a mutation's answer means
// is the control plane's to say (docs/design.md#outcomes): its classes are handed in, tracing
// knows no control code.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import type { GetOptions, GetResult, RpcCall, RpcResult, UpstreamClient } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'

/** the logical operations whose params name the task they act on (`params.id`), whatever the method is called on the wire */
const TASK_OPS = new Set(['tasks.get', 'cancel'])

function taskIdOf (value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const o = value as Record<string, unknown>
  // v1.0 wraps a send's task: {task: {id}} (docs/design.md#protocol-versions)
  const t = o.task
  if (o.kind === undefined && t !== null && typeof t === 'object' && typeof (t as Record<string, unknown>).id === 'string') return (t as Record<string, unknown>).id as string
  return o.kind === 'task' && typeof o.id === 'string' ? o.id : undefined
}

function failed (span: Span, err: unknown): void {
  // the outcome enum, never the error's message (it may quote the remote)
  const outcome = err instanceof UpstreamCallError ? err.outcome : 'network'
  span.setAttribute('gateway.upstream.outcome', outcome)
  if (err instanceof UpstreamCallError && err.httpStatus !== undefined) span.setAttribute('http.response.status_code', err.httpStatus)
  span.setStatus({ code: SpanStatusCode.ERROR, message: outcome })
}

/** a mutation's outcome class (applied, rejected, ambiguous) from its answer or its failure: the span's `a2a.outcome` */
export interface MutationOutcomes {
  ofAnswer: (r: RpcResult) => string
  ofFailure: (err: unknown) => string
}

export function traceUpstream (inner: UpstreamClient, origin: string, outcomes: MutationOutcomes, tracer: Tracer = trace.getTracer('openoperator-gateway')): UpstreamClient {
  const url = new URL(origin)
  const server: Attributes = {
    'server.address': url.hostname,
    'server.port': Number(url.port !== '' ? url.port : url.protocol === 'https:' ? 443 : 80)
  }

  async function rpc (call: RpcCall): Promise<RpcResult> {
    const attributes: Attributes = {
      ...server,
      'rpc.system': 'jsonrpc',
      'rpc.method': call.method,
      'a2a.method': call.op,
      'a2a.kind': call.kind
    }
    // Argus reads and mutations send their request id as the JSON-RPC id; other reads get a random one
    if (call.id !== undefined) attributes['a2a.request_id'] = call.id
    const paramsTask = TASK_OPS.has(call.op) ? call.params.id : undefined
    if (typeof paramsTask === 'string') attributes['a2a.task_id'] = paramsTask
    return await tracer.startActiveSpan(`A2A ${call.op}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const headers: Record<string, string> = { ...call.headers }
      propagation.inject(context.active(), headers)
      try {
        const r = await inner.rpc({ ...call, headers })
        span.setAttribute('http.response.status_code', r.httpStatus)
        span.setAttribute('gateway.upstream.outcome', r.ok ? 'ok' : 'rpc_error')
        if (!r.ok) {
          span.setAttribute('rpc.jsonrpc.error_code', r.error.code)
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'rpc_error' })
        } else if (attributes['a2a.task_id'] === undefined) {
          const task = taskIdOf(r.result)
          if (task !== undefined) span.setAttribute('a2a.task_id', task)
        }
        if (call.kind === 'mutation') span.setAttribute('a2a.outcome', outcomes.ofAnswer(r))
        return r
      } catch (err) {
        failed(span, err)
        if (call.kind === 'mutation') span.setAttribute('a2a.outcome', outcomes.ofFailure(err))
        throw err
      } finally {
        span.end()
      }
    })
  }

  async function get (suffix: string, opts: GetOptions): Promise<GetResult> {
    const attributes: Attributes = { ...server, 'a2a.method': opts.op, 'a2a.kind': 'discovery', 'http.request.method': 'GET', 'url.path': suffix }
    return await tracer.startActiveSpan(`A2A ${opts.op}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const r = await inner.get(suffix, opts)
        span.setAttribute('http.response.status_code', r.status)
        if (r.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${r.status}` })
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
