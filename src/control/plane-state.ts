// The control plane's state (docs/design.md#campaign-control): the options it is built with, the
// parts every door and timer shares — this replica's clocks, the grants, the lease keeper — and
// what this process knows of its own sends, so that after a start nothing is settled early
// (docs/design.md#one-clock). One object, read and changed by the plane's named functions.
import type { Logger } from 'pino'
import type { Discovery } from '../discovery/discovery.js'
import type { BindingStore, BoundTaskStore, CampaignLockStore, ClockStore, LeaseStore, LedgerLifecycle, MutationOperation, RecordStore, RetentionStore } from '../ledger/types.js'
import type { UpstreamClient } from '../upstream/client.js'
import { makeRoom } from '../core/bounded-map.js'
import { createCampaignProjects } from './campaign-projects.js'
import { createClockWatch, type ClockPeer, type ClockWatch } from './clocks.js'
import { createGrantGate, type AuthzRefusal, type GrantGate } from './grants.js'
import { createLeaseKeeper, type LeaseKeeper } from './leases.js'
import { ownerWaitMs, type MutationMetric, type MutationStep } from './pipeline.js'

/** every role of the ledger the plane's parts use: all but the front door's sends and the export */
export type PlaneLedger = RecordStore & CampaignLockStore & LeaseStore & BoundTaskStore & BindingStore & ClockStore & RetentionStore & Pick<LedgerLifecycle, 'singleWriter'>

export interface ControlPlaneOptions {
  ledger: PlaneLedger
  client: UpstreamClient
  discovery: Discovery
  leaseSafetyMs: number
  connectTimeoutMs: number
  mutationTimeoutMs: number
  readTimeoutMs: number
  maxTaskResponseBytes: number
  /** this process, as the owner of the pending records it writes */
  instanceId: string
  logger: Logger
  now?: () => number
  /**
   * this process's monotonic clock (default performance.now): the wall clock's steps are judged
   * against it, and after a start nothing is settled early on it (docs/design.md#one-clock)
   */
  monotonic?: () => number
  /** how long a mutation waits for its campaign (default 2 s) */
  lockWaitMs?: number
  /** how often overdue pending records are swept (default 10 s) */
  sweepIntervalMs?: number
  /** resolved records older than this are pruned, never deleted (docs/design.md#request-ids-are-forever); undefined: kept whole forever */
  retentionMs?: number | undefined
  /** how often retention runs (default 10 min; once a minute after start) */
  retentionIntervalMs?: number
  onMutation?: (operation: MutationOperation, outcome: MutationMetric) => void
  /** called synchronously at each step of a mutation (crash tests) */
  onStep?: (step: MutationStep, requestId: string) => void
  /** the upstream circuit breaker (docs/design.md#circuit-breaker) */
  circuit?: { retryAfterSeconds: () => number | undefined }
  /** a clock offset measured (docs/design.md#one-clock): the gauge */
  onClockOffset?: (peer: ClockPeer, offsetMs: number) => void
  /** another identity presented a bound controller id: the counter */
  onControllerConflict?: () => void
  /** GATEWAY_REQUIRE_GRANTS: a caller without grants reaches no campaign (docs/design.md#grants) */
  requireGrants?: boolean
  /** the remote's campaign list payload (an Argus read), read when a project grant needs a campaign's project */
  readCampaignList?: () => Promise<unknown>
  /** a grant refused: the counter, by reason */
  onAuthzRefused?: (reason: AuthzRefusal) => void
}

export interface PlaneState {
  o: ControlPlaneOptions
  now: () => number
  mono: () => number
  clocks: ClockWatch
  grants: GrantGate
  leases: LeaseKeeper
  /**
   * After a start nothing is settled early (docs/design.md#one-clock): the longest wait an owner
   * of a record may still have, on this process's monotonic clock since the start; and for the
   * records this process sent, each one's own wait since its send, whatever the wall clock did
   */
  longestWaitMs: number
  /** the monotonic clock when the plane was built, then when it started */
  startedAt: number
  /** the records this process sent, each until when (monotonic ms) its owner may still wait; at most SENT_REMEMBERED */
  sentUntil: Map<string, number>
  /** the latest wait of a send forgotten to keep sentUntil bounded: until then no record's wait is judged over */
  forgotUntil: number
  sweepTimer: NodeJS.Timeout | undefined
  pruneTimer: NodeJS.Timeout | undefined
}

