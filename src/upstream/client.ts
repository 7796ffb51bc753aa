// The one way out to the remote (docs/design.md#upstream-wire-rules). Undici only; traffic and
// the secret go to the configured origin alone; no redirect is ever followed; every body is read
// under a byte cap while it streams; reads may be retried once when nothing was sent, mutations
// never.
import { createHash } from 'node:crypto'
import { rootCertificates } from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, Pool, buildConnector, type Dispatcher } from 'undici'
import type { Logger } from 'pino'
import { checkRpcResponse, type RpcErrorObject } from '../../schemas/jsonrpc.js'
import { exceedsDepth } from './json-depth.js'
import { createReadGate, type ReadGate } from './read-gate.js'
import { createByteBudget, type Hold } from './byte-budget.js'
import { createDeadlineSweeper, type Watch } from './deadlines.js'
import { answerCarriesSecret, secretMatcher } from '../core/secret-match.js'
import { discardBody } from '../http/capped-body.js'
import { jsonString } from '../core/json-text.js'
import { randomUuid } from '../core/random-uuid.js'
import { classifyTransportError, UpstreamCallError, type UpstreamOutcome } from './errors.js'

export interface UpstreamClientOptions {
  origin: string
  basePath: string
  secret: string | undefined
  authScheme: 'bearer' | 'x-api-key'
  caPem?: string | undefined
  connectTimeoutMs: number
  readTimeoutMs: number
  mutationTimeoutMs: number
  maxResponseBytes: number
  /** reads in flight plus reads waiting for a socket; past it a read is shed (docs/design.md#load-shedding) */
  readQueueMax?: number
  /** bytes of budgeted answers (`tasks/get`) held at once; past it an answer is shed */
  bodyBudgetBytes?: number
  logger: Logger
  /** observes every upstream exchange; `op` is the logical operation, never an advertised name */
  observe?: (op: string, outcome: UpstreamOutcome, seconds: number) => void
}

export type RpcResult =
  /** `date`: the answer's `Date` (ms since the epoch), when the call asked for it (`withDate`) and it is valid */
  | { ok: true; result: unknown; httpStatus: number; date?: number }
  | { ok: false; error: RpcErrorObject; httpStatus: number }

export interface RpcCall {
  method: string
  params: Record<string, unknown>
  /** logical operation for logs and metrics */
  op: string
  kind: 'read' | 'mutation'
  id?: string
  maxBytes?: number
  headers?: Record<string, string>
  /** absolute deadline (ms since epoch) bounding the whole call, retry included */
  deadline?: number
  /** reserve the answer's bytes against the body budget while it is read and parsed (large answers: `tasks/get`) */
  budgeted?: boolean
  /** a read whose answer's `Date` measures the remote's clock (a lease read: docs/design.md#one-clock) */
  withDate?: boolean
}

export interface GetResult { status: number; body: Buffer; headers: Record<string, string | string[] | undefined> }

/** a discovery GET: the card paths only, with the request headers discovery needs (A2A-Version, If-None-Match) */
export interface GetOptions { op: string; maxBytes: number; deadline?: number; headers?: Record<string, string> }

export interface UpstreamClient {
  rpc: (call: RpcCall) => Promise<RpcResult>
  /** GET `<A2A base><suffix>` (discovery only). 3xx throws `redirect`; other statuses return */
  get: (suffix: string, opts: GetOptions) => Promise<GetResult>
  close: () => Promise<void>
}

interface Exchange { status: number; body: Buffer; headers: Record<string, string | string[] | undefined>; date?: number | undefined }
/** a JSON-RPC exchange's headers: nothing reads them (rpcExchange) */
const NO_HEADERS: Exchange['headers'] = Object.freeze({})
const ACCEPT_JSON = Object.freeze({ accept: 'application/json' })

/** the Date among raw response headers, in ms since the epoch, or undefined */
function dateOf (raw: Buffer[]): number | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && name.toString('latin1').toLowerCase() === 'date') {
      const ms = Date.parse(raw[i + 1]!.toString('latin1'))
      return Number.isFinite(ms) ? ms : undefined
    }
  }
  return undefined
}

/** the Content-Length among raw response headers (name, value, name, value, …), or undefined */
function contentLengthOf (raw: Buffer[]): number | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 14 && name.toString('latin1').toLowerCase() === 'content-length') {
      const n = Number(raw[i + 1]!.toString('latin1'))
      return Number.isFinite(n) ? n : undefined
    }
  }
  return undefined
}

