// The HTTP edges (docs/design.md#http-edges): the bounds on inbound connections — how long a
// request may take to arrive, how long a socket may stay silent, how many sockets in all, from
// one address and per listener, how many requests per socket, how many descriptors the sockets
// may take — and the answers given before any route runs: the HTTP parser's refusals and
// timeouts (Node's `clientError`), the router's (a bad URL, a parameter too long), and what Node
// would otherwise answer itself (CONNECT, an unknown Expect). Each leaves in the contract's shape
// with an `x-request-id`, after the answers to the requests received before it on its socket;
// none echoes the request or logs its bytes.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { isIPv4, isIPv6, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { HttpEdgeConfig, TrustProxy } from '../config/types.js'
import { GatewayError, type ErrorCode } from '../core/errors.js'
import type { GatewayMetrics } from './metrics.js'
import { safeErrorCode, toGatewayError } from './errors.js'
import { genReqId, routedRequest } from './request-id.js'

/** the longest path parameter a route schema allows: a task id (schemas/task.ts) */
export const MAX_PARAM_LENGTH = 256

/**
 * How often Node looks for requests past their headers or request timeout: a quarter of the
 * headers timeout, at most a second (Node's 30 s default would let a socket outlive its bound
 * by half a minute).
 */
export const connectionsCheckingInterval = (h: HttpEdgeConfig): number =>
  Math.max(50, Math.min(1000, Math.floor(h.headersTimeoutMs / 4)))

/** the timeouts of a listener: the API's, and the metrics listener's too */
export function listenerTimeouts (h: HttpEdgeConfig) {
  return {
    // Node's own: the request line and headers, then the whole request, must arrive in time
    http: { headersTimeout: h.headersTimeoutMs, requestTimeout: h.requestTimeoutMs, connectionsCheckingInterval: connectionsCheckingInterval(h) },
    requestTimeout: h.requestTimeoutMs,
    // idle socket: longer than the longest legitimate request (config.ts longestRequestMs)
    connectionTimeout: h.connectionTimeoutMs,
    keepAliveTimeout: h.keepAliveTimeoutMs
  }
}

/**
 * The Fastify server options that bound the API's inbound connections. Node's own answers to a
 * missing Host and to requests past the per-socket limit are off: both are bodiless; the Host
 * check and the limit run in the http-edges plugin instead (src/http/edges-plugin.ts).
 */
export function serverBounds (h: HttpEdgeConfig) {
  const t = listenerTimeouts(h)
  return {
    ...t,
    http: { ...t.http, requireHostHeader: false },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH }
  }
}

/**
 * GATEWAY_TRUST_PROXY as Fastify takes it (docs/design.md#rate-limits). A hop count becomes a
 * function of the hop: Fastify 5.12 refuses a number (it trusts nothing then), since a count
 * cannot tell the ingress from a client that reaches the gateway directly — which is why a count
 * needs a gateway only the ingress can reach, and the start warns about it.
 */
export function trustProxyOption (t: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof t === 'number' ? (_address, hop) => hop < t : t
}

// Per socket: how many requests Node has handed over on it, and whether it is to end once they
// are answered; per request, its place on its socket. Properties, not maps (docs/design.md#hot-path).
const ARRIVED = Symbol('oogw.arrived')
const CLOSING = Symbol('oogw.closing')
const CLOSE_SENT = Symbol('oogw.closeSent')
const REFUSED = Symbol('oogw.refused')
const SEQ = Symbol('oogw.seq')
type EdgeSocket = Duplex & { [ARRIVED]?: number; [CLOSING]?: boolean; [CLOSE_SENT]?: boolean; [REFUSED]?: boolean; _httpMessage?: ServerResponse | null }
type EdgeRequest = IncomingMessage & { [SEQ]?: number }

/** the request's place among the requests received on its socket, from 1 */
export const requestSeq = (req: IncomingMessage): number => (req as EdgeRequest)[SEQ] ?? 0

/**
 * No request came after this one on its socket (yet): its answer may carry `Connection: close`
 * without cutting off the answer to a request pipelined behind it. A request Node never handed
 * over through 'request' counts as the last.
 */
export function lastOnSocket (req: IncomingMessage): boolean {
  const seq = (req as EdgeRequest)[SEQ]
  return seq === undefined || seq === (req.socket as EdgeSocket | null)?.[ARRIVED]
}

/** the socket ends with the answer to the last request received on it */
export function closeWhenAnswered (req: IncomingMessage): void {
  const socket = req.socket as EdgeSocket | null
  if (socket !== null) socket[CLOSING] = true
}

export const closingSocket = (req: IncomingMessage): boolean => (req.socket as EdgeSocket | null)?.[CLOSING] === true

/** an answer that closes the connection is on its way: a request arriving now would go unanswered */
export const closeSent = (req: IncomingMessage): boolean => (req.socket as EdgeSocket | null)?.[CLOSE_SENT] === true

