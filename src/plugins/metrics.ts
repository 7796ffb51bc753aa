// Prometheus metrics (docs/design.md#metrics) on a registry of this app's own, so apps can be
// built side by side in tests. Labels are route templates and enums, never ids.
import fp from 'fastify-plugin'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface GatewayMetrics {
  registry: Registry
  httpRequests: Counter<'route' | 'method' | 'status'>
  httpDuration: Histogram<'route' | 'method'>
  upstreamRequests: Counter<'rpc_method' | 'outcome'>
  upstreamDuration: Histogram<'rpc_method'>
  mutations: Counter<'operation' | 'outcome'>
  ambiguousMutations: Gauge
  capabilityAvailable: Gauge<'capability'>
  controllerMode: Gauge
  discovery: Counter<'outcome'>
  rateLimited: Counter<'route'>
  rateLimitStoreErrors: Counter
  readCoalesced: Counter
  connectionsDropped: Counter
  /** gauges read the discovery state at scrape time */
  bindDiscovery: (read: () => { capabilities: Record<string, { state: string }>; mode: string }) => void
  /** the ambiguous-mutations gauge counts the ledger's unresolved records at scrape time */
  bindLedger: (countAmbiguous: () => Promise<number>) => void
}

export function createMetrics (): GatewayMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  let readDiscovery: (() => { capabilities: Record<string, { state: string }>; mode: string }) | undefined
  let countAmbiguous: (() => Promise<number>) | undefined
  return {
    bindDiscovery: (read) => { readDiscovery = read },
    bindLedger: (count) => { countAmbiguous = count },
    registry,
    httpRequests: new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests served', labelNames: ['route', 'method', 'status'], registers }),
    httpDuration: new Histogram({ name: 'gateway_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['route', 'method'], registers }),
    upstreamRequests: new Counter({ name: 'gateway_upstream_requests_total', help: 'Upstream exchanges by logical operation and outcome', labelNames: ['rpc_method', 'outcome'], registers }),
    upstreamDuration: new Histogram({ name: 'gateway_upstream_request_duration_seconds', help: 'Upstream exchange duration', labelNames: ['rpc_method'], registers }),
    mutations: new Counter({ name: 'gateway_mutations_total', help: 'Mutations by operation and outcome', labelNames: ['operation', 'outcome'], registers }),
    ambiguousMutations: new Gauge({
      name: 'gateway_ambiguous_mutations',
      help: 'Unresolved ambiguous mutations',
      registers,
      async collect () {
        if (countAmbiguous === undefined) return
        try {
          this.set(await countAmbiguous())
        } catch {
          // an unreachable ledger leaves the last value rather than failing the whole scrape
        }
      }
    }),
    capabilityAvailable: new Gauge({
      name: 'gateway_capability_available',
      help: '1 when the logical capability is available',
      labelNames: ['capability'],
      registers,
      collect () {
        for (const [capability, c] of Object.entries(readDiscovery?.().capabilities ?? {})) this.set({ capability }, c.state === 'available' ? 1 : 0)
      }
    }),
    controllerMode: new Gauge({
      name: 'gateway_controller_mode',
      help: '1 in controller mode, 0 in observer mode',
      registers,
      collect () { this.set(readDiscovery?.().mode === 'controller' ? 1 : 0) }
    }),
    discovery: new Counter({ name: 'gateway_discovery_total', help: 'Agent card refreshes by outcome', labelNames: ['outcome'], registers }),
    rateLimited: new Counter({ name: 'gateway_rate_limited_total', help: 'Requests refused by the rate limit', labelNames: ['route'], registers }),
    rateLimitStoreErrors: new Counter({ name: 'gateway_rate_limit_store_errors_total', help: 'Rate-limit store (Redis) calls that failed; the request was served (fail open)', registers }),
    readCoalesced: new Counter({ name: 'gateway_read_coalesced_total', help: 'Reads served by an identical upstream call already in flight', registers }),
    connectionsDropped: new Counter({ name: 'gateway_http_connections_dropped_total', help: 'API connections closed on arrival because GATEWAY_MAX_CONNECTIONS were open', registers })
  }
}

declare module 'fastify' {
  interface FastifyInstance { metrics: GatewayMetrics }
}

export default fp<{ metrics: GatewayMetrics }>(async (app, opts) => {
  app.decorate('metrics', opts.metrics)
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const method = request.method
    opts.metrics.httpRequests.inc({ route, method, status: String(reply.statusCode) })
    opts.metrics.httpDuration.observe({ route, method }, reply.elapsedTime / 1000)
  })
}, { name: 'metrics' })
