// What the checks share: the configuration, the probe, the JSON-RPC endpoint, and the facts
// earlier checks established (cards, docs, health, read outcomes), so that no document is
// fetched twice and later checks (skills, profile, source SHA) build on earlier ones.
import type { QualifyConfig } from './config.js'
import type { Probe } from './probe.js'
import type { Result } from './types.js'
import type { ArgusOutcome, Json, RpcContext } from './wire.js'

export interface Facts {
  /** GET /health's body, when it is a JSON object */
  health?: Json
  /** GET /docs/a2a.json's body, when it is a JSON object */
  a2aDocs?: Json
  /** every valid agent card read, by path */
  cards: Array<{ path: string; card: Json; skillIds: string[] }>
  /** which profile the cards advertise, once argus_skills decided it */
  cardProfile?: 'enabled' | 'disabled'
  /** the three reads' outcomes, by operation */
  reads: Map<string, ArgusOutcome>
}

export interface QualifyContext {
  config: QualifyConfig
  probe: Probe
  rpc: RpcContext
  observerTask: string | undefined
  facts: Facts
  /** a path under OPENOPERATOR_URL's own path */
  at: (path: string) => string
}

export interface Check {
  name: string
  /** the signal aborts when the assertion's time bound ends */
  run: (ctx: QualifyContext, signal: AbortSignal) => Promise<Result>
}

/** documents fetched by GET (health, docs, cards) are capped at 1 MiB, as the gateway caps a card */
export const PAGE_MAX_BYTES = 1024 * 1024
