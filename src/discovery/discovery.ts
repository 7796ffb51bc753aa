// Agent card discovery (docs/design.md#discovery-and-capabilities): agent-card.json first,
// agent.json only on 404/405 or an invalid card; the last good card survives a transient
// failure; two failures in a row drop the gateway to observer mode until a refresh succeeds. The
// card's URLs are compared, never followed. The card also chooses the protocol generation
// (docs/design.md#protocol-versions); with trusted keys configured its signature must verify
// (docs/design.md#signed-cards); refreshes send If-None-Match and follow Cache-Control within
// the configured bounds (docs/design.md#card-caching).
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { AgentCardSchema, type AgentCard } from '../../schemas/card.js'
import type { GetResult, UpstreamClient } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'
import { wireFor, WIRE_V03, type A2aWire, type ProtocolVersion } from '../upstream/a2a-wire.js'
import { computeCapabilities, type Capability, type CapabilityModel, type CapabilityName } from './capabilities.js'
import { chooseProtocol, type ProtocolChoice } from './protocol.js'
import { createVersionBackoff, REFUSAL_DEFINED } from './version-backoff.js'
import type { CardForm } from './card-canonical.js'
import { reportSignatures, signedForm, verifyCard, type SignatureReport } from './card-signature.js'
import type { TrustedKeys } from './trusted-keys.js'

const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const

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