/**
 * Ends the connection with this answer if no request came after it (`Connection: close`, after
 * which Node closes the socket); from then on, a request that still arrives is refused unprocessed.
 */
export function closeIfLast (req: IncomingMessage, res: ServerResponse): void {
  if (!lastOnSocket(req)) return
  res.setHeader('connection', 'close')
  const socket = req.socket as EdgeSocket | null
  if (socket !== null) socket[CLOSE_SENT] = true
}

/** the key of the per-address bound: the address, an IPv4-mapped one as IPv4, IPv6 by its /64 */
export function addressKey (ip: string | undefined): string | undefined {
  if (ip === undefined) return undefined
  if (ip.startsWith('::ffff:') && isIPv4(ip.slice(7))) return ip.slice(7)
  const bare = ip.split('%')[0]!
  if (!isIPv6(bare)) return ip
  const [left = '', right] = bare.split('::')
  const groups = left === '' ? [] : left.split(':')
  if (right !== undefined) {
    const tail = right === '' ? [] : right.split(':')
    const width = (g: string[]): number => g.length + (g.at(-1)?.includes('.') === true ? 1 : 0)
    groups.push(...Array<string>(8 - width(groups) - width(tail)).fill('0'), ...tail)
  }
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`
}

export type Listener = 'api' | 'metrics'

export interface ConnectionBounds {
  listener: Listener
  maxConnections: number
  /** 0: no per-address bound */
  perAddress: number
}

/**
 * Caps the open sockets of a listener, in all and per client address: past the cap Node closes
 * a new socket before reading it; past the per-address bound it is destroyed on arrival. Both
 * are counted. An accept that fails (descriptors exhausted) is counted and logged, never thrown:
 * an 'error' event nobody listens to would end the process. Answers how many addresses have a
 * socket open: an address is kept only while it has one, so never more than the cap
 * (docs/design.md#bounded-maps).
 */
export function guardConnections (server: Server, b: ConnectionBounds, metrics: GatewayMetrics, log: Logger): { addresses: () => number } {
  server.maxConnections = b.maxConnections
  server.on('drop', () => { metrics.connectionsDropped.inc({ listener: b.listener, reason: 'max_connections' }) })
  const open = new Map<string, number>()
  if (b.perAddress > 0) {
    server.on('connection', (socket: Socket) => {
      const key = addressKey(socket.remoteAddress)
      if (key === undefined) return
      const n = open.get(key) ?? 0
      if (n >= b.perAddress) {
        metrics.connectionsDropped.inc({ listener: b.listener, reason: 'per_address' })
        socket.destroy()
        return
      }
      open.set(key, n + 1)
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1
        if (left === 0) open.delete(key)
        else open.set(key, left)
      })
    })
  }
  // once listening: an error while binding is the listen call's own to report
  server.once('listening', () => { server.on('error', acceptErrors(b.listener, metrics, log)) })
  return { addresses: () => open.size }
}

const ACCEPT_LOG_EVERY_MS = 10_000

/** the listener's accept errors: counted, logged at most once per 10 s with the number since */
function acceptErrors (listener: Listener, metrics: GatewayMetrics, log: Logger): (err: NodeJS.ErrnoException) => void {
  let loggedAt = -Infinity
  let unlogged = 0
  return (err) => {
    metrics.connectionsDropped.inc({ listener, reason: 'accept_error' })
    unlogged++
    const now = performance.now()
    if (now - loggedAt < ACCEPT_LOG_EVERY_MS) return
    log.warn({ listener, code: safeErrorCode(err.code), errors: unlogged }, 'connections refused: accept failed')
    loggedAt = now
    unlogged = 0
  }
}

/** descriptors kept beyond the listeners' caps: upstream sockets, the ledger, Redis, Node's own */
export const DESCRIPTOR_RESERVE = 128

/** the process's limit on open files (`ulimit -n`), where the system says it (Linux); else undefined */
export function openFilesLimit (read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(read('/proc/self/limits'))
    return m?.[1] === undefined ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/**
 * The listeners' caps within the open-file limit: sockets past a cap are refused and counted,
 * whereas sockets past the limit are refused by the kernel unseen, and the descriptors the
 * upstream and the ledger need are gone. Lowered, with the reason, when they do not fit.
 */
export function fitToDescriptors (api: number, metrics: number, limit: number | undefined): { api: number; metrics: number; warning?: string } {
  if (limit === undefined || api + metrics + DESCRIPTOR_RESERVE <= limit) return { api, metrics }
  const room = Math.max(2, limit - DESCRIPTOR_RESERVE)
  const m = Math.min(metrics, Math.max(1, Math.floor(room / 4)))
  const a = Math.min(api, Math.max(1, room - m))
  return {
    api: a,
    metrics: m,
    warning: `GATEWAY_MAX_CONNECTIONS (${api}) + METRICS_MAX_CONNECTIONS (${metrics}) + ${DESCRIPTOR_RESERVE} descriptors for the upstream, the ledger and Node exceed the open-file limit (${limit}): at most ${a} API and ${m} metrics sockets are accepted; raise the limit (ulimit -n) or lower the caps`
  }
}

function parserRefusal (code: string | undefined): GatewayError {
  const c: ErrorCode = code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? 'request_timeout'
    : code === 'HPE_HEADER_OVERFLOW'
      ? 'header_too_large'
      : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 'payload_too_large' : 'invalid_request'
  return new GatewayError(c, c === 'invalid_request' ? { message: 'The request is not valid HTTP/1.1.' } : {})
}

function rawAnswer (ge: GatewayError, requestId: string): string {
  const body = JSON.stringify(ge.toBody())
  return `HTTP/1.1 ${ge.statusCode} ${STATUS_CODES[ge.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
}

/**
 * Writes a refusal straight to the socket, then destroys it — after the answers to the requests
 * received whole before the refused bytes: a malformed request pipelined behind a mutation must
 * not be read as the mutation's answer. Node hands a socket's responses out in order; the one
 * holding the socket belongs to a complete request until only the refused one is left.
 */
function refuseInOrder (socket: EdgeSocket, ge: GatewayError, requestId: string): void {
  const cur = socket._httpMessage
  if (socket.destroyed) return
  if (cur != null && cur.req.complete) {
    cur.once('close', () => { refuseInOrder(socket, ge, requestId) })
    return
  }
  // as Node does: never write into a response already under way
  if (socket.writable && cur?.headersSent !== true) socket.write(rawAnswer(ge, requestId))
  socket.destroy()
}

/** a refusal waits for the answers before it; `count: false` on a listener whose requests are not counted (metrics) */
export interface ClientErrorOptions { count?: boolean }

/**
 * Node's `clientError`: the parser refused the bytes, or a request did not arrive within its
 * bound. Replaces Fastify's default, which answers outside the contract and traces the error
 * with its raw packet — the caller's bytes, token included.
 */
export function createClientErrorHandler (log: Logger, metrics: GatewayMetrics, o: ClientErrorOptions = {}): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, duplex) => {
    const socket = duplex as EdgeSocket
    // a dead parser reports every later chunk again: one refusal per socket
    if (err.code === 'ECONNRESET' || socket.destroyed || socket[REFUSED] === true) return
    socket[REFUSED] = true
    const ge = parserRefusal(err.code)
    // the bytes refused belong to the request the parser was in: one already routed (its body
    // was still arriving) keeps its id and route; it never reaches the metrics hook, since its
    // response cannot finish once the socket is destroyed
    const res = socket._httpMessage ?? undefined
    const routed = res !== undefined && !res.req.complete ? routedRequest(res.req) : undefined
    const requestId = routed?.id ?? randomUUID()
    log.debug({ requestId, code: ge.code, parserCode: safeErrorCode(err.code) }, 'client error')
    if (o.count !== false) {
      metrics.httpRequests.inc({
        route: routed === undefined ? 'unparsed' : routed.routeOptions.url ?? 'unmatched',
        method: routed?.method ?? 'unknown',
        status: String(ge.statusCode)
      })
    }
    refuseInOrder(socket, ge, requestId)
  }
}

