// The HTTP edges (docs/design.md#http-edges): the bounds on inbound connections — how long a
// request may take to arrive, how long a socket may stay silent, how many sockets and how many
// requests per socket — and the answers given before any route runs: the HTTP parser's
// refusals and timeouts (Node's `clientError`) and the router's (a bad URL, a parameter too
// long). Each leaves in the contract's shape with an `x-request-id`; none echoes the request or
// logs its bytes.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { HttpEdgeConfig } from './config.js'
import { GatewayError, type ErrorCode } from './errors.js'
import type { GatewayMetrics } from './plugins/metrics.js'
import { safeErrorCode, toGatewayError } from './plugins/error-handler.js'
import { routedRequest } from './plugins/request-id.js'

/** the longest path parameter a route schema allows: a task id (schemas/task.ts) */
export const MAX_PARAM_LENGTH = 256

/**
 * How often Node looks for requests past their headers or request timeout: a quarter of the
 * headers timeout, at most a second (Node's 30 s default would let a socket outlive its bound
 * by half a minute).
 */
export const connectionsCheckingInterval = (h: HttpEdgeConfig): number =>
  Math.max(50, Math.min(1000, Math.floor(h.headersTimeoutMs / 4)))

/** the Fastify server options that bound inbound connections */
export function serverBounds (h: HttpEdgeConfig) {
  return {
    // Node's own: the request line and headers, then the whole request, must arrive in time
    http: { headersTimeout: h.headersTimeoutMs, requestTimeout: h.requestTimeoutMs, connectionsCheckingInterval: connectionsCheckingInterval(h) },
    requestTimeout: h.requestTimeoutMs,
    // idle socket: longer than the longest legitimate request (config.ts longestRequestMs)
    connectionTimeout: h.connectionTimeoutMs,
    keepAliveTimeout: h.keepAliveTimeoutMs,
    maxRequestsPerSocket: h.maxRequestsPerSocket,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH }
  }
}

/** caps the open API sockets; past the cap Node closes new ones at once, and they are counted */
export function capConnections (server: Server, h: HttpEdgeConfig, metrics: GatewayMetrics): void {
  server.maxConnections = h.maxConnections
  server.on('drop', () => { metrics.connectionsDropped.inc() })
}

function parserRefusal (code: string | undefined): GatewayError {
  const c: ErrorCode = code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? 'request_timeout'
    : code === 'HPE_HEADER_OVERFLOW'
      ? 'header_too_large'
      : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 'payload_too_large' : 'invalid_request'
  return new GatewayError(c, c === 'invalid_request' ? { message: 'The request is not valid HTTP/1.1.' } : {})
}

/**
 * Node's `clientError`: the parser refused the bytes, or a request did not arrive within its
 * bound. Replaces Fastify's default, which answers outside the contract and traces the error
 * with its raw packet — the caller's bytes, token included.
 */
export function createClientErrorHandler (log: Logger, metrics: GatewayMetrics): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const ge = parserRefusal(err.code)
    // a request already routed (its body was still arriving) keeps its id and route; it never
    // reaches the metrics hook, since its response cannot finish once the socket is destroyed
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined
    const routed = res?.req !== undefined ? routedRequest(res.req) : undefined
    const requestId = routed?.id ?? randomUUID()
    log.debug({ requestId, code: ge.code, parserCode: safeErrorCode(err.code) }, 'client error')
    metrics.httpRequests.inc({
      route: routed === undefined ? 'unparsed' : routed.routeOptions.url ?? 'unmatched',
      method: routed?.method ?? 'unknown',
      status: String(ge.statusCode)
    })
    // as Node does: never write into a response already under way
    if (socket.writable && res?.headersSent !== true) {
      const body = JSON.stringify(ge.toBody())
      socket.write(`HTTP/1.1 ${ge.statusCode} ${STATUS_CODES[ge.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`)
    }
    socket.destroy()
  }
}

/**
 * Fastify's `frameworkErrors`: the router refused the URL before any hook ran, so the id
 * header and the count are set here. The URL is never echoed (Fastify's default does).
 */
export function createFrameworkErrors (metrics: GatewayMetrics): (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (err, request, reply) => {
    const ge = err.code === 'FST_ERR_BAD_URL'
      ? new GatewayError('invalid_request', { message: 'The request URL is not valid.' })
      : err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? new GatewayError('uri_too_long') : toGatewayError(err)
    if (ge.code === 'internal_error') request.log.error({ code: safeErrorCode(err.code) }, 'router error')
    else request.log.debug({ code: ge.code, cause: safeErrorCode(err.code) }, 'request refused')
    metrics.httpRequests.inc({ route: 'unmatched', method: request.method, status: String(ge.statusCode) })
    void reply.code(ge.statusCode).header('x-request-id', request.id).type('application/json; charset=utf-8').send(ge.toBody())
  }
}
