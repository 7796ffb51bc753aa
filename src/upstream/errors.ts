// Failures of one upstream exchange, classified once (docs/design.md#single-shot,
// docs/design.md#metrics). `nothingSent` is the fact the single-shot rules hang on: true only
// when the failure happened before the connection was up, so no request byte can have reached
// the remote.

export type UpstreamFailureKind =
  | 'unreachable' // connect refused, DNS, TLS handshake, connect timeout: nothing sent
  | 'timeout' // headers or body did not arrive in time after the request went out
  | 'network' // connection lost after the request went out
  | 'redirect' // any 3xx: never followed
  | 'too_large' // the body passed its byte cap
  | 'http_status' // a non-2xx answer without a valid JSON-RPC body
  | 'invalid' // a 2xx answer that is not the JSON-RPC response we asked for
  | 'saturated' // shed by the gateway's own bounds (read queue, body byte budget): try again later
  | 'circuit_open' // not sent: the circuit breaker is open after the remote stopped answering

/** the `outcome` label of gateway_upstream_requests_total */
export type UpstreamOutcome = 'ok' | 'rpc_error' | 'timeout' | 'network' | 'redirect' | 'too_large' | 'invalid' | 'shed'

export class UpstreamCallError extends Error {
  readonly kind: UpstreamFailureKind
  readonly nothingSent: boolean
  readonly httpStatus: number | undefined
  /** for `saturated` and `circuit_open`: when trying again is likely to succeed (the Retry-After) */
  readonly retryAfterSeconds: number | undefined

  constructor (kind: UpstreamFailureKind, opts: { nothingSent?: boolean; httpStatus?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    // the message is ours: a remote text never travels in it
    super(`upstream ${kind}${opts.httpStatus !== undefined ? ` (HTTP ${opts.httpStatus})` : ''}`, { cause: opts.cause })
    this.name = 'UpstreamCallError'
    this.kind = kind
    this.nothingSent = opts.nothingSent ?? false
    this.httpStatus = opts.httpStatus
    this.retryAfterSeconds = opts.retryAfterSeconds
  }

  get outcome (): UpstreamOutcome {
    switch (this.kind) {
      case 'unreachable': return 'network'
      case 'timeout': return 'timeout'
      case 'network': return 'network'
      case 'redirect': return 'redirect'
      case 'too_large': return 'too_large'
      case 'http_status': return 'invalid'
      case 'invalid': return 'invalid'
      case 'saturated': return 'shed'
      case 'circuit_open': return 'shed'
    }
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** Maps an undici/net/tls error to our kind. `preConnect` comes from the connector wrapper. */
export function classifyTransportError (err: unknown, preConnect: boolean, deadlineHit: boolean): UpstreamCallError {
  if (err instanceof UpstreamCallError) return err
  if (preConnect) {
    // failures inside the connector (refused, DNS, TLS, connect timeout) precede any request byte
    return new UpstreamCallError('unreachable', { nothingSent: true, cause: err })
  }
  const code = (err as { code?: unknown } | null)?.code
  if (deadlineHit || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
    return new UpstreamCallError('timeout', { cause: err })
  }
  return new UpstreamCallError('network', { cause: err })
}