/** sockets of the read Pool; the read gate lets no more than this many reads hold one */
export const READ_CONNECTIONS = 16
/** defaults of GATEWAY_UPSTREAM_QUEUE_MAX and GATEWAY_TASK_BODY_BUDGET_BYTES (docs/design.md#load-shedding) */
export const DEFAULT_READ_QUEUE_MAX = 8 * READ_CONNECTIONS
export const DEFAULT_BODY_BUDGET_BYTES = 64 * 1024 * 1024

/**
 * Node's `ca` replaces the system roots, so an extra CA is added to them, never instead. The
 * certificate is checked whatever NODE_TLS_REJECT_UNAUTHORIZED says: Node's TLS takes that
 * variable as the default only when `rejectUnauthorized` is not given (docs/design.md#production)
 */
export function tlsOptionsFor (caPem: string | undefined): { rejectUnauthorized: true; ca?: string[] } {
  return caPem !== undefined ? { rejectUnauthorized: true, ca: [...rootCertificates, caPem] } : { rejectUnauthorized: true }
}

export function createUpstreamClient (o: UpstreamClientOptions): UpstreamClient {
  const tlsOptions = tlsOptionsFor(o.caPem)
  // errors produced inside the connector happened before any request byte was written
  const preConnect = new WeakSet<object>()
  const baseConnector = buildConnector(Object.assign({}, tlsOptions, { timeout: o.connectTimeoutMs }))
  const connect: buildConnector.connector = (opts, cb) => {
    baseConnector(opts, (err, socket) => {
      if (err !== null && typeof err === 'object') preConnect.add(err)
      if (err !== null) cb(err, null)
      else cb(null, socket)
    })
  }
  const readPool = new Pool(o.origin, {
    connect,
    connections: READ_CONNECTIONS,
    headersTimeout: o.readTimeoutMs,
    bodyTimeout: o.readTimeoutMs,
    keepAliveTimeout: 4000
  })

  const deadlines = createDeadlineSweeper()
  const gate: ReadGate = createReadGate({ slots: READ_CONNECTIONS, max: o.readQueueMax ?? DEFAULT_READ_QUEUE_MAX })
  const budget = createByteBudget(o.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES)
  /** shed past the budget: the answer was coming, so something was sent, but nothing is held */
  const overBudget = (status: number): UpstreamCallError => new UpstreamCallError('saturated', { httpStatus: status, retryAfterSeconds: 1 })

  // built once: every answer is searched for the secret before anything of it is used
  const echo = o.secret !== undefined && o.secret !== '' ? secretMatcher(o.secret) : undefined
  const authHeaders: Record<string, string> = {}
  if (o.secret !== undefined) {
    if (o.authScheme === 'bearer') authHeaders.authorization = `Bearer ${o.secret}`
    else authHeaders['x-api-key'] = o.secret
  }

  /** a JSON-RPC call's headers without extra ones, built once (docs/design.md#hot-path): no object built per call */
  const rpcHeaders: Record<string, string> = Object.freeze(Object.assign({ 'content-type': 'application/json', accept: 'application/json' }, authHeaders))
  /** every JSON-RPC call's path, made once */
  const rpcPath = `${o.basePath}/`
  /** the credential last, over any header of the same name a caller gave */
  const withAuth = (base: Record<string, string>, extra: Record<string, string> | undefined): Record<string, string> => {
    if (extra === undefined || Object.keys(extra).length === 0) return base
    return Object.assign({}, base, extra, authHeaders)
  }

  /** `headers` complete, the credential included (rpcHeaders, withAuth) */
  type ExchangeRequest = { method: 'GET' | 'POST'; path: string; body?: string; headers: Record<string, string>; maxBytes: number; deadline: number; reset?: boolean; hold?: Hold; withDate?: boolean }

  /** an exchange on the read Pool, through the gate: discovery waits first, JSON-RPC reads feed the estimate */
  async function readExchange (req: ExchangeRequest, discovery: boolean): Promise<Exchange> {
    if (req.deadline - Date.now() <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
    // no per-call signal or timer (docs/design.md#hot-path): a waiter leaves at its deadline by the gate's own timer
    const ticket = await gate.acquire(req.deadline, undefined, discovery)
    try {
      return await (req.method === 'POST' ? rpcExchange(readPool, req) : exchange(readPool, req))
    } finally {
      gate.release(ticket, !discovery)
    }
  }

  async function exchange (dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
    const remaining = req.deadline - Date.now()
    if (remaining <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
    let res: Dispatcher.ResponseData
    try {
      // undici's headersTimeout is the deadline until the headers; the body is bounded below
      res = await dispatcher.request({
        method: req.method,
        path: req.path,
        body: req.body,
        headers: req.headers,
        reset: req.reset ?? false,
        headersTimeout: remaining,
        bodyTimeout: remaining
      })
    } catch (err) {
      throw classifyTransportError(err, typeof err === 'object' && err !== null && preConnect.has(err), Date.now() >= req.deadline)
    }
    // a 304 answers a GET's If-None-Match (the card is unchanged): no body, never a redirect
    if (res.statusCode === 304 && req.method === 'GET') {
      discardBody(res.body)
      return { status: 304, body: Buffer.alloc(0), headers: res.headers }
    }
    const declared = Number(res.headers['content-length'])
    const refused = headersRefusal(res.statusCode, Number.isFinite(declared) ? declared : undefined, req)
    if (refused !== undefined) {
      discardBody(res.body)
      throw refused
    }
    const { hold } = req
    // the whole answer within the deadline, however slowly it trickles (src/upstream/deadlines.ts)
    const body = res.body
    const watch = deadlines.watch(req.deadline, () => { body.destroy(new UpstreamCallError('timeout')) })
    try {
      return { status: res.statusCode, body: await readCapped(body, req.maxBytes, hold, res.statusCode), headers: res.headers }
    } catch (err) {
      throw classifyTransportError(err, false, Date.now() >= req.deadline)
    } finally {
      deadlines.unwatch(watch)
    }
  }

  /**
   * A JSON-RPC read's exchange (docs/design.md#hot-path): `exchange`'s bounds, checks and failures,
   * through undici's handler interface instead of `request`, which built a header object and a body
   * stream for every call. The status and the declared length are read from the raw headers, the
   * chunks collected as they come, anything refused aborts the request. Nothing reads a JSON-RPC
   * answer's headers: none are returned.
   */
  function rpcExchange (dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
    // the promise itself, not one more async frame around it
    if (req.deadline - Date.now() <= 0) return Promise.reject(new UpstreamCallError('timeout', { nothingSent: true }))
    return new Promise<Exchange>((resolve, reject) => {
      const read = new RpcRead(req, resolve, reject)
      // the whole exchange within the deadline, from now to the last byte, however slowly it
      // trickles (src/upstream/deadlines.ts); undici's own timers are off: each exchange's
      // headers and body timers were objects kept in a list until its next tick, ~0.5 s later,
      // promoted to the old generation (docs/design.md#hot-path)
      read.watch = deadlines.watch(req.deadline, () => { read.refuse(new UpstreamCallError('timeout')) })
      dispatcher.dispatch({ method: 'POST', path: req.path, body: req.body, headers: req.headers, reset: req.reset ?? false, headersTimeout: 0, bodyTimeout: 0 }, read)
    })
  }

  /**
   * A JSON-RPC read's handler: its state in fields, its steps as methods on the prototype, where
   * closures made eight functions and their context for every read (docs/design.md#hot-path)
   */
  class RpcRead implements Dispatcher.DispatchHandler {
    watch: Watch | undefined = undefined
    private abortWith: ((err?: Error) => void) | undefined = undefined
    private refused: UpstreamCallError | undefined = undefined
    private status = 0
    private date: number | undefined = undefined
    private size = 0
    private readonly chunks: Buffer[] = []

    constructor (private readonly req: ExchangeRequest, private readonly resolve: (ex: Exchange) => void, private readonly reject: (err: unknown) => void) {}

    /** what arrived is refused: no more of it is read */
    refuse (err: UpstreamCallError): void {
      this.refused ??= err
      this.abortWith?.(err)
    }

    onConnect (abort: (err?: Error) => void): void {
      this.abortWith = abort
      // the deadline passed before the request had a connection
      if (this.refused !== undefined) abort(this.refused)
    }

    onHeaders (statusCode: number, rawHeaders: Buffer[]): boolean {
      // an informational answer comes before the real one
      if (statusCode < 200) return true
      this.status = statusCode
      if (this.req.withDate === true) this.date = dateOf(rawHeaders)
      const refusedHead = headersRefusal(statusCode, contentLengthOf(rawHeaders), this.req)
      if (refusedHead !== undefined) this.refuse(refusedHead)
      return true
    }

    onData (chunk: Buffer): boolean {
      this.size += chunk.length
      const refusedBody = bodyRefusal(this.size, this.status, this.req.maxBytes, this.req.hold)
      if (refusedBody !== undefined) this.refuse(refusedBody)
      else this.chunks.push(chunk)
      return true
    }

    onComplete (): void {
      this.unwatch()
      if (this.refused !== undefined) this.reject(this.refused)
      else this.resolve({ status: this.status, body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size), headers: NO_HEADERS, date: this.date })
    }

    onError (err: Error): void {
      this.unwatch()
      this.reject(this.refused ?? classifyTransportError(err, preConnect.has(err), Date.now() >= this.req.deadline))
    }

    private unwatch (): void {
      if (this.watch !== undefined) deadlines.unwatch(this.watch)
      this.watch = undefined
    }
  }

  /**
   * What an answer's head refuses, both exchanges alike: a 3xx is never followed, a declared length
   * over the cap is not read, and a budgeted answer reserves its declared length or is shed
   */
  function headersRefusal (status: number, declared: number | undefined, req: Pick<ExchangeRequest, 'maxBytes' | 'hold'>): UpstreamCallError | undefined {
    if (status >= 300 && status < 400) return new UpstreamCallError('redirect', { httpStatus: status })
    if (declared === undefined) return undefined
    if (declared > req.maxBytes) return new UpstreamCallError('too_large', { httpStatus: status })
    if (req.hold !== undefined && !budget.reserve(req.hold, declared)) return overBudget(status)
    return undefined
  }

  /** what the body refuses once `size` bytes have streamed in: past the cap, or past the budget (a missing or short declaration reserves what actually streams in) */
  function bodyRefusal (size: number, status: number, maxBytes: number, hold: Hold | undefined): UpstreamCallError | undefined {
    if (size > maxBytes) return new UpstreamCallError('too_large', { httpStatus: status })
    if (hold !== undefined && size > hold.bytes && !budget.reserve(hold, size - hold.bytes)) return overBudget(status)
    return undefined
  }

  /** the body under its byte cap (and the budget, when held) as it streams; listeners, not an async iterator */
  async function readCapped (body: Dispatcher.ResponseData['body'], maxBytes: number, hold: Hold | undefined, status: number): Promise<Buffer> {
    return await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = []
      let size = 0
      const fail = (err: unknown): void => {
        body.off('data', onData)
        discardBody(body)
        reject(err)
      }
      const onData = (buf: Buffer): void => {
        size += buf.length
        const refused = bodyRefusal(size, status, maxBytes, hold)
        if (refused !== undefined) return fail(refused)
        chunks.push(buf)
      }
      body.on('data', onData)
      body.once('error', reject)
      body.once('end', () => { resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)) })
    })
  }

  /** the hand-written single retry of a read: once, with jitter, only when nothing was sent */
  async function withReadRetry<T> (deadline: number, attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt()
    } catch (err) {
      if (!(err instanceof UpstreamCallError) || !err.nothingSent || err.kind !== 'unreachable') throw err
      const jitter = 50 + Math.floor(Math.random() * 150)
      if (Date.now() + jitter >= deadline) throw err
      await sleep(jitter)
      return await attempt()
    }
  }

  function logRemoteFailure (op: string, status: number, body: Buffer, remoteCode?: number): void {
    // never the remote's text: its code, HTTP status, size and digest are enough to correlate
    o.logger.warn({
      op,
      remoteCode,
      httpStatus: status,
      bodyBytes: body.length,
      bodySha256: createHash('sha256').update(body).digest('hex')
    }, 'upstream answered with an error')
  }

  function parseRpc (ex: Exchange, id: string, op: string): RpcResult {
    let json: unknown
    let text: string | undefined
    // deeper than the bound would overflow a serializer's stack on the way out (a 500); checked on
    // the text, before parsing (docs/design.md#hot-path)
    const decoded = ex.body.toString('utf8')
    if (!exceedsDepth(decoded, ex.body)) {
      text = decoded
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
    }
    // an answer that carries the secret is invalid, whatever else it says: nothing of it is used,
    // stored or shown, and it is logged by its size alone (docs/design.md#secret-echo)
    if (echo !== undefined && answerCarriesSecret(echo, text ?? ex.body, json)) {
      o.logger.error({ op, httpStatus: ex.status, bodyBytes: ex.body.length }, 'an upstream answer carried the upstream secret: refused as invalid')
      throw new UpstreamCallError('invalid', { httpStatus: ex.status })
    }
    // RpcResponseSchema, checked by hand: the same verdict without zod on every answer (docs/design.md#hot-path)
    const parsed = checkRpcResponse(json)
    if (parsed === undefined || parsed.id !== id) {
      logRemoteFailure(op, ex.status, ex.body)
      if (ex.status >= 200 && ex.status < 300) throw new UpstreamCallError('invalid', { httpStatus: ex.status })
      throw new UpstreamCallError('http_status', { httpStatus: ex.status })
    }
    if ('error' in parsed) {
      logRemoteFailure(op, ex.status, ex.body, parsed.error.code)
      return { ok: false, error: parsed.error, httpStatus: ex.status }
    }
    if (ex.status < 200 || ex.status >= 300) {
      logRemoteFailure(op, ex.status, ex.body)
      throw new UpstreamCallError('http_status', { httpStatus: ex.status })
    }
    return { ok: true, result: parsed.result, httpStatus: ex.status }
  }

  async function timed<T extends { ok: boolean } | GetResult> (op: string, fn: () => Promise<T>): Promise<T> {
    // the monotonic clock as a double: hrtime.bigint made three BigInts and a closure a call
    const start = performance.now()
    try {
      const r = await fn()
      o.observe?.(op, 'ok' in r && !r.ok ? 'rpc_error' : 'ok', (performance.now() - start) / 1e3)
      return r
    } catch (err) {
      o.observe?.(op, err instanceof UpstreamCallError ? err.outcome : 'network', (performance.now() - start) / 1e3)
      throw err
    }
  }

  async function rpc (call: RpcCall): Promise<RpcResult> {
    // a flat id, not randomUUID's rope of twenty pieces (src/core/random-uuid.ts)
    const id = call.id ?? randomUuid()
    // JSON.stringify of { jsonrpc, id, method, params }, its fixed part by hand (src/core/json-text.ts)
    const body = '{"jsonrpc":"2.0","id":' + jsonString(id) + ',"method":' + jsonString(call.method) + ',"params":' + JSON.stringify(call.params) + '}'
    const headers = withAuth(rpcHeaders, call.headers)
    const maxBytes = call.maxBytes ?? o.maxResponseBytes
    if (call.kind === 'mutation') {
      const deadline = Math.min(call.deadline ?? Infinity, Date.now() + o.mutationTimeoutMs)
      return await timed(call.op, async () => {
        // a fresh connection per mutation and no retry: failure before the connection is up
        // means nothing was sent; anything after is ambiguous, never repeated
        const client = new Client(o.origin, { connect, pipelining: 1, headersTimeout: o.mutationTimeoutMs, bodyTimeout: o.mutationTimeoutMs })
        try {
          const ex = await exchange(client, { method: 'POST', path: rpcPath, body, headers, maxBytes, deadline, reset: true })
          return parseRpc(ex, id, call.op)
        } finally {
          client.destroy().catch(() => undefined)
        }
      })
    }
    const deadline = Math.min(call.deadline ?? Infinity, Date.now() + o.readTimeoutMs)
    return await timed(call.op, () => withReadRetry(deadline, async () => {
      const hold: Hold | undefined = call.budgeted === true ? { bytes: 0 } : undefined
      try {
        const ex = await readExchange({ method: 'POST', path: rpcPath, body, headers, maxBytes, deadline, hold, withDate: call.withDate }, false)
        const r = parseRpc(ex, id, call.op)
        if (r.ok && ex.date !== undefined) r.date = ex.date
        return r
      } finally {
        // held until parsed: the chunks, the string and the object graph all live until here
        if (hold !== undefined) budget.release(hold)
      }
    }))
  }

  async function get (suffix: string, opts: GetOptions): Promise<GetResult> {
    if (!suffix.startsWith('/') || suffix.includes('//') || suffix.includes('..')) throw new Error('discovery paths are fixed suffixes of the A2A base')
    const deadline = Math.min(opts.deadline ?? Infinity, Date.now() + o.readTimeoutMs)
    return await timed(opts.op, () => withReadRetry(deadline, async () => {
      return await readExchange({ method: 'GET', path: `${o.basePath}${suffix}`, headers: Object.assign({}, opts.headers, ACCEPT_JSON, authHeaders), maxBytes: opts.maxBytes, deadline }, true)
    }))
  }

  return {
    rpc,
    get,
    // called once the API has stopped serving: an exchange still open belongs to a request the
    // drain cut, or to a discovery refresh, so it is aborted rather than waited for
    close: async () => {
      deadlines.close()
      await readPool.destroy()
    }
  }
}
