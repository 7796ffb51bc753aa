// What one discovery holds (createDiscovery, src/discovery/discovery.ts) and what it shows: the
// last good card and its protocol choice, what the remote has shown about that card since it was
// adopted (confirmed capabilities, -32601s, refused versions), the refreshes' record and timer,
// and the capability model and wire derived from them (recompute) — read by every request, so
// derived once per change, not per read (docs/design.md#discovery-and-capabilities).
import type { Logger } from 'pino'
import type { AgentCard } from '../../schemas/card.js'
import type { UpstreamClient } from '../upstream/client.js'
import { wireFor, WIRE_V03, type A2aWire, type ProtocolVersion } from '../upstream/a2a-wire.js'
import { computeCapabilities, type CapabilityInputs, type CapabilityModel, type CapabilityName } from './capabilities.js'
import type { ProtocolChoice } from './protocol.js'
import { createVersionBackoff, type VersionBackoff } from './version-backoff.js'
import type { SignatureReport } from './card-signature.js'
import type { TrustedKeys } from '../core/trusted-keys.js'

export interface DiscoveryOptions {
  client: UpstreamClient
  origin: string
  /** the A2A base path (`/a2a`): interfaces are matched against `<origin><basePath>/` */
  basePath: string
  cardMaxBytes: number
  controlEnabled: boolean
  /** the refresh period, and the longest a Cache-Control max-age may stretch it to */
  intervalMs: number
  /** the shortest a Cache-Control max-age may shrink it to */
  minIntervalMs?: number
  /** the operator's card-signing keys: when set, a card must carry a signature that verifies */
  trustedKeys?: TrustedKeys | undefined
  logger: Logger
  onRefresh?: (outcome: 'ok' | 'failed') => void
  /** the clock a refused version's back-off is judged by (default Date.now); tests move it */
  now?: () => number
}

/** the card's choice as spoken now: `version` is the one in use, another the card offers while the preferred is refused */
export interface ProtocolView extends ProtocolChoice {
  /** a version the remote refused with -32009, not spoken until `refusedUntil` */
  refused: ProtocolVersion | undefined
  refusedUntil: string | undefined
}

export interface DiscoverySnapshot extends CapabilityModel {
  card: AgentCard | undefined
  cardHash: string | undefined
  cardPath: string | undefined
  cardUrlMismatch: boolean
  protocol: ProtocolView | undefined
  signature: SignatureReport | undefined
  lastRefreshAt: string | undefined
  lastSuccessAt: string | undefined
  consecutiveFailures: number
  lastError: string | undefined
  /** when the timer refreshes next (Cache-Control within the bounds) */
  nextRefreshAt: string | undefined
}

/** the version spoken now, and the preferred one refused, if any, until when */
export interface Spoken { version: ProtocolVersion | undefined; refused: ProtocolVersion | undefined; until: number | undefined }

export interface DiscoveryState {
  readonly o: DiscoveryOptions
  readonly now: () => number
  /** the shortest delay to the next refresh a Cache-Control max-age may set */
  readonly minIntervalMs: number
  readonly backoff: VersionBackoff
  // the last good card, as adopted (src/discovery/card-refresh.ts), and the protocol it chose
  card: AgentCard | undefined
  raw: Record<string, unknown> | undefined
  cardHash: string | undefined
  cardPath: string | undefined
  etag: string | undefined
  signature: SignatureReport | undefined
  choice: ProtocolChoice | undefined
  // what the remote has shown about that card: reset when the card changes
  /** some version was refused since the card was adopted: answers are reported to the back-off */
  refusals: boolean
  confirmed: Set<CapabilityName>
  notFound: Set<CapabilityName>
  // derived from the above by recompute
  spoken: Spoken
  model: CapabilityModel
  wire: A2aWire
  // the refreshes
  lastRefreshAt: string | undefined
  lastSuccessAt: string | undefined
  lastError: string | undefined
  failures: number
  /** one refresh at a time: the timer and POST /v1/upstream/refresh share it */
  inFlight: Promise<DiscoverySnapshot> | undefined
  timer: NodeJS.Timeout | undefined
  running: boolean
  nextDelayMs: number
  nextRefreshAt: number | undefined
}