/**
 * What Node would otherwise answer itself, outside the contract and uncounted: CONNECT (the
 * socket closed without a word) and an Expect other than 100-continue (a bare 417, now the
 * http-edges plugin's). CONNECT is answered here, in order, then the socket closes.
 */
export function answerNodeRefusals (server: Server, metrics: GatewayMetrics, log: Logger): void {
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const requestId = genReqId(req)
    const ge = new GatewayError('invalid_request', { message: 'CONNECT is not supported: the gateway is not a proxy.' })
    log.debug({ requestId, code: ge.code }, 'request refused: CONNECT')
    metrics.httpRequests.inc({ route: 'unmatched', method: 'CONNECT', status: String(ge.statusCode) })
    const s = socket as EdgeSocket
    s[REFUSED] = true
    socket.on('error', () => {})
    refuseInOrder(s, ge, requestId)
  })
  // an unknown expectation goes to the routes like any request; the plugin refuses it there
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => { server.emit('request', req, res) })
}

/**
 * Numbers each request on its socket as Node hands it over (before Fastify sees it), and marks
 * the socket to end once its `maxRequestsPerSocket`th request is answered.
 */
export function countRequests (server: Server, maxRequestsPerSocket: number): void {
  server.prependListener('request', (req: IncomingMessage) => {
    const socket = req.socket as EdgeSocket
    const n = (socket[ARRIVED] ?? 0) + 1
    socket[ARRIVED] = n
    ;(req as EdgeRequest)[SEQ] = n
    if (maxRequestsPerSocket > 0 && n >= maxRequestsPerSocket) socket[CLOSING] = true
  })
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
