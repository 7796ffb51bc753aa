// The API's inbound bounds (docs/design.md#http-edges) and the drain (docs/design.md#shutdown),
// both measured against the longest request the gateway may legitimately keep open.
import { CAMPAIGN_LOCK_WAIT_MS } from '../core/campaign-lock.js'
import type { ParsedEnv } from './env.js'
import { defaultPerAddress } from './trust-proxy.js'
import type { HttpEdgeConfig, TrustProxy } from './types.js'

const CONNECTION_TIMEOUT_MARGIN_MS = 5000
const SHUTDOWN_MARGIN_MS = 1000

/**
 * The longest a legitimate request keeps its socket silent: a mutation that waits for its
 * campaign's lock, reads the lease, sends, then reads back (renew) or first reads the bound task
 * (cancel). A read is bounded by one read timeout, so it is always shorter.
 */
export function longestRequestMs (u: { readTimeoutMs: number; mutationTimeoutMs: number }): number {
  return CAMPAIGN_LOCK_WAIT_MS + 2 * u.readTimeoutMs + u.mutationTimeoutMs
}

export interface RequestBounds {
  /** longestRequestMs of the configured timeouts */
  longest: number
  connectionTimeoutMs: number
}

/** the timeouts' checks: headers within the request's bound, a connection timeout above the longest request */
export function requestBounds (e: ParsedEnv, fine: (...names: string[]) => boolean, problems: string[], warnings: string[]): RequestBounds {
  if (fine('GATEWAY_HEADERS_TIMEOUT_MS', 'GATEWAY_REQUEST_TIMEOUT_MS') && e.GATEWAY_HEADERS_TIMEOUT_MS > e.GATEWAY_REQUEST_TIMEOUT_MS) problems.push('GATEWAY_HEADERS_TIMEOUT_MS: must not exceed GATEWAY_REQUEST_TIMEOUT_MS')
  const longest = longestRequestMs({ readTimeoutMs: e.UPSTREAM_READ_TIMEOUT_MS, mutationTimeoutMs: e.UPSTREAM_MUTATION_TIMEOUT_MS })
  const connectionTimeoutMs = e.GATEWAY_CONNECTION_TIMEOUT_MS ?? longest + CONNECTION_TIMEOUT_MARGIN_MS
  if (connectionTimeoutMs <= longest) warnings.push(`GATEWAY_CONNECTION_TIMEOUT_MS is not above the longest legitimate request (${longest} ms): a slow mutation may lose its socket before it answers`)
  return { longest, connectionTimeoutMs }
}

/** the drain waits for the longest legitimate request, plus a margin (docs/design.md#shutdown) */
export function shutdownGraceMs (e: ParsedEnv, bounds: RequestBounds): number {
  return e.GATEWAY_SHUTDOWN_GRACE_MS ?? bounds.longest + SHUTDOWN_MARGIN_MS
}

export function httpEdgeConfig (e: ParsedEnv, bounds: RequestBounds, trustProxy: TrustProxy): HttpEdgeConfig {
  return {
    headersTimeoutMs: e.GATEWAY_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
    connectionTimeoutMs: bounds.connectionTimeoutMs,
    keepAliveTimeoutMs: e.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: e.GATEWAY_MAX_CONNECTIONS,
    maxConnectionsPerAddress: e.GATEWAY_MAX_CONNECTIONS_PER_ADDRESS ?? defaultPerAddress(e.GATEWAY_MAX_CONNECTIONS, trustProxy),
    maxRequestsPerSocket: e.GATEWAY_MAX_REQUESTS_PER_SOCKET
  }
}