export interface Discovery {
  refresh: () => Promise<DiscoverySnapshot>
  snapshot: () => DiscoverySnapshot
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

type Attempt =
  | { card: AgentCard; raw: Record<string, unknown>; hash: string; path: string; etag: string | undefined; maxAgeMs: number | undefined }
  | { fallback: true; why: string }
  | { error: string }

const header = (h: GetResult['headers'], name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

/** how long the answer says the card stays fresh: max-age less Age; no-cache/no-store: 0; absent: undefined */
export function freshnessMs (cacheControl: string | undefined, age: string | undefined): number | undefined {
  if (cacheControl === undefined) return undefined
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim())
  if (directives.some((d) => d === 'no-cache' || d === 'no-store')) return 0
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find((m) => m !== null)
  if (maxAge == null) return undefined
  const aged = Number(maxAge[1]) - (age !== undefined && /^\d+$/.test(age) ? Number(age) : 0)
  return Math.max(0, aged) * 1000
}

export function createDiscovery (o: DiscoveryOptions): Discovery {
  let card: AgentCard | undefined
  let raw: Record<string, unknown> | undefined
  let cardHash: string | undefined
  let cardPath: string | undefined
  let etag: string | undefined
  let choice: ProtocolChoice | undefined
  const now = o.now ?? Date.now
  const backoff = createVersionBackoff()
  /** some version was refused since the card was adopted: answers are reported to the back-off */
  let refusals = false
  /** the version spoken now, and the preferred one refused, if any, until when */
  let spoken: { version: ProtocolVersion | undefined; refused: ProtocolVersion | undefined; until: number | undefined } = { version: undefined, refused: undefined, until: undefined }
  let signature: SignatureReport | undefined
  let lastRefreshAt: string | undefined
  let lastSuccessAt: string | undefined
  let lastError: string | undefined
  let failures = 0
  let confirmed = new Set<CapabilityName>()
  let notFound = new Set<CapabilityName>()
  let inFlight: Promise<DiscoverySnapshot> | undefined
  let timer: NodeJS.Timeout | undefined
  let running = false
  let nextDelayMs = o.intervalMs
  let nextRefreshAt: number | undefined
  const minIntervalMs = Math.min(o.minIntervalMs ?? o.intervalMs, o.intervalMs)

  const iso = (t: number | undefined): string | undefined => t !== undefined ? new Date(t).toISOString() : undefined
  /** the first version the card offers that is not refused now; the preferred refused one and its end */
  function speakNow (t: number): typeof spoken {
    let refused: ProtocolVersion | undefined
    let until: number | undefined
    for (const v of choice?.offered ?? []) {
      const u = backoff.refusedUntil(v, t)
      if (u === undefined) return { version: v, refused, until }
      if (refused === undefined) {
        refused = v
        until = u
      }
    }
    return { version: undefined, refused, until }
  }
  const protocolProblem = (): string | undefined => {
    if (choice === undefined) return undefined
    if (choice.version === undefined) return choice.reason
    if (spoken.version === undefined) return `the remote refused A2A protocol version ${spoken.refused ?? '?'} (-32009) although its card advertises it; it is tried again at ${iso(spoken.until) ?? '?'}`
    return undefined
  }
  const inputs = () => ({ card, controlEnabled: o.controlEnabled, confirmed, methodNotFound: notFound, degraded: failures >= 2, protocolProblem: protocolProblem() })
  let model = computeCapabilities(inputs())
  let wire: A2aWire = WIRE_V03
  const recompute = (): void => {
    spoken = speakNow(now())
    model = computeCapabilities(inputs())
    wire = spoken.version !== undefined ? wireFor(spoken.version) : WIRE_V03
  }
  /** a refusal whose wait has ended: the version is spoken again (its next read is the probe) */
  const expire = (): void => {
    if (spoken.until === undefined || now() < spoken.until) return
    const version = spoken.refused
    recompute()
    o.logger.info({ protocolVersion: version }, 'the back-off of a refused A2A protocol version has ended: speaking it again')
  }

  async function tryPath (path: string): Promise<Attempt> {
    // A2A-Version asks a server that speaks both generations for its v1.0 card, whose
    // signatures are over the v1.0 form; a v0.x server ignores the header
    const headers: Record<string, string> = { 'a2a-version': '1.0' }
    const held = card !== undefined && raw !== undefined && cardPath === path
    if (held && etag !== undefined) headers['if-none-match'] = etag
    let res
    try {
      res = await o.client.get(path, { op: 'agent_card', maxBytes: o.cardMaxBytes, headers })
    } catch (err) {
      return { error: err instanceof UpstreamCallError ? err.kind : 'error' }
    }
    const maxAgeMs = freshnessMs(header(res.headers, 'cache-control'), header(res.headers, 'age'))
    if (res.status === 304) {
      // unchanged: the card held is still the card (and is checked again below, keys may have changed)
      if (!held) return { error: 'HTTP 304 without a card held' }
      return { card: card!, raw: raw!, hash: cardHash!, path, etag: header(res.headers, 'etag') ?? etag, maxAgeMs }
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
    return { card: parsed.data, raw: json as Record<string, unknown>, hash: createHash('sha256').update(res.body).digest('hex'), path, etag: header(res.headers, 'etag'), maxAgeMs }
  }

  /** the card in the form its signature covers, hashed as such; undefined when that form is not a valid card */
  function adoptSigned (r: Extract<Attempt, { card: AgentCard }>, covered: CardForm): Extract<Attempt, { card: AgentCard }> | undefined {
    const form = signedForm(r.raw, covered)
    // an unset list is an empty one, as the signer's protobuf reads it
    const parsed = AgentCardSchema.safeParse({ ...form, skills: form.skills ?? [] })
    if (!parsed.success) return undefined
    return { ...r, card: parsed.data, raw: form, hash: createHash('sha256').update(JSON.stringify(form)).digest('hex') }
  }

  function fail (why: string): void {
    failures += 1
    lastError = why
    o.onRefresh?.('failed')
    o.logger.warn({ reason: lastError, consecutiveFailures: failures }, 'agent card refresh failed')
  }

  async function doRefresh (): Promise<DiscoverySnapshot> {
    lastRefreshAt = new Date().toISOString()
    let result: Attempt = { error: 'not tried' }
    for (const path of CARD_PATHS) {
      result = await tryPath(path)
      if (!('fallback' in result)) break
    }
    nextDelayMs = o.intervalMs
    if ('card' in result) {
      if (result.maxAgeMs !== undefined) nextDelayMs = Math.min(o.intervalMs, Math.max(minIntervalMs, result.maxAgeMs))
      const keys = o.trustedKeys?.current()
      const report = keys !== undefined ? await verifyCard(result.raw, keys) : reportSignatures(result.raw)
      // what is used is what was signed: a verified card is read without the members its signature does not cover
      const signed = report.state === 'verified' ? adoptSigned(result, report.form) : result
      if (report.state === 'failed') {
        // an unverified card is never adopted: the last good one stays, fail closed at start
        fail(`card signature: ${report.reason}`)
      } else if (signed === undefined) {
        fail('card signature: the signed form of the card (its empty members dropped) is not a valid card')
      } else {
        result = signed
        if (result.hash !== cardHash) {
          // a changed card resets what the remote has shown about the old one
          confirmed = new Set()
          notFound = new Set()
          backoff.clear()
          refusals = false
        }
        card = result.card
        raw = result.raw
        cardPath = result.path
        etag = result.etag
        signature = report
        choice = chooseProtocol(result.raw, o.origin, o.basePath)
        const changed = result.hash !== cardHash
        cardHash = result.hash
        failures = 0
        lastError = undefined
        lastSuccessAt = lastRefreshAt
        o.onRefresh?.('ok')
        if (changed) o.logger.info({ cardPath, cardHash, protocolVersion: choice.version ?? null, signature: report.state }, 'agent card discovered')
        if (choice.version === undefined) o.logger.warn({ reason: choice.reason }, 'the agent card offers no A2A protocol the gateway speaks')
      }
    } else {
      fail('error' in result ? result.error : result.why)
    }
    recompute()
    return snapshot()
  }

  function snapshot (): DiscoverySnapshot {
    expire()
    return {
      ...model,
      card,
      cardHash,
      cardPath,
      cardUrlMismatch: choice?.urlMismatch ?? false,
      protocol: choice !== undefined ? protocolView(choice) : undefined,
      signature,
      lastRefreshAt,
      lastSuccessAt,
      consecutiveFailures: failures,
      lastError,
      nextRefreshAt: nextRefreshAt !== undefined ? new Date(nextRefreshAt).toISOString() : undefined
    }
  }

  function protocolView (c: ProtocolChoice): ProtocolView {
    const view = { ...c, version: spoken.version, refused: spoken.refused, refusedUntil: iso(spoken.until) }
    if (spoken.refused !== undefined && spoken.version !== undefined) {
      view.reason = `${c.reason}; the remote refused A2A ${spoken.refused} (-32009), so A2A ${spoken.version}, the next version the card offers, until ${view.refusedUntil ?? '?'}`
    }
    return view
  }

  /** one refresh at a time: the timer and POST /v1/upstream/refresh share it */
  const refresh = (): Promise<DiscoverySnapshot> => {
    inFlight ??= doRefresh().finally(() => { inFlight = undefined })
    return inFlight
  }

  // a chain of timeouts, not an interval: each refresh sets the delay to the next
  function schedule (): void {
    if (!running) return
    nextRefreshAt = Date.now() + nextDelayMs
    timer = setTimeout(() => {
      refresh()
        .catch((err: unknown) => { o.logger.error({ err }, 'agent card refresh crashed') })
        .finally(schedule)
    }, nextDelayMs)
    timer.unref()
  }

  return {
    refresh,
    snapshot,
    capability: (name) => {
      if (spoken.until !== undefined) expire()
      return model.capabilities[name]
    },
    wire: () => {
      if (spoken.until !== undefined) expire()
      return wire
    },
    confirm: (name, version) => {
      // an answer over a version probed again after a refusal: its next refusal waits the first delay
      if (refusals && version !== undefined) backoff.answered(version, now())
      if (card === undefined || confirmed.has(name)) return
      confirmed.add(name)
      recompute()
    },
    markMethodNotFound: (name) => {
      if (card === undefined || notFound.has(name)) return
      notFound.add(name)
      recompute()
    },
    markVersionRefused: (version) => {
      // on a version that does not define -32009 it is an ordinary error code, not a refusal
      if (card === undefined || !REFUSAL_DEFINED.has(version) || choice?.offered.includes(version) !== true) return
      // a flood of refusals of reads sent before the first came back counts once
      if (!backoff.refuse(version, now())) return
      refusals = true
      recompute()
      o.logger.warn({ protocolVersion: version, refusedUntil: iso(spoken.until) ?? null, speaking: spoken.version ?? null }, 'the remote refused an A2A protocol version its card advertises; speaking another it offers, if any, and refreshing the card')
      refresh().catch((err: unknown) => { o.logger.error({ err }, 'agent card refresh crashed') })
    },
    start: () => {
      if (running) return
      running = true
      schedule()
    },
    stop: () => {
      running = false
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      nextRefreshAt = undefined
    }
  }
}
