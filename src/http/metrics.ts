// Prometheus metrics (docs/design.md#metrics) on a registry of this app's own, so apps can be
// built side by side in tests. Labels are route templates and enums, never ids.
import fp from 'fastify-plugin'
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { FILE_REFUSALS, OPERATOR_FILES } from '../core/operator-files.js'
import { FastHistogram, type HistogramSeries } from '../core/histogram.js'
import { routeOf } from '../core/route-of.js'

export interface GatewayMetrics {
  registry: Registry
  httpRequests: Counter<'route' | 'method' | 'status'>
  /**
   * An answered request: counted by route, method and status until the next scrape (httpRequests)
   * and its duration observed (httpDuration), both found through one entry per route and method
   */
  answered: (route: string, method: string, status: number, seconds: number) => void
  /** readCoalesced.inc, counted until the next scrape */
  countCoalesced: () => void
  /** upstreamRequests.inc for every upstream exchange, batched (countedLater) */
  countUpstream: (op: string, outcome: string) => void
  httpDuration: FastHistogram<'route' | 'method'>
  upstreamRequests: Counter<'rpc_method' | 'outcome'>
  upstreamCircuitState: Gauge
  upstreamCircuitTransitions: Counter<'to'>
  upstreamDuration: FastHistogram<'rpc_method'>
  /** upstreamDuration's series of a logical operation, kept */
  upstreamDurationOf: (op: string) => HistogramSeries
  mutations: Counter<'operation' | 'outcome'>
  ambiguousMutations: Gauge
  capabilityAvailable: Gauge<'capability'>
  controllerMode: Gauge
  protocolVersion: Gauge<'version'>
  cardSignature: Gauge<'state'>
  discovery: Counter<'outcome'>
  rateLimited: Counter<'route'>
  /** 401s by why (src/callers/jwt.ts REFUSAL_REASONS); the reason is never told to the caller */
  authRefused: Counter<'reason'>
  rateLimitStoreErrors: Counter
  readCoalesced: Counter
  /** the A2A front door's requests by logical method (docs/api.md#a2a-front-door) */
  frontRequests: Counter<'rpc_method' | 'outcome'>
  connectionsDropped: Counter<'listener' | 'reason'>
  /** re-reads of a file an operator points at that were refused (src/core/operator-files.ts) */
  operatorFileRefusals: Counter<'file' | 'reason'>
  /** gauges read the discovery state at scrape time */
  bindDiscovery: (read: () => { capabilities: Record<string, { state: string }>; mode: string; protocol?: { version: string | undefined } | undefined; signature?: { state: string } | undefined }) => void
  /** the ambiguous-mutations gauge counts the ledger's unresolved records at scrape time */
  bindLedger: (countAmbiguous: () => Promise<number>) => void
  clockOffset: Gauge<'peer'>
  controllerConflicts: Counter
  /** grants per campaign refused (docs/design.md#grants), by reason (src/control/grants.ts AUTHZ_REFUSALS) */
  authzRefusals: Counter<'reason'>
  ledgerLockSessionsLost: Counter
}

/**
 * Seconds, 0.5 ms to 30 s (docs/design.md#metrics): a healthy gateway answers in about a
 * millisecond, a slow remote or a mutation takes seconds, and the longest request is bounded
 * by the upstream timeouts (15 s reads, 10 s mutations by default). prom-client's defaults start
 * at 5 ms and would put every healthy request in the first bucket.
 */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** prom-client defaults that break the exposition conventions, and are redundant */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/**
 * Increments of a counter kept in a plain map and handed to prom-client when the counter is read
 * (its `collect`, before every scrape): prom-client's `inc` validates and hashes the label set on
 * each call, twice per read (docs/design.md#hot-path; what that cost:
 * BENCHMARKS.md#hot-path-choices). The values scraped are the same; only the moment they are
 * added moves.
 */
function countedLater<L extends string> (): { add: (key: string, labels: () => Record<L, string>) => void; flush: (c: Counter<L>) => void } {
  const pending = new Map<string, { labels: Record<L, string>; n: number }>()
  return {
    add: (key, labels) => {
      const e = pending.get(key)
      if (e !== undefined) e.n++
      else pending.set(key, { labels: labels(), n: 1 })
    },
    flush: (c) => {
      for (const e of pending.values()) {
        if (e.n === 0) continue
        c.inc(e.labels as Partial<Record<L, string>>, e.n)
        e.n = 0
      }
    }
  }
}

