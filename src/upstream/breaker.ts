// The circuit breaker on the upstream (docs/design.md#circuit-breaker), on cockatiel's: after
// consecutive timeouts or connect failures it opens, and reads are refused at once (503
// upstream_unavailable with Retry-After) instead of each waiting out its timeout until the read
// gate fills; after a pause one read probes (half-open) and its success closes it. Mutations
// never pass through it — no retry, no probe: they bypass it, and an open or probing breaker
// refuses them before anything is written (the control plane asks `admitsMutations`).
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel'
import type { Logger } from 'pino'
import type { UpstreamClient } from './client.js'
import { UpstreamCallError } from './errors.js'

export type CircuitView = 'closed' | 'open' | 'half_open'

export interface UpstreamCircuit {
  /** reads and discovery through the breaker; mutations straight to the client */
  wrap: (client: UpstreamClient) => UpstreamClient
  state: () => CircuitView
  /** undefined while closed; else the seconds until a probe may be tried (a Retry-After) */
  retryAfterSeconds: () => number | undefined
}

export interface UpstreamCircuitOptions {
  /** consecutive timeouts or connect failures that open it */
  failures: number
  /** how long it stays open before one call probes */
  halfOpenAfterMs: number
  logger: Logger
  onChange?: (state: CircuitView) => void
}

const VIEW: Record<CircuitState, CircuitView> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open'
}

/** the remote not answering at all: what a breaker is for (a refusal or an error is an answer) */
const remoteDown = (err: unknown): boolean => err instanceof UpstreamCallError && (err.kind === 'timeout' || err.kind === 'unreachable')

export function createUpstreamCircuit (o: UpstreamCircuitOptions): UpstreamCircuit {
  const policy = circuitBreaker(handleWhen(remoteDown), { halfOpenAfter: o.halfOpenAfterMs, breaker: new ConsecutiveBreaker(o.failures) })
  let openedAt = 0
  policy.onStateChange((s) => {
    const view = VIEW[s]
    if (s === CircuitState.Open) openedAt = Date.now()
    const fields = { event: 'upstream_circuit', state: view, failures: o.failures, halfOpenAfterMs: o.halfOpenAfterMs }
    if (view === 'open') o.logger.warn(fields, 'upstream circuit opened: reads refused at once until a probe succeeds')
    else o.logger.info(fields, view === 'closed' ? 'upstream circuit closed' : 'upstream circuit half-open: one call probes')
    o.onChange?.(view)
  })

  const retryAfterSeconds = (): number | undefined => {
    const view = VIEW[policy.state]
    if (view === 'closed') return undefined
    if (view === 'half_open') return 1
    return Math.max(1, Math.ceil((openedAt + o.halfOpenAfterMs - Date.now()) / 1000))
  }

  async function through<T> (fn: () => Promise<T>): Promise<T> {
    try {
      return await policy.execute(fn)
    } catch (err) {
      if (err instanceof BrokenCircuitError) throw new UpstreamCallError('circuit_open', { nothingSent: true, retryAfterSeconds: retryAfterSeconds() ?? 1, cause: err })
      throw err
    }
  }

  /**
   * Closed, cockatiel's `execute` answers with the call's own result or error, never a
   * BrokenCircuitError (it reads the state before its first await, as this does): the call goes to
   * it without `through`'s async frame, a promise and an await fewer a read (docs/design.md#hot-path)
   */
  function guarded<T> (fn: () => Promise<T>): Promise<T> {
    return policy.state === CircuitState.Closed ? policy.execute(fn) : through(fn)
  }

  return {
    // the promises of the client and of `guarded` handed on, not awaited again in an async frame
    // of their own (docs/design.md#hot-path): all are async, so nothing is thrown here
    wrap: (client) => ({
      rpc: (call) => call.kind === 'mutation' ? client.rpc(call) : guarded(() => client.rpc(call)),
      get: (suffix, opts) => guarded(() => client.get(suffix, opts)),
      close: client.close
    }),
    state: () => VIEW[policy.state],
    retryAfterSeconds
  }
}
