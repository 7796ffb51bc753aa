// Agent card discovery (docs/design.md#discovery-and-capabilities): agent-card.json first,
// agent.json only on 404/405 or an invalid card; the last good card survives a transient
// failure; two failures in a row drop the gateway to observer mode until a refresh succeeds. The
// card's `url` is compared, never followed.
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { AgentCardSchema, type AgentCard } from '../../schemas/card.js'
import type { UpstreamClient } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'
import { computeCapabilities, type Capability, type CapabilityModel, type CapabilityName } from './capabilities.js'

const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const

export interface DiscoveryOptions {
  client: UpstreamClient
  origin: string
  cardMaxBytes: number
  controlEnabled: boolean
  intervalMs: number
  logger: Logger
  onRefresh?: (outcome: 'ok' | 'failed') => void
}

export interface DiscoverySnapshot extends CapabilityModel {
  card: AgentCard | undefined
  cardHash: string | undefined
  cardPath: string | undefined
  cardUrlMismatch: boolean
  lastRefreshAt: string | undefined
  lastSuccessAt: string | undefined
  consecutiveFailures: number
  lastError: string | undefined
}

export interface Discovery {
  refresh: () => Promise<DiscoverySnapshot>
  snapshot: () => DiscoverySnapshot
  /** one capability's state, cheap enough for every request */
  capability: (name: CapabilityName) => Capability
  /** a valid result was seen: a tentative capability becomes available */
  confirm: (name: CapabilityName) => void
  /** a -32601 was seen: unavailable until the card changes */
  markMethodNotFound: (name: CapabilityName) => void
  start: () => void
  stop: () => void
}

type Attempt = { card: AgentCard; hash: string; path: string } | { fallback: true; why: string } | { error: string }

export function createDiscovery (o: DiscoveryOptions): Discovery {
  let card: AgentCard | undefined
  let cardHash: string | undefined
  let cardPath: string | undefined
  let lastRefreshAt: string | undefined
  let lastSuccessAt: string | undefined
  let lastError: string | undefined
  let failures = 0
  let confirmed = new Set<CapabilityName>()
  let notFound = new Set<CapabilityName>()
  let inFlight: Promise<DiscoverySnapshot> | undefined
  let timer: NodeJS.Timeout | undefined
  let model = computeCapabilities({ card, controlEnabled: o.controlEnabled, confirmed, methodNotFound: notFound, degraded: false })

  const recompute = (): void => {
    model = computeCapabilities({ card, controlEnabled: o.controlEnabled, confirmed, methodNotFound: notFound, degraded: failures >= 2 })
  }

  async function tryPath (path: string): Promise<Attempt> {
    let res
    try {
      res = await o.client.get(path, { op: 'agent_card', maxBytes: o.cardMaxBytes })
    } catch (err) {
      return { error: err instanceof UpstreamCallError ? err.kind : 'error' }
    }
    if (res.status === 404 || res.status === 405) return { fallback: true, why: `HTTP ${res.status}` }
    if (res.status < 200 || res.status >= 300) return { error: `HTTP ${res.status}` }
    let json: unknown
    try {
      json = JSON.parse(res.body.toString('utf8'))
    } catch {
      return { fallback: true, why: 'not JSON' }
    }
    const parsed = AgentCardSchema.safeParse(json)
    if (!parsed.success || Array.isArray(json)) return { fallback: true, why: 'not a valid card' }
    return { card: parsed.data, hash: createHash('sha256').update(res.body).digest('hex'), path }
  }

  async function doRefresh (): Promise<DiscoverySnapshot> {
    lastRefreshAt = new Date().toISOString()
    let result: Attempt = { error: 'not tried' }
    for (const path of CARD_PATHS) {
      result = await tryPath(path)
      if (!('fallback' in result)) break
    }
    if ('card' in result) {
      if (result.hash !== cardHash) {
        // a changed card resets what the remote has shown about the old one
        confirmed = new Set()
        notFound = new Set()
      }
      card = result.card
      cardHash = result.hash
      cardPath = result.path
      failures = 0
      lastError = undefined
      lastSuccessAt = lastRefreshAt
      o.onRefresh?.('ok')
      o.logger.info({ cardPath, cardHash }, 'agent card discovered')
    } else {
      failures += 1
      lastError = 'error' in result ? result.error : result.why
      o.onRefresh?.('failed')
      o.logger.warn({ reason: lastError, consecutiveFailures: failures }, 'agent card refresh failed')
    }
    recompute()
    return snapshot()
  }

  function cardUrlMismatch (): boolean {
    if (card === undefined || card.url === undefined) return false
    if (typeof card.url !== 'string') return true
    try {
      return new URL(card.url).origin !== o.origin
    } catch {
      return true
    }
  }

  function snapshot (): DiscoverySnapshot {
    return {
      ...model,
      card,
      cardHash,
      cardPath,
      cardUrlMismatch: cardUrlMismatch(),
      lastRefreshAt,
      lastSuccessAt,
      consecutiveFailures: failures,
      lastError
    }
  }

  /** one refresh at a time: the timer and POST /v1/upstream/refresh share it */
  const refresh = (): Promise<DiscoverySnapshot> => {
    inFlight ??= doRefresh().finally(() => { inFlight = undefined })
    return inFlight
  }

  return {
    refresh,
    snapshot,
    capability: (name) => model.capabilities[name],
    confirm: (name) => {
      if (card === undefined || confirmed.has(name)) return
      confirmed.add(name)
      recompute()
    },
    markMethodNotFound: (name) => {
      if (card === undefined || notFound.has(name)) return
      notFound.add(name)
      recompute()
    },
    start: () => {
      timer ??= setInterval(() => {
        refresh().catch((err: unknown) => { o.logger.error({ err }, 'agent card refresh crashed') })
      }, o.intervalMs)
      timer.unref()
    },
    stop: () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    }
  }
}