/** what the metrics keep between a request and the next scrape: counts not yet handed to prom-client, and the sources gauges read */
interface MetricsState {
  registry: Registry
  registers: Registry[]
  readDiscovery: Parameters<GatewayMetrics['bindDiscovery']>[0] | undefined
  countAmbiguous: (() => Promise<number>) | undefined
  // per route and method: its duration series and its counts by status; in nested maps, as a key
  // made of the three was a new string to hash per request
  served: Map<string, Map<string, { duration: HistogramSeries; byStatus: Map<number, { labels: Record<'route' | 'method' | 'status', string>; n: number }> }>>
  coalesced: number
  upstreamCalls: ReturnType<typeof countedLater<'rpc_method' | 'outcome'>>
  // observed twice per read: prom-client's Histogram exposition, without its per-call label work
  // (src/core/histogram.ts); the series by route and method, and by operation, kept here
  httpDuration: FastHistogram<'route' | 'method'>
  upstreamDuration: FastHistogram<'rpc_method'>
  upstreamSeries: Map<string, HistogramSeries>
}

export function createMetrics (): GatewayMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // gauges named like counters (`promtool check metrics` refuses them); each is the sum over `type`
  // of nodejs_active_handles / _requests / _resources, which stay (docs/design.md#metrics)
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name)
  const registers = [registry]
  const state: MetricsState = {
    registry,
    registers,
    readDiscovery: undefined,
    countAmbiguous: undefined,
    served: new Map(),
    coalesced: 0,
    upstreamCalls: countedLater<'rpc_method' | 'outcome'>(),
    httpDuration: new FastHistogram('gateway_http_request_duration_seconds', 'HTTP request duration', ['route', 'method'], DURATION_BUCKETS, registers),
    upstreamDuration: new FastHistogram('gateway_upstream_request_duration_seconds', 'Upstream exchange duration', ['rpc_method'], DURATION_BUCKETS, registers),
    upstreamSeries: new Map()
  }
  return Object.assign({
    registry,
    answered: (route: string, method: string, status: number, seconds: number) => { answered(state, route, method, status, seconds) },
    countCoalesced: () => { state.coalesced++ },
    countUpstream: (op: string, outcome: string) => { state.upstreamCalls.add(`${op} ${outcome}`, () => ({ rpc_method: op, outcome })) },
    bindDiscovery: (read: Parameters<GatewayMetrics['bindDiscovery']>[0]) => { state.readDiscovery = read },
    bindLedger: (count: () => Promise<number>) => { state.countAmbiguous = count },
    upstreamDurationOf: (op: string) => upstreamDurationOf(state, op)
  }, httpMetrics(state), upstreamMetrics(state), remoteGauges(state), controlMetrics(state), edgeMetrics(state))
}

/** an answered request: its count by status, kept until the next scrape, and its duration */
function answered (state: MetricsState, route: string, method: string, status: number, seconds: number): void {
  let byMethod = state.served.get(route)
  if (byMethod === undefined) state.served.set(route, byMethod = new Map())
  let entry = byMethod.get(method)
  if (entry === undefined) byMethod.set(method, entry = { duration: state.httpDuration.series({ route, method }), byStatus: new Map() })
  let cell = entry.byStatus.get(status)
  if (cell === undefined) entry.byStatus.set(status, cell = { labels: { route, method, status: String(status) }, n: 0 })
  cell.n++
  entry.duration.observe(seconds)
}

function upstreamDurationOf (state: MetricsState, op: string): HistogramSeries {
  let s = state.upstreamSeries.get(op)
  if (s === undefined) state.upstreamSeries.set(op, s = state.upstreamDuration.series({ rpc_method: op }))
  return s
}

