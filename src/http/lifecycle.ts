// The drain state as `app.lifecycle` (docs/design.md#shutdown): which requests are in flight,
// and, once the drain begins, the refusal of every new request but the probes with 503
// `shutting_down` in the contract's shape (Fastify's own `return503OnClosing` body is not).
// While draining, each connection ends with the answer to the last request received on it
// (`Connection: close` on that answer, set by src/http/edges-plugin.ts), so a refusal pipelined
// behind a request in flight is delivered too.
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../core/errors.js'
import { LiveList, type LiveNode } from '../core/live-list.js'

export interface InFlightRequest { reqId: string; method: string; route: string; elapsedMs: number }

export interface Lifecycle {
  readonly draining: boolean
  /** readiness 503 and new requests refused from now on; idempotent */
  beginDrain: () => void
  inFlight: () => number
  /** the requests between their arrival and their answer, for the log line of each one cut */
  pending: () => InFlightRequest[]
}

declare module 'fastify' {
  interface FastifyInstance { lifecycle: Lifecycle }
}

/** the request's entry among those in flight */
const LIVE = Symbol('oogw.live')
type Tracked = FastifyRequest & { [LIVE]?: LiveNode<FastifyRequest> }

/** answered while draining: the ingress learns from /readyz, the orchestrator from /healthz */
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz'])
/** seconds a refused caller should wait: enough for the ingress to stop routing here */
export const SHUTDOWN_RETRY_AFTER_S = 5

export default fp(async (app) => {
  let draining = false
  // the requests in flight and when each arrived: a list, not a Map keyed by request, which kept
  // request graphs alive into the old generation (src/core/live-list.ts)
  const live = new LiveList<FastifyRequest>()
  const untrack = (request: Tracked): void => {
    const node = request[LIVE]
    if (node !== undefined) live.remove(node)
  }
  const lifecycle: Lifecycle = {
    get draining () { return draining },
    beginDrain: () => { draining = true },
    inFlight: () => live.size,
    pending: () => {
      const now = performance.now()
      return [...live.entries()].map(([r, at]) => ({ reqId: r.id, method: r.method, route: r.routeOptions.url ?? 'unmatched', elapsedMs: Math.round(now - at) }))
    }
  }
  app.decorate('lifecycle', lifecycle)
  // any app.close() drains, not only the one server.ts begins
  app.addHook('preClose', async () => { draining = true })

  // callback-style hooks on the hot path: an async hook costs a promise and a microtask per
  // request (docs/design.md#hot-path)
  app.addHook('onRequest', (request, _reply, next) => {
    if (draining && !PROBES.has(request.routeOptions.url ?? '')) {
      next(new GatewayError('shutting_down', { headers: { 'retry-after': String(SHUTDOWN_RETRY_AFTER_S) } }))
      return
    }
    ;(request as Tracked)[LIVE] = live.add(request, performance.now())
    next()
  })
  app.addHook('onResponse', (request, _reply, next) => { untrack(request); next() })
  app.addHook('onRequestAbort', (request, next) => { untrack(request); next() })
}, { name: 'lifecycle' })
