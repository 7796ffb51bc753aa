// How a failed read becomes a contract error (docs/design.md#argus-reads,
// docs/design.md#errors). Reads only: a mutation's failures mean something else (ambiguity) and
// are mapped in control code.
import { GatewayError } from '../core/errors.js'
import { UpstreamCallError } from '../upstream/errors.js'

export function readFailure (err: unknown, requestId?: string): GatewayError {
  if (err instanceof GatewayError) return err
  const opts = { requestId, cause: err }
  if (!(err instanceof UpstreamCallError)) return new GatewayError('internal_error', opts)
  switch (err.kind) {
    case 'unreachable':
    case 'network':
      return new GatewayError('upstream_unavailable', opts)
    case 'timeout':
      return new GatewayError('upstream_timeout', opts)
    case 'http_status':
      // a plain-text 5xx (FastA2A's answer to an unknown method, or an outage) is never parsed
      return new GatewayError((err.httpStatus ?? 500) >= 500 ? 'upstream_unavailable' : 'upstream_rejected', opts)
    case 'saturated':
      // shed by the gateway's own bounds before (or instead of) holding the answer: come back later
      return new GatewayError('upstream_unavailable', Object.assign({}, opts, {
        message: 'The gateway is at its limit of upstream reads; retry shortly.',
        headers: { 'retry-after': String(err.retryAfterSeconds ?? 1) }
      }))
    case 'circuit_open':
      // the remote stopped answering: refused at once instead of waiting out another timeout
      return new GatewayError('upstream_unavailable', Object.assign({}, opts, {
        message: 'The remote is not answering; the gateway will try it again shortly.',
        headers: { 'retry-after': String(err.retryAfterSeconds ?? 1) }
      }))
    case 'redirect':
    case 'too_large':
    case 'invalid':
      return new GatewayError('upstream_invalid_response', opts)
  }
}