/** the requests served, handed to prom-client at each scrape */
function httpMetrics (state: MetricsState): Pick<GatewayMetrics, 'httpRequests' | 'httpDuration' | 'readCoalesced'> {
  const { registers } = state
  return {
    httpRequests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests served',
      labelNames: ['route', 'method', 'status'],
      registers,
      collect () {
        for (const byMethod of state.served.values()) {
          for (const { byStatus } of byMethod.values()) {
            for (const cell of byStatus.values()) {
              if (cell.n === 0) continue
              this.inc(cell.labels, cell.n)
              cell.n = 0
            }
          }
        }
      }
    }),
    httpDuration: state.httpDuration,
    readCoalesced: new Counter({
      name: 'gateway_read_coalesced_total',
      help: 'Reads served by an identical upstream call already in flight',
      registers,
      // counted here, handed over at each scrape (as countedLater does)
      collect () {
        if (state.coalesced > 0) this.inc(state.coalesced)
        state.coalesced = 0
      }
    })
  }
}

/** the exchanges with the remote and its circuit breaker */
function upstreamMetrics (state: MetricsState): Pick<GatewayMetrics, 'upstreamRequests' | 'upstreamCircuitState' | 'upstreamCircuitTransitions' | 'upstreamDuration'> {
  const { registers } = state
  return {
    upstreamRequests: new Counter({ name: 'gateway_upstream_requests_total', help: 'Upstream exchanges by logical operation and outcome', labelNames: ['rpc_method', 'outcome'], registers, collect () { state.upstreamCalls.flush(this) } }),
    upstreamCircuitState: new Gauge({ name: 'gateway_upstream_circuit_state', help: 'The upstream circuit breaker: 0 closed, 1 half-open (one read probes), 2 open (reads refused at once)', registers }),
    upstreamCircuitTransitions: new Counter({ name: 'gateway_upstream_circuit_transitions_total', help: 'Upstream circuit breaker state changes, by the state entered', labelNames: ['to'], registers }),
    upstreamDuration: state.upstreamDuration
  }
}

/** what the remote says it is, read from discovery at scrape time */
function remoteGauges (state: MetricsState): Pick<GatewayMetrics, 'capabilityAvailable' | 'controllerMode' | 'protocolVersion' | 'cardSignature' | 'discovery' | 'clockOffset'> {
  const { registers } = state
  return {
    capabilityAvailable: new Gauge({
      name: 'gateway_capability_available',
      help: '1 when the logical capability is available',
      labelNames: ['capability'],
      registers,
      collect () {
        for (const [capability, c] of Object.entries(state.readDiscovery?.().capabilities ?? {})) this.set({ capability }, c.state === 'available' ? 1 : 0)
      }
    }),
    controllerMode: new Gauge({
      name: 'gateway_controller_mode',
      help: '1 in controller mode, 0 in observer mode',
      registers,
      collect () { this.set(state.readDiscovery?.().mode === 'controller' ? 1 : 0) }
    }),
    // which A2A generation is spoken (docs/design.md#protocol-versions): 1 for the one in use, none when none can be
    protocolVersion: new Gauge({
      name: 'gateway_upstream_protocol_version',
      help: '1 for the A2A protocol version spoken with the remote (0.3 or 1.0)',
      labelNames: ['version'],
      registers,
      collect () {
        const v = state.readDiscovery?.().protocol?.version
        for (const version of ['0.3', '1.0']) this.set({ version }, v === version ? 1 : 0)
      }
    }),
    // the held card's signature state (docs/design.md#signed-cards); a refused card counts in gateway_discovery_total{outcome="failed"}
    cardSignature: new Gauge({
      name: 'gateway_card_signature',
      help: '1 for the signature state of the card in use: absent, present (not verified), verified',
      labelNames: ['state'],
      registers,
      collect () {
        const s = state.readDiscovery?.().signature?.state
        for (const signature of ['absent', 'present', 'verified']) this.set({ state: signature }, s === signature ? 1 : 0)
      }
    }),
    discovery: new Counter({ name: 'gateway_discovery_total', help: 'Agent card refreshes by outcome', labelNames: ['outcome'], registers }),
    // docs/design.md#one-clock: the peer's clock minus this replica's, as last measured (the value nearest zero its uncertainty allows)
    clockOffset: new Gauge({ name: 'gateway_clock_offset_seconds', help: 'Offset of the ledger\'s and the remote\'s clock from this replica\'s (peer minus local), as last measured; past GATEWAY_LEASE_SAFETY_MS mutations are refused with 503 clock_skew', labelNames: ['peer'], registers })
  }
}

