// The one way out to the remote (docs/design.md#upstream-wire-rules). Undici only; traffic and
// the secret go to the configured origin alone; no redirect is ever followed; every body is read
// under a byte cap while it streams; reads may be retried once when nothing was sent, mutations
// never. Here the client's assembly and its calls, each a function of the state the client holds
// (`ClientState`, made once: client/state.ts); the exchanges and their refusals in
// client/exchange.ts and client/rpc-exchange.ts, an answer read in client/answer.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Hold } from './byte-budget.js'
import { jsonString } from '../core/json-text.js'
import { randomUuid } from '../core/random-uuid.js'
import { UpstreamCallError } from './errors.js'
import { openClientState, withAuth, type ClientState } from './client/state.js'
import { exchange } from './client/exchange.js'
import { rpcExchange } from './client/rpc-exchange.js'
import { parseRpc } from './client/answer.js'
import type { Exchange, ExchangeRequest, GetOptions, GetResult, RpcCall, RpcResult, UpstreamClient, UpstreamClientOptions } from './client/types.js'

export type { GetOptions, GetResult, RpcCall, RpcResult, UpstreamClient, UpstreamClientOptions } from './client/types.js'
export { DEFAULT_BODY_BUDGET_BYTES, DEFAULT_READ_QUEUE_MAX, READ_CONNECTIONS, tlsOptionsFor } from './client/state.js'

const ACCEPT_JSON = Object.freeze({ accept: 'application/json' })

export function createUpstreamClient (o: UpstreamClientOptions): UpstreamClient {
  const s = openClientState(o)
  return {
    rpc: (call) => call.kind === 'mutation' ? mutate(s, call) : readCall(s, call),
    get: (suffix, opts) => get(s, suffix, opts),
    // called once the API has stopped serving: an exchange still open belongs to a request the
    // drain cut, or to a discovery refresh, so it is aborted rather than waited for
    close: () => close(s)
  }
}

/** a flat id, not randomUUID's rope of twenty pieces (src/core/random-uuid.ts) */
const idOf = (call: RpcCall): string => call.id ?? randomUuid()

/** JSON.stringify of { jsonrpc, id, method, params }, its fixed part by hand (src/core/json-text.ts) */
const rpcBody = (id: string, call: RpcCall): string => '{"jsonrpc":"2.0","id":' + jsonString(id) + ',"method":' + jsonString(call.method) + ',"params":' + JSON.stringify(call.params) + '}'

async function mutate (s: ClientState, call: RpcCall): Promise<RpcResult> {
  const id = idOf(call)
  const body = rpcBody(id, call)
  const headers = withAuth(s, s.rpcHeaders, call.headers)
  const maxBytes = call.maxBytes ?? s.o.maxResponseBytes
  const deadline = Math.min(call.deadline ?? Infinity, Date.now() + s.o.mutationTimeoutMs)
  return await timed(s, call.op, () => sendMutation(s, call.op, id, body, headers, maxBytes, deadline))
}

/**
 * A fresh connection per mutation and no retry: failure before the connection is up means
 * nothing was sent; anything after is ambiguous, never repeated (docs/design.md#single-shot).
 * `reset` makes the socket carry this request alone and close after it; the pool's client then
 * connects anew for the next send, whatever the remote's keep-alive
 */
async function sendMutation (s: ClientState, op: string, id: string, body: string, headers: Record<string, string>, maxBytes: number, deadline: number): Promise<RpcResult> {
  const ex = await exchange(s, s.mutationPool, { method: 'POST', path: s.rpcPath, body, headers, maxBytes, deadline, reset: true })
  return parseRpc(s, ex, id, op)
}

/**
 * A JSON-RPC read: timed, each attempt a socket from the gate, the exchange and the answer parsed
 * while its bytes are held, retried once when nothing was sent (retryPause). What `timed` and
 * `withReadRetry` do for a card fetch, written out in one async frame: each wrapper, and the
 * attempt and the exchange as functions of their own, was a promise, a suspended frame and an
 * await more a read, ~250 bytes an await (docs/design.md#hot-path).
 */