function clockWatchOf (o: ControlPlaneOptions, now: () => number, mono: () => number): ClockWatch {
  return createClockWatch({
    now,
    monotonic: mono,
    ledgerNow: async () => await o.ledger.now(),
    marginMs: o.leaseSafetyMs,
    // replicas share the remote's clock through their ledger; one writer has nobody to share with
    shared: o.ledger.singleWriter ? undefined : { put: async (m) => { await o.ledger.putRemoteClock(o.instanceId, m) }, fresh: async (maxAgeMs) => await o.ledger.freshRemoteClock(maxAgeMs) },
    onOffset: o.onClockOffset,
    onStep: (stepMs) => { o.logger.warn({ event: 'clock_step', stepMs: Math.round(stepMs) }, 'this replica\'s wall clock stepped against its monotonic clock: every clock measurement dropped, the next mutation measures again') },
    onError: (err) => { o.logger.warn({ err }, 'measuring or sharing a clock offset failed') }
  })
}

function grantGateOf (o: ControlPlaneOptions, mono: () => number): GrantGate {
  return createGrantGate({
    requireGrants: o.requireGrants ?? false,
    ledger: o.ledger,
    projects: createCampaignProjects({
      readList: o.readCampaignList,
      monotonic: mono,
      onReadFailed: (err) => { o.logger.debug({ err }, 'reading the campaign list for a campaign\'s project failed: it stays unknown') }
    }),
    logger: o.logger,
    onRefused: o.onAuthzRefused
  })
}

/** the plane's state, its parts built in order: clocks, grants, leases */
export function openPlane (o: ControlPlaneOptions): PlaneState {
  const now = o.now ?? Date.now
  const mono = o.monotonic ?? (() => performance.now())
  const clocks = clockWatchOf(o, now, mono)
  const grants = grantGateOf(o, mono)
  const leases = createLeaseKeeper({ ledger: o.ledger, client: o.client, discovery: o.discovery, leaseSafetyMs: o.leaseSafetyMs, readTimeoutMs: o.readTimeoutMs, now, onDate: clocks.observeDate })
  const longestWaitMs = ownerWaitMs(o, 'renew')
  return { o, now, mono, clocks, grants, leases, longestWaitMs, startedAt: mono(), sentUntil: new Map(), forgotUntil: -Infinity, sweepTimer: undefined, pruneTimer: undefined }
}

/**
 * The sends remembered at most (docs/design.md#bounded-maps): the sweep forgets each once its wait
 * is over, but a wait is the upstream's timeouts (up to twenty minutes as configured), and at a
 * thousand sends a second that would be a million entries.
 * Past the bound the oldest sends are forgotten early (a quarter at once, `makeRoom`), and until
 * the last of their waits is over no record's wait is judged over (`forgotUntil`): a forgotten
 * send is never settled early; at worst another record's reconcile waits longer.
 */
export const SENT_REMEMBERED = 100_000

/** a send this process committed: its owner waits `waitMs` from now on the monotonic clock */
export function noteSent (s: PlaneState, requestId: string, waitMs: number): void {
  if (s.sentUntil.size >= SENT_REMEMBERED) makeRoom(s.sentUntil, SENT_REMEMBERED, (until) => { s.forgotUntil = Math.max(s.forgotUntil, until) })
  s.sentUntil.set(requestId, s.mono() + waitMs)
}

/** a record sent before the start: its owner's wait since the start; one sent since: its own since its send */
export function waitLeftMs (s: PlaneState, r: { requestId: string; operation: MutationOperation }): number {
  const own = s.sentUntil.get(r.requestId)
  return (own ?? Math.max(s.startedAt + ownerWaitMs(s.o, r.operation), s.forgotUntil)) - s.mono()
}