export function openDiscoveryState (o: DiscoveryOptions): DiscoveryState {
  const s: Omit<DiscoveryState, 'model'> = {
    o,
    now: o.now ?? Date.now,
    minIntervalMs: Math.min(o.minIntervalMs ?? o.intervalMs, o.intervalMs),
    backoff: createVersionBackoff(),
    card: undefined,
    raw: undefined,
    cardHash: undefined,
    cardPath: undefined,
    etag: undefined,
    signature: undefined,
    choice: undefined,
    refusals: false,
    confirmed: new Set(),
    notFound: new Set(),
    spoken: { version: undefined, refused: undefined, until: undefined },
    wire: WIRE_V03,
    lastRefreshAt: undefined,
    lastSuccessAt: undefined,
    lastError: undefined,
    failures: 0,
    inFlight: undefined,
    timer: undefined,
    running: false,
    nextDelayMs: o.intervalMs,
    nextRefreshAt: undefined
  }
  return Object.assign(s, { model: computeCapabilities(capabilityInputs(s)) })
}

export const iso = (t: number | undefined): string | undefined => t !== undefined ? new Date(t).toISOString() : undefined

/** the spoken version, the capability model and the wire again, after what they derive from changed */
export function recompute (s: DiscoveryState): void {
  s.spoken = speakNow(s, s.now())
  s.model = computeCapabilities(capabilityInputs(s))
  s.wire = s.spoken.version !== undefined ? wireFor(s.spoken.version) : WIRE_V03
}

/** a refusal whose wait has ended: the version is spoken again (its next read is the probe) */
export function expire (s: DiscoveryState): void {
  if (s.spoken.until === undefined || s.now() < s.spoken.until) return
  const version = s.spoken.refused
  recompute(s)
  s.o.logger.info({ protocolVersion: version }, 'the back-off of a refused A2A protocol version has ended: speaking it again')
}

/** the first version the card offers that is not refused now; the preferred refused one and its end */
function speakNow (s: DiscoveryState, t: number): Spoken {
  let refused: ProtocolVersion | undefined
  let until: number | undefined
  for (const v of s.choice?.offered ?? []) {
    const u = s.backoff.refusedUntil(v, t)
    if (u === undefined) return { version: v, refused, until }
    if (refused === undefined) {
      refused = v
      until = u
    }
  }
  return { version: undefined, refused, until }
}

function capabilityInputs (s: Omit<DiscoveryState, 'model'>): CapabilityInputs {
  return { card: s.card, controlEnabled: s.o.controlEnabled, confirmed: s.confirmed, methodNotFound: s.notFound, degraded: s.failures >= 2, protocolProblem: protocolProblem(s) }
}

function protocolProblem (s: Pick<DiscoveryState, 'choice' | 'spoken'>): string | undefined {
  const { choice, spoken } = s
  if (choice === undefined) return undefined
  if (choice.version === undefined) return choice.reason
  if (spoken.version === undefined) return `the remote refused A2A protocol version ${spoken.refused ?? '?'} (-32009) although its card advertises it; it is tried again at ${iso(spoken.until) ?? '?'}`
  return undefined
}

/** everything discovery knows now, a refusal whose wait has ended expired first */
export function snapshotOf (s: DiscoveryState): DiscoverySnapshot {
  expire(s)
  return {
    ...s.model,
    card: s.card,
    cardHash: s.cardHash,
    cardPath: s.cardPath,
    cardUrlMismatch: s.choice?.urlMismatch ?? false,
    protocol: s.choice !== undefined ? protocolView(s.spoken, s.choice) : undefined,
    signature: s.signature,
    lastRefreshAt: s.lastRefreshAt,
    lastSuccessAt: s.lastSuccessAt,
    consecutiveFailures: s.failures,
    lastError: s.lastError,
    nextRefreshAt: s.nextRefreshAt !== undefined ? new Date(s.nextRefreshAt).toISOString() : undefined
  }
}

function protocolView (spoken: Spoken, c: ProtocolChoice): ProtocolView {
  const view = { ...c, version: spoken.version, refused: spoken.refused, refusedUntil: iso(spoken.until) }
  if (spoken.refused !== undefined && spoken.version !== undefined) {
    view.reason = `${c.reason}; the remote refused A2A ${spoken.refused} (-32009), so A2A ${spoken.version}, the next version the card offers, until ${view.refusedUntil ?? '?'}`
  }
  return view
}
