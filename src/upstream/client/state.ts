// What one upstream client holds, made once (createUpstreamClient, src/upstream/client.ts): the
// verifying connector, the read Pool and its gate, the body budget, the deadline sweep, the
// secret's matcher and the headers every call carries. Each part of the client is a function of
// this state; nothing of it is made per call (docs/design.md#hot-path).
import { rootCertificates } from 'node:tls'
import { Pool, buildConnector } from 'undici'
import { createReadGate, type ReadGate } from '../read-gate.js'
import { createByteBudget, type ByteBudget } from '../byte-budget.js'
import { createDeadlineSweeper, type DeadlineSweeper } from '../deadlines.js'
import { secretMatcher, type SecretMatcher } from '../../core/secret-match.js'
import type { UpstreamClientOptions } from './types.js'

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

export interface ClientState {
  readonly o: UpstreamClientOptions
  /** every connection's connector, the read Pool's and each mutation's Client's */
  readonly connect: buildConnector.connector
  /** errors produced inside the connector: they happened before any request byte was written */
  readonly preConnect: WeakSet<object>
  readonly readPool: Pool
  /**
   * the mutations' connections: every send asks for `reset`, so a socket carries one request and
   * closes, and the next send on that client connects anew (docs/design.md#single-shot); the
   * pool keeps the clients, not their sockets, so no client is built and destroyed per mutation
   */
  readonly mutationPool: Pool
  readonly deadlines: DeadlineSweeper
  readonly gate: ReadGate
  readonly budget: ByteBudget
  /** built once: every answer is searched for the secret before anything of it is used */
  readonly echo: SecretMatcher | undefined
  /** the credential's header, alone */
  readonly authHeaders: Record<string, string>
  /** a JSON-RPC call's headers without extra ones, built once (docs/design.md#hot-path): no object built per call */
  readonly rpcHeaders: Record<string, string>
  /** every JSON-RPC call's path, made once */
  readonly rpcPath: string
}

export function openClientState (o: UpstreamClientOptions): ClientState {
  const preConnect = new WeakSet<object>()
  const connect = verifyingConnector(o, preConnect)
  const readPool = new Pool(o.origin, {
    connect,
    connections: READ_CONNECTIONS,
    headersTimeout: o.readTimeoutMs,
    bodyTimeout: o.readTimeoutMs,
    keepAliveTimeout: 4000
  })
  const mutationPool = new Pool(o.origin, { connect, pipelining: 1, headersTimeout: o.mutationTimeoutMs, bodyTimeout: o.mutationTimeoutMs })
  const deadlines = createDeadlineSweeper()
  const gate = createReadGate({ slots: READ_CONNECTIONS, max: o.readQueueMax ?? DEFAULT_READ_QUEUE_MAX })
  const budget = createByteBudget(o.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES)
  const echo = o.secret !== undefined && o.secret !== '' ? secretMatcher(o.secret) : undefined
  const authHeaders: Record<string, string> = {}
  if (o.secret !== undefined) {
    if (o.authScheme === 'bearer') authHeaders.authorization = `Bearer ${o.secret}`
    else authHeaders['x-api-key'] = o.secret
  }
  const rpcHeaders: Record<string, string> = Object.freeze(Object.assign({ 'content-type': 'application/json', accept: 'application/json' }, authHeaders))
  return { o, connect, preConnect, readPool, mutationPool, deadlines, gate, budget, echo, authHeaders, rpcHeaders, rpcPath: `${o.basePath}/` }
}

/** undici's connector with the TLS options (tlsOptionsFor), marking the errors it produces in `preConnect` */
function verifyingConnector (o: UpstreamClientOptions, preConnect: WeakSet<object>): buildConnector.connector {
  const baseConnector = buildConnector(Object.assign({}, tlsOptionsFor(o.caPem), { timeout: o.connectTimeoutMs }))
  return (opts, cb) => {
    baseConnector(opts, (err, socket) => {
      if (err !== null && typeof err === 'object') preConnect.add(err)
      if (err !== null) cb(err, null)
      else cb(null, socket)
    })
  }
}

/** the credential last, over any header of the same name a caller gave */
export function withAuth (s: ClientState, base: Record<string, string>, extra: Record<string, string> | undefined): Record<string, string> {
  if (extra === undefined || Object.keys(extra).length === 0) return base
  return Object.assign({}, base, extra, s.authHeaders)
}
