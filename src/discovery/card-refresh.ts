// A card refresh (docs/design.md#discovery-and-capabilities): the card paths in order, the
// signature checked with trusted keys configured (docs/design.md#signed-cards), the card adopted
// or the last good one kept; two failures in a row drop the gateway to observer mode until a
// refresh succeeds. One refresh at a time, on a chain of timeouts whose delay Cache-Control sets
// within the configured bounds (docs/design.md#card-caching).
import { createHash } from 'node:crypto'
import { AgentCardSchema } from '../../schemas/card.js'
import { chooseProtocol } from './protocol.js'
import type { CardForm } from './card-canonical.js'
import { reportSignatures, signedForm, verifyCard, type SignatureReport } from './card-signature.js'
import { CARD_PATHS, tryPath, type Attempt, type Fetched } from './card-fetch.js'
import { recompute, snapshotOf, type DiscoverySnapshot, type DiscoveryState } from './discovery-state.js'

/** one refresh at a time: the timer and POST /v1/upstream/refresh share it */
export function refresh (s: DiscoveryState): Promise<DiscoverySnapshot> {
  s.inFlight ??= doRefresh(s).finally(() => { s.inFlight = undefined })
  return s.inFlight
}

// a chain of timeouts, not an interval: each refresh sets the delay to the next
export function schedule (s: DiscoveryState): void {
  if (!s.running) return
  s.nextRefreshAt = Date.now() + s.nextDelayMs
  s.timer = setTimeout(() => {
    refresh(s)
      .catch((err: unknown) => { s.o.logger.error({ err }, 'agent card refresh crashed') })
      .finally(() => { schedule(s) })
  }, s.nextDelayMs)
  s.timer.unref()
}

async function doRefresh (s: DiscoveryState): Promise<DiscoverySnapshot> {
  s.lastRefreshAt = new Date().toISOString()
  let result: Attempt = { error: 'not tried' }
  for (const path of CARD_PATHS) {
    result = await tryPath(s, path)
    if (!('fallback' in result)) break
  }
  s.nextDelayMs = s.o.intervalMs
  if ('card' in result) {
    if (result.maxAgeMs !== undefined) s.nextDelayMs = Math.min(s.o.intervalMs, Math.max(s.minIntervalMs, result.maxAgeMs))
    const keys = s.o.trustedKeys?.current()
    const report = keys !== undefined ? await verifyCard(result.raw, keys) : reportSignatures(result.raw)
    // what is used is what was signed: a verified card is read without the members its signature does not cover
    const signed = report.state === 'verified' ? adoptSigned(result, report.form) : result
    if (report.state === 'failed') {
      // an unverified card is never adopted: the last good one stays, fail closed at start
      fail(s, `card signature: ${report.reason}`)
    } else if (signed === undefined) {
      fail(s, 'card signature: the signed form of the card (its empty members dropped) is not a valid card')
    } else {
      adopt(s, signed, report)
    }
  } else {
    fail(s, 'error' in result ? result.error : result.why)
  }
  recompute(s)
  return snapshotOf(s)
}

/** the card in the form its signature covers, hashed as such; undefined when that form is not a valid card */
function adoptSigned (r: Fetched, covered: CardForm): Fetched | undefined {
  const form = signedForm(r.raw, covered)
  // an unset list is an empty one, as the signer's protobuf reads it
  const parsed = AgentCardSchema.safeParse({ ...form, skills: form.skills ?? [] })
  if (!parsed.success) return undefined
  return { ...r, card: parsed.data, raw: form, hash: createHash('sha256').update(JSON.stringify(form)).digest('hex') }
}

/** the card is the card now: a changed card resets what the remote has shown about the old one */
function adopt (s: DiscoveryState, result: Fetched, report: SignatureReport): void {
  if (result.hash !== s.cardHash) {
    s.confirmed = new Set()
    s.notFound = new Set()
    s.backoff.clear()
    s.refusals = false
  }
  s.card = result.card
  s.raw = result.raw
  s.cardPath = result.path
  s.etag = result.etag
  s.signature = report
  const choice = chooseProtocol(result.raw, s.o.origin, s.o.basePath)
  s.choice = choice
  const changed = result.hash !== s.cardHash
  s.cardHash = result.hash
  s.failures = 0
  s.lastError = undefined
  s.lastSuccessAt = s.lastRefreshAt
  s.o.onRefresh?.('ok')
  if (changed) s.o.logger.info({ cardPath: s.cardPath, cardHash: s.cardHash, protocolVersion: choice.version ?? null, signature: report.state }, 'agent card discovered')
  if (choice.version === undefined) s.o.logger.warn({ reason: choice.reason }, 'the agent card offers no A2A protocol the gateway speaks')
}

function fail (s: DiscoveryState, why: string): void {
  s.failures += 1
  s.lastError = why
  s.o.onRefresh?.('failed')
  s.o.logger.warn({ reason: s.lastError, consecutiveFailures: s.failures }, 'agent card refresh failed')
}
