// The simulator's mutable state, shared by its routes: resolved options, what it received,
// the injected faults, the card transforms and signing keys, the task store, the
// campaign-control book, the held requests and its timers. One object per simulator, so several
// simulators can run side by side in one test process.
import type { AuthScheme, CardCacheOptions, CardRequestCounts, CardSigningOptions, CardTransform, ReceivedRequest, SimulatorOptions, SimulatorProtocol, WireProfile } from './types.js'
import { CardSigner } from './card-signing.js'
import { ControlBook } from './control-book.js'
import type { ResolvedControl } from './control-options.js'
import { resolveControl } from './control-options.js'
import { FaultBook } from './fault-book.js'
import { HeldRequests } from './held-requests.js'
import { SIMULATOR_PROTOCOLS } from './protocol.js'
import { TaskStore } from './task-store.js'
import { Timers } from './timers.js'

export const DEFAULT_SOURCE_SHA = '5e1f0c0ffee0123456789abcdef0123456789abc'

export interface ResolvedOptions {
  profile: WireProfile
  secret: string | undefined
  authSchemes: AuthScheme[]
  argusEnabled: boolean
  sourceSha: string
  taskSteps: number
  /** Polls an Argus read's task needs: taskSteps when given, else 0 for openoperator (reads bypass the model). */
  argusTaskSteps: number
  initialCard: CardTransform | undefined
  initialCardAfterSigning: CardTransform | undefined
  /** Set when campaign control is served. */
  control: ResolvedControl | undefined
  protocol: SimulatorProtocol
  /** Undefined: no caching headers. */
  cardCache: Required<CardCacheOptions> | undefined
}

export interface SimulatorState {
  opts: ResolvedOptions
  /** Set once the server listens; the card's `url` and redirects are built from it. */
  origin: string
  received: ReceivedRequest[]
  faults: FaultBook
  tasks: TaskStore
  control: ControlBook
  /** Requests a `hold` fault parked before the handler. */
  held: HeldRequests
  /** The simulator's own timers (submissions completing on time), cleared on close. */
  timers: Timers
  cardTransform: CardTransform | undefined
  cardAfterSigning: CardTransform | undefined
  /** The signing keys and the signatures of the last card bodies they signed. */
  signer: CardSigner
  /** Card answers by path and status. */
  cardCounts: CardRequestCounts
  /** Aborted on close, so a long injected delay or a held request cannot hold the server open. */
  closing: AbortController
}

export function resolveOptions (opts: SimulatorOptions): ResolvedOptions {
  const requested = opts.profile ?? 'openoperator'
  const profile: WireProfile = requested === 'campaign-control' ? 'openoperator' : requested
  const controlOptions = opts.campaignControl ?? (requested === 'campaign-control' ? {} : undefined)
  const taskSteps = opts.taskSteps ?? 2
  if (!Number.isInteger(taskSteps) || taskSteps < 0) throw new TypeError('taskSteps must be a non-negative integer')
  const protocol = opts.protocol ?? 'v0.3'
  if (!SIMULATOR_PROTOCOLS.includes(protocol)) throw new TypeError(`protocol must be one of ${SIMULATOR_PROTOCOLS.join(', ')}`)
  const sourceSha = opts.sourceSha ?? DEFAULT_SOURCE_SHA
  if (!/^[0-9a-f]{40}$/.test(sourceSha)) throw new TypeError('sourceSha must be 40 lower-case hex characters')
  return {
    profile,
    secret: opts.secret,
    authSchemes: opts.authSchemes ?? ['bearer', 'x-api-key'],
    argusEnabled: opts.argusEnabled ?? true,
    sourceSha,
    taskSteps,
    argusTaskSteps: opts.taskSteps ?? (profile === 'openoperator' ? 0 : 2),
    initialCard: opts.card,
    initialCardAfterSigning: opts.cardAfterSigning,
    control: controlOptions === undefined ? undefined : resolveControl(controlOptions, protocol),
    protocol,
    cardCache: resolveCardCache(opts.cardCache, protocol)
  }
}

// The SDK's card handler always sends caching headers (max-age 3600); today's v0.3 remote sends none.
function resolveCardCache (cache: CardCacheOptions | undefined, protocol: SimulatorProtocol): Required<CardCacheOptions> | undefined {
  if (cache === undefined && protocol === 'v0.3') return undefined
  const maxAgeSeconds = cache?.maxAgeSeconds ?? 3600
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0) throw new TypeError('cardCache.maxAgeSeconds must be a non-negative integer')
  return { maxAgeSeconds, etag: cache?.etag ?? true }
}

export function createState (opts: ResolvedOptions, signing?: CardSigningOptions): SimulatorState {
  const closing = new AbortController()
  return {
    opts,
    origin: '',
    received: [],
    faults: new FaultBook(),
    tasks: new TaskStore(opts.profile),
    control: new ControlBook(opts.control?.clock ?? Date.now),
    held: new HeldRequests(closing.signal),
    timers: new Timers(closing.signal),
    cardTransform: opts.initialCard,
    cardAfterSigning: opts.initialCardAfterSigning,
    signer: new CardSigner(signing),
    cardCounts: {},
    closing
  }
}

/** FastA2A 0.5 (what OpenOperator runs) answers request-validation failures with a plain-text 500. */
export function validatesLikeFastA2A (profile: WireProfile): boolean {
  return profile !== 'a2a-js'
}