async function readCall (s: ClientState, call: RpcCall): Promise<RpcResult> {
  const id = idOf(call)
  const body = rpcBody(id, call)
  const headers = withAuth(s, s.rpcHeaders, call.headers)
  const maxBytes = call.maxBytes ?? s.o.maxResponseBytes
  const deadline = Math.min(call.deadline ?? Infinity, Date.now() + s.o.readTimeoutMs)
  const start = performance.now()
  try {
    let r: RpcResult | undefined
    for (let retried = false; ; retried = true) {
      const hold: Hold | undefined = call.budgeted === true ? { bytes: 0 } : undefined
      let pause: number | undefined
      try {
        if (deadline - Date.now() <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
        // no per-call signal or timer (docs/design.md#hot-path): a waiter leaves at its deadline by the gate's own timer
        const ticket = await s.gate.acquire(deadline, undefined, false)
        let ex: Exchange
        try {
          ex = await rpcExchange(s, s.readPool, { method: 'POST', path: s.rpcPath, body, headers, maxBytes, deadline, hold, withDate: call.withDate, withHeaders: false })
        } finally {
          s.gate.release(ticket, true)
        }
        r = parseRpc(s, ex, id, call.op)
        if (r.ok && ex.date !== undefined) r.date = ex.date
      } catch (err) {
        pause = retried ? undefined : retryPause(err, deadline)
        if (pause === undefined) throw err
      } finally {
        // held until parsed: the chunks, the string and the object graph all live until here
        if (hold !== undefined) s.budget.release(hold)
      }
      if (r !== undefined) break
      await sleep(pause)
    }
    s.o.observe?.(call.op, r.ok ? 'ok' : 'rpc_error', (performance.now() - start) / 1e3)
    return r
  } catch (err) {
    s.o.observe?.(call.op, err instanceof UpstreamCallError ? err.outcome : 'network', (performance.now() - start) / 1e3)
    throw err
  }
}

async function get (s: ClientState, suffix: string, opts: GetOptions): Promise<GetResult> {
  if (!suffix.startsWith('/') || suffix.includes('//') || suffix.includes('..')) throw new Error('discovery paths are fixed suffixes of the A2A base')
  const deadline = Math.min(opts.deadline ?? Infinity, Date.now() + s.o.readTimeoutMs)
  return await timed(s, opts.op, () => withReadRetry(deadline, async () => {
    // the fields of a JSON-RPC read's request, in its order: one shape for both (readCall)
    return await cardExchange(s, { method: 'GET', path: `${s.o.basePath}${suffix}`, body: undefined, headers: Object.assign({}, opts.headers, ACCEPT_JSON, s.authHeaders), maxBytes: opts.maxBytes, deadline, hold: undefined, withDate: false, withHeaders: true })
  }))
}

/**
 * a card fetch on the read Pool, through the gate: it waits first, and does not feed the estimate
 * (JSON-RPC reads do: readCall); its answer read as theirs is, headers kept (rpcExchange)
 */
async function cardExchange (s: ClientState, req: ExchangeRequest): Promise<Exchange> {
  if (req.deadline - Date.now() <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
  const ticket = await s.gate.acquire(req.deadline, undefined, true)
  try {
    return await rpcExchange(s, s.readPool, req)
  } finally {
    s.gate.release(ticket, false)
  }
}

/** the hand-written single retry of a read: once, with jitter (retryPause) */
async function withReadRetry<T> (deadline: number, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt()
  } catch (err) {
    const pause = retryPause(err, deadline)
    if (pause === undefined) throw err
    await sleep(pause)
    return await attempt()
  }
}

/** how long a read waits before its one retry: only when nothing was sent, with jitter, and not past the deadline; undefined for no retry */
function retryPause (err: unknown, deadline: number): number | undefined {
  if (!(err instanceof UpstreamCallError) || !err.nothingSent || err.kind !== 'unreachable') return undefined
  const jitter = 50 + Math.floor(Math.random() * 150)
  return Date.now() + jitter >= deadline ? undefined : jitter
}

async function timed<T extends { ok: boolean } | GetResult> (s: ClientState, op: string, fn: () => Promise<T>): Promise<T> {
  // the monotonic clock as a double: hrtime.bigint made three BigInts and a closure a call
  const start = performance.now()
  try {
    const r = await fn()
    s.o.observe?.(op, 'ok' in r && !r.ok ? 'rpc_error' : 'ok', (performance.now() - start) / 1e3)
    return r
  } catch (err) {
    s.o.observe?.(op, err instanceof UpstreamCallError ? err.outcome : 'network', (performance.now() - start) / 1e3)
    throw err
  }
}

async function close (s: ClientState): Promise<void> {
  s.deadlines.close()
  // a mutation still in flight finishes as it would have on a connection of its own
  s.mutationPool.close().catch(() => undefined)
  await s.readPool.destroy()
}
