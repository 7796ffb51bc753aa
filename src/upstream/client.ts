// The one way out to the remote (docs/design.md#upstream-wire-rules). Undici only; traffic and
// the secret go to the configured origin alone; no redirect is ever followed; every body is read
// under a byte cap while it streams; reads may be retried once when nothing was sent, mutations
// never. Here the client's assembly and its calls, each a function of the state the client holds
// (`ClientState`, made once: client/state.ts); the exchanges and their refusals in
// client/exchange.ts and client/rpc-exchange.ts, an answer read in client/answer.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from 'undici'
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
    rpc: (call) => rpc(s, call),
    get: (suffix, opts) => get(s, suffix, opts),
    // called once the API has stopped serving: an exchange still open belongs to a request the
    // drain cut, or to a discovery refresh, so it is aborted rather than waited for
    close: () => close(s)
  }
}

async function rpc (s: ClientState, call: RpcCall): Promise<RpcResult> {
  // a flat id, not randomUUID's rope of twenty pieces (src/core/random-uuid.ts)
  const id = call.id ?? randomUuid()
  // JSON.stringify of { jsonrpc, id, method, params }, its fixed part by hand (src/core/json-text.ts)
  const body = '{"jsonrpc":"2.0","id":' + jsonString(id) + ',"method":' + jsonString(call.method) + ',"params":' + JSON.stringify(call.params) + '}'
  const headers = withAuth(s, s.rpcHeaders, call.headers)
  const maxBytes = call.maxBytes ?? s.o.maxResponseBytes
  if (call.kind === 'mutation') {
    const deadline = Math.min(call.deadline ?? Infinity, Date.now() + s.o.mutationTimeoutMs)
    return await timed(s, call.op, () => sendMutation(s, call.op, id, body, headers, maxBytes, deadline))
  }
  const deadline = Math.min(call.deadline ?? Infinity, Date.now() + s.o.readTimeoutMs)
  return await timed(s, call.op, () => withReadRetry(deadline, () => readOnce(s, call, id, body, headers, maxBytes, deadline)))
}

/**
 * A fresh connection per mutation and no retry: failure before the connection is up means
 * nothing was sent; anything after is ambiguous, never repeated (docs/design.md#single-shot)
 */
async function sendMutation (s: ClientState, op: string, id: string, body: string, headers: Record<string, string>, maxBytes: number, deadline: number): Promise<RpcResult> {
  const client = new Client(s.o.origin, { connect: s.connect, pipelining: 1, headersTimeout: s.o.mutationTimeoutMs, bodyTimeout: s.o.mutationTimeoutMs })
  try {
    const ex = await exchange(s, client, { method: 'POST', path: s.rpcPath, body, headers, maxBytes, deadline, reset: true })
    return parseRpc(s, ex, id, op)
  } finally {
    client.destroy().catch(() => undefined)
  }
}

/** one attempt of a JSON-RPC read (withReadRetry may make a second) */
async function readOnce (s: ClientState, call: RpcCall, id: string, body: string, headers: Record<string, string>, maxBytes: number, deadline: number): Promise<RpcResult> {
  const hold: Hold | undefined = call.budgeted === true ? { bytes: 0 } : undefined
  try {
    const ex = await readExchange(s, { method: 'POST', path: s.rpcPath, body, headers, maxBytes, deadline, hold, withDate: call.withDate }, false)
    const r = parseRpc(s, ex, id, call.op)
    if (r.ok && ex.date !== undefined) r.date = ex.date
    return r
  } finally {
    // held until parsed: the chunks, the string and the object graph all live until here
    if (hold !== undefined) s.budget.release(hold)
  }
}

async function get (s: ClientState, suffix: string, opts: GetOptions): Promise<GetResult> {
  if (!suffix.startsWith('/') || suffix.includes('//') || suffix.includes('..')) throw new Error('discovery paths are fixed suffixes of the A2A base')
  const deadline = Math.min(opts.deadline ?? Infinity, Date.now() + s.o.readTimeoutMs)
  return await timed(s, opts.op, () => withReadRetry(deadline, async () => {
    return await readExchange(s, { method: 'GET', path: `${s.o.basePath}${suffix}`, headers: Object.assign({}, opts.headers, ACCEPT_JSON, s.authHeaders), maxBytes: opts.maxBytes, deadline }, true)
  }))
}

/** an exchange on the read Pool, through the gate: discovery waits first, JSON-RPC reads feed the estimate */
async function readExchange (s: ClientState, req: ExchangeRequest, discovery: boolean): Promise<Exchange> {
  if (req.deadline - Date.now() <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
  // no per-call signal or timer (docs/design.md#hot-path): a waiter leaves at its deadline by the gate's own timer
  const ticket = await s.gate.acquire(req.deadline, undefined, discovery)
  try {
    return await (req.method === 'POST' ? rpcExchange(s, s.readPool, req) : exchange(s, s.readPool, req))
  } finally {
    s.gate.release(ticket, !discovery)
  }
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
  await s.readPool.destroy()
}