/** mutations and who may make them */
function controlMetrics (state: MetricsState): Pick<GatewayMetrics, 'mutations' | 'ambiguousMutations' | 'authzRefusals' | 'controllerConflicts' | 'ledgerLockSessionsLost' | 'frontRequests'> {
  const { registers } = state
  return {
    mutations: new Counter({ name: 'gateway_mutations_total', help: 'Mutations by operation and outcome', labelNames: ['operation', 'outcome'], registers }),
    ambiguousMutations: new Gauge({
      name: 'gateway_ambiguous_mutations',
      help: 'Unresolved ambiguous mutations',
      registers,
      async collect () {
        if (state.countAmbiguous === undefined) return
        try {
          this.set(await state.countAmbiguous())
        } catch {
          // an unreachable ledger leaves the last value rather than failing the whole scrape
        }
      }
    }),
    // docs/design.md#grants
    authzRefusals: new Counter({ name: 'gateway_authz_refusals_total', help: 'Requests refused for want of a grant to the campaign, its project or its task (403 campaign_forbidden; the front door\'s -32010, or -32001 for a task), by reason: no_grants, campaign_not_granted, project_unknown, project_not_granted, task_unknown', labelNames: ['reason'] as const, registers }),
    // docs/design.md#controller-bindings
    controllerConflicts: new Counter({ name: 'gateway_controller_conflicts_total', help: 'Mutations refused with 403 controller_conflict: another caller identity holds the controller id', registers }),
    // docs/design.md#serialisation: a held campaign lock whose database session died; nothing relied on it
    ledgerLockSessionsLost: new Counter({ name: 'gateway_ledger_lock_sessions_lost_total', help: 'Campaign lock sessions the PostgreSQL server dropped while held (failover, terminated backend, pooler timeout); the ledger\'s insert checks still serialise', registers }),
    frontRequests: new Counter({ name: 'gateway_a2a_requests_total', help: 'JSON-RPC requests to the A2A front door by logical method and outcome (ok, or the error code)', labelNames: ['rpc_method', 'outcome'] as const, registers })
  }
}

/** refusals at the edges: rate limits, authentication, connections, operator files */
function edgeMetrics (state: MetricsState): Pick<GatewayMetrics, 'rateLimited' | 'authRefused' | 'rateLimitStoreErrors' | 'connectionsDropped' | 'operatorFileRefusals'> {
  const { registers } = state
  return {
    rateLimited: new Counter({ name: 'gateway_rate_limited_total', help: 'Requests refused by the rate limit', labelNames: ['route'], registers }),
    authRefused: new Counter({ name: 'gateway_auth_refused_total', help: 'Authentications refused (401), by reason: missing, unknown_token, expired, not_yet_valid, malformed, algorithm, unknown_kid, signature, claims, no_keys, controller_conflict', labelNames: ['reason'], registers }),
    rateLimitStoreErrors: new Counter({ name: 'gateway_rate_limit_store_errors_total', help: 'Rate-limit store (Redis) calls that failed, or were skipped while the store backs off after a failure; the request was served (fail open)', registers }),
    // reason: max_connections (the listener's cap), per_address (the bound per client address), accept_error (no descriptor left)
    connectionsDropped: new Counter({ name: 'gateway_http_connections_dropped_total', help: 'Connections closed on arrival, by listener (api, metrics) and reason (max_connections, per_address, accept_error)', labelNames: ['listener', 'reason'], registers }),
    // docs/design.md#operator-files: every series from the start, so that an alert on increase() sees the first refusal
    operatorFileRefusals: zeroed(new Counter({ name: 'gateway_operator_file_refusals_total', help: 'Re-reads of GATEWAY_CALLERS_FILE, GATEWAY_JWT_JWKS_FILE or GATEWAY_CARD_JWKS_FILE refused (too_large: over 1 MiB, unreadable, invalid); the previous contents stay in force', labelNames: ['file', 'reason'], registers }))
  }
}

function zeroed (c: Counter<'file' | 'reason'>): Counter<'file' | 'reason'> {
  for (const file of OPERATOR_FILES) for (const reason of FILE_REFUSALS) c.inc({ file, reason }, 0)
  return c
}

declare module 'fastify' {
  interface FastifyInstance { metrics: GatewayMetrics }
}

export default fp<{ metrics: GatewayMetrics }>(async (app, opts) => {
  app.decorate('metrics', opts.metrics)
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request).url ?? 'unmatched'
    const method = request.method
    opts.metrics.answered(route, method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}, { name: 'metrics' })
