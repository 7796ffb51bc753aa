// The A2A front door on the request's server span (docs/design.md#tracing), named as the upstream
// client spans name a call (src/tracing/upstream.ts): `rpc.system` jsonrpc, `rpc.method` the
// canonical method (a bounded set: `invalid` for a body that is no request, `unknown` for a name
// the door does not know), the JSON-RPC error code of a refusal, and the outcome the
// gateway_a2a_requests_total counter counts. Nothing the caller wrote: no id, no params.
import { trace } from '@opentelemetry/api'

export interface FrontSpanFacts { rpcMethod: string; outcome: string; rpcErrorCode?: number | undefined }

export function traceFrontAnswer (a: FrontSpanFacts): void {
  const span = trace.getActiveSpan()
  if (span === undefined) return
  span.setAttributes({ 'rpc.system': 'jsonrpc', 'rpc.method': a.rpcMethod, 'gateway.a2a.outcome': a.outcome })
  if (a.rpcErrorCode !== undefined) span.setAttribute('rpc.jsonrpc.error_code', a.rpcErrorCode)
}
