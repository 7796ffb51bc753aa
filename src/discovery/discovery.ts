// Agent card discovery (docs/design.md#discovery-and-capabilities): agent-card.json first,
// agent.json only on 404/405 or an invalid card; the last good card survives a transient
// failure; two failures in a row drop the gateway to observer mode until a refresh succeeds. The
// card's URLs are compared, never followed. The card also chooses the protocol generation
// (docs/design.md#protocol-versions); with trusted keys configured its signature must verify
// (docs/design.md#signed-cards); refreshes send If-None-Match and follow Cache-Control within
// the configured bounds (docs/design.md#card-caching). Here the assembly and what the reads
// report back; each part a function of the state discovery holds (`DiscoveryState`,
// discovery-state.ts): a card path fetched in card-fetch.ts, a refresh and its timer in
// card-refresh.ts.
import type { A2aWire, ProtocolVersion } from '../upstream/a2a-wire.js'
import type { Capability, CapabilityModel, CapabilityName } from './capabilities.js'
import { REFUSAL_DEFINED } from './version-backoff.js'
import { refresh, schedule } from './card-refresh.js'
import { expire, iso, openDiscoveryState, recompute, snapshotOf, type DiscoveryOptions, type DiscoverySnapshot, type DiscoveryState } from './discovery-state.js'

export type { DiscoveryOptions, DiscoverySnapshot, ProtocolView } from './discovery-state.js'
export { freshnessMs } from './card-fetch.js'

export interface Discovery {
  refresh: () => Promise<DiscoverySnapshot>
  snapshot: () => DiscoverySnapshot
  /** the capability model as derived now, shared and read-only: the mode and control methods every mutation checks, without a snapshot's copy (docs/design.md#hot-path) */
  model: () => Readonly<CapabilityModel>
  /** one capability's state, cheap enough for every request */
  capability: (name: CapabilityName) => Capability
  /** the wire of the protocol version in use (v0.3's while none is chosen: nothing is called then) */
  wire: () => A2aWire
  /** a valid result was seen (over `version`, when the caller knows it): a tentative capability becomes available */
  confirm: (name: CapabilityName, version?: ProtocolVersion) => void
  /** a -32601 was seen: unavailable until the card changes */
  markMethodNotFound: (name: CapabilityName) => void
  /**
   * a -32009 was seen for this version: where the version defines the code, it is not spoken
   * for a back-off (another version the card offers is, if any) and a refresh is started
   */
  markVersionRefused: (version: ProtocolVersion) => void
  start: () => void
  stop: () => void
}

export function createDiscovery (o: DiscoveryOptions): Discovery {
  const s = openDiscoveryState(o)
  return {
    refresh: () => refresh(s),
    snapshot: () => snapshotOf(s),
    model: () => {
      if (s.spoken.until !== undefined) expire(s)
      return s.model
    },
    // read by every request: the model and the wire as derived, a refusal's end checked only while one runs
    capability: (name) => {
      if (s.spoken.until !== undefined) expire(s)
      return s.model.capabilities[name]
    },
    wire: () => {
      if (s.spoken.until !== undefined) expire(s)
      return s.wire
    },
    confirm: (name, version) => { confirm(s, name, version) },
    markMethodNotFound: (name) => { markMethodNotFound(s, name) },
    markVersionRefused: (version) => { markVersionRefused(s, version) },
    start: () => { start(s) },
    stop: () => { stop(s) }
  }
}

function confirm (s: DiscoveryState, name: CapabilityName, version: ProtocolVersion | undefined): void {
  // an answer over a version probed again after a refusal: its next refusal waits the first delay
  if (s.refusals && version !== undefined) s.backoff.answered(version, s.now())
  if (s.card === undefined || s.confirmed.has(name)) return
  s.confirmed.add(name)
  recompute(s)
}

function markMethodNotFound (s: DiscoveryState, name: CapabilityName): void {
  if (s.card === undefined || s.notFound.has(name)) return
  s.notFound.add(name)
  recompute(s)
}

function markVersionRefused (s: DiscoveryState, version: ProtocolVersion): void {
  // on a version that does not define -32009 it is an ordinary error code, not a refusal
  if (s.card === undefined || !REFUSAL_DEFINED.has(version) || s.choice?.offered.includes(version) !== true) return
  // a flood of refusals of reads sent before the first came back counts once
  if (!s.backoff.refuse(version, s.now())) return
  s.refusals = true
  recompute(s)
  s.o.logger.warn({ protocolVersion: version, refusedUntil: iso(s.spoken.until) ?? null, speaking: s.spoken.version ?? null }, 'the remote refused an A2A protocol version its card advertises; speaking another it offers, if any, and refreshing the card')
  refresh(s).catch((err: unknown) => { s.o.logger.error({ err }, 'agent card refresh crashed') })
}

function start (s: DiscoveryState): void {
  if (s.running) return
  s.running = true
  schedule(s)
}

function stop (s: DiscoveryState): void {
  s.running = false
  if (s.timer !== undefined) clearTimeout(s.timer)
  s.timer = undefined
  s.nextRefreshAt = undefined
}
