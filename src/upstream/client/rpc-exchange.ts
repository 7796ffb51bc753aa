// An exchange on the read Pool, a JSON-RPC read's or a card fetch's (docs/design.md#hot-path):
// `exchange`'s bounds, checks and failures (src/upstream/client/exchange.ts), through undici's
// handler interface instead of `request`, which built a header object and a body stream for every
// call. The status and the declared length are read from the raw headers, the chunks collected as
// they come, anything refused aborts the request. Nothing reads a JSON-RPC answer's headers: none
// are returned; a card fetch's are (`withHeaders`), parsed as `request` parses them. The card
// fetch takes this path too so that no body stream runs on the read Pool at all: the card's,
// every refresh, had Node's stream functions and undici's, optimised for the reads' objects,
// deoptimised and compiled again (docs/design.md#hot-path).
import { util, type Dispatcher } from 'undici'
import type { Watch } from '../deadlines.js'
import { classifyTransportError, UpstreamCallError } from '../errors.js'
import { bodyRefusal, headersRefusal } from './exchange.js'
import type { ClientState } from './state.js'
import type { Exchange, ExchangeRequest } from './types.js'

/** a JSON-RPC exchange's headers: nothing reads them (rpcExchange) */
const NO_HEADERS: Exchange['headers'] = Object.freeze({})

export function rpcExchange (s: ClientState, dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
  // the promise itself, not one more async frame around it
  if (req.deadline - Date.now() <= 0) return Promise.reject(new UpstreamCallError('timeout', { nothingSent: true }))
  return new Promise<Exchange>((resolve, reject) => {
    const read = new RpcRead(s, req, resolve, reject)
    // the whole exchange within the deadline, from now to the last byte, however slowly it
    // trickles (src/upstream/deadlines.ts); undici's own timers are off: each exchange's
    // headers and body timers were objects kept in a list until its next tick, ~0.5 s later,
    // promoted to the old generation (docs/design.md#hot-path)
    read.watch = s.deadlines.watch(req.deadline, () => { read.refuse(new UpstreamCallError('timeout')) })
    dispatcher.dispatch({ method: req.method, path: req.path, body: req.body, headers: req.headers, reset: req.reset ?? false, headersTimeout: 0, bodyTimeout: 0 }, read)
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
  private headers: Exchange['headers'] = NO_HEADERS
  private size = 0
  private readonly chunks: Buffer[] = []

  constructor (private readonly s: ClientState, private readonly req: ExchangeRequest, private readonly resolve: (ex: Exchange) => void, private readonly reject: (err: unknown) => void) {}

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
    if (this.req.withHeaders === true) this.headers = util.parseHeaders(rawHeaders)
    // a 304 answers a card fetch's If-None-Match (the card is unchanged): no body, never a redirect
    if (statusCode === 304 && this.req.method === 'GET') return true
    const refusedHead = headersRefusal(this.s.budget, statusCode, contentLengthOf(rawHeaders), this.req)
    if (refusedHead !== undefined) this.refuse(refusedHead)
    return true
  }

  onData (chunk: Buffer): boolean {
    this.size += chunk.length
    const refusedBody = bodyRefusal(this.s.budget, this.size, this.status, this.req.maxBytes, this.req.hold)
    if (refusedBody !== undefined) this.refuse(refusedBody)
    else this.chunks.push(chunk)
    return true
  }

  onComplete (): void {
    this.unwatch()
    if (this.refused !== undefined) this.reject(this.refused)
    else this.resolve({ status: this.status, body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size), headers: this.headers, date: this.date })
  }

  onError (err: Error): void {
    this.unwatch()
    this.reject(this.refused ?? classifyTransportError(err, this.s.preConnect.has(err), Date.now() >= this.req.deadline))
  }

  private unwatch (): void {
    if (this.watch !== undefined) this.s.deadlines.unwatch(this.watch)
    this.watch = undefined
  }
}

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
