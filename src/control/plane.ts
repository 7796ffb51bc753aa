// The campaign control plane as one plain factory (docs/design.md#campaign-control): the
// mutation pipeline, lease reads, the request listing, reconcile and acknowledge, and the
// sweep that turns overdue `pending` records ambiguous. No Fastify: the plugin wires it in.
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../core/errors.js'
import type { Ledger, MutationOperation, RecordState, UnresolvedState } from '../ledger/types.js'
import { CAMPAIGN_LOCK_WAIT_MS } from '../core/campaign-lock.js'
import type { UpstreamClient } from '../upstream/client.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { createLeaseKeeper } from './leases.js'
import { createPipeline, ownerWaitMs, type MutationAnswer, type MutationMetric, type MutationRequest, type MutationStep } from './pipeline.js'
import { createResolver, type Resolver } from './resolve.js'
import { requestView } from './views.js'
import type { Lease } from './wire.js'
import { createClockWatch, type ClockPeer, type ClockWatch } from './clocks.js'
import { createCampaignProjects } from './campaign-projects.js'
import { createGrantGate, type AuthzRefusal, type GrantGate } from './grants.js'

export interface ControlPlaneOptions {
  ledger: Ledger
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

export interface ControlPlane extends Resolver {
  mutate: (req: MutationRequest) => Promise<MutationAnswer>
  /** a fresh read_control (never coalesced), kept as the known lease; for a caller the campaign's grants let read */
  readControl: (campaignId: string, viewer: Caller) => Promise<Lease | null>
  /** grants per campaign (docs/design.md#grants): the one check every door asks */
  grants: GrantGate
  listRequests: (campaignId: string, viewer: Caller, opts: { state?: RecordState; limit: number }) => Promise<RequestView[]>
  getRequest: (campaignId: string, requestId: string, viewer: Caller) => Promise<RequestView>
  /** the pending and ambiguous records of every campaign, oldest first, a page at a time (GET /v1/requests) */
  listUnresolved: (viewer: Caller, opts: { state?: UnresolvedState | undefined; limit: number; cursor?: string | undefined }) => Promise<{ requests: RequestView[]; nextCursor: string | null }>
  /** at start: the pending records no process can still be waiting for become ambiguous */
  start: () => Promise<void>
  /** overdue pending records become ambiguous now (the periodic sweep); answers their ids */
  sweep: () => Promise<string[]>
  /** retention now: prunes resolved records past the window in small batches; answers how many */
  prune: () => Promise<number>
  /** this replica's offsets to the ledger's and the remote's clocks (/readyz, tests) */
  clocks: ClockWatch
  stop: () => void
}

const PRUNE_BATCH = 500
const PRUNE_BATCHES_PER_RUN = 200
const PRUNE_PAUSE_MS = 20

export function createControlPlane (o: ControlPlaneOptions): ControlPlane {
  const now = o.now ?? Date.now
  const mono = o.monotonic ?? (() => performance.now())
  const clocks = createClockWatch({
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
  const grants = createGrantGate({
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
  const leases = createLeaseKeeper({ ledger: o.ledger, client: o.client, discovery: o.discovery, leaseSafetyMs: o.leaseSafetyMs, readTimeoutMs: o.readTimeoutMs, now, onDate: clocks.observeDate })
  /**
   * After a start nothing is settled early (docs/design.md#one-clock): the longest wait an owner
   * of a record may still have, on this process's monotonic clock since the start; and for the
   * records this process sent, each one's own wait since its send, whatever the wall clock did
   */
  const longestWaitMs = ownerWaitMs(o, 'renew')
  let startedAt = mono()
  const sentUntil = new Map<string, number>()
  /** a record sent before the start: its owner's wait since the start; one sent since: its own since its send */
  const waitLeftMs = (r: { requestId: string; operation: MutationOperation }): number => {
    const own = sentUntil.get(r.requestId)
    return (own ?? startedAt + ownerWaitMs(o, r.operation)) - mono()
  }
  const mutate = createPipeline({
    ledger: o.ledger,
    client: o.client,
    discovery: o.discovery,
    leases,
    instanceId: o.instanceId,
    connectTimeoutMs: o.connectTimeoutMs,
    mutationTimeoutMs: o.mutationTimeoutMs,
    readTimeoutMs: o.readTimeoutMs,
    maxTaskResponseBytes: o.maxTaskResponseBytes,
    lockWaitMs: o.lockWaitMs ?? CAMPAIGN_LOCK_WAIT_MS,
    logger: o.logger,
    now,
    onMutation: o.onMutation,
    onStep: o.onStep,
    circuit: o.circuit,
    clocks,
    onControllerConflict: o.onControllerConflict,
    onPending: (requestId, waitMs) => { sentUntil.set(requestId, mono() + waitMs) },
    grants
  })
  const resolver = createResolver({ ledger: o.ledger, client: o.client, discovery: o.discovery, leases, readTimeoutMs: o.readTimeoutMs, logger: o.logger, now, waitLeftMs, grants })
  let timer: NodeJS.Timeout | undefined
  let pruneTimer: NodeJS.Timeout | undefined

  const logExpired = (ids: string[], why: string): void => {
    for (const requestId of ids) o.logger.warn({ event: 'mutation', requestId, outcome: 'ambiguous', why }, 'pending mutation turned ambiguous')
  }

  /**
   * Small batches with a pause between them, so retention never holds the store for long on
   * the request path; bounded per run, the rest waits for the next one. A pruned record keeps
   * its id, hash and final state for ever (docs/design.md#request-ids-are-forever).
   */
  async function prune (): Promise<number> {
    if (o.retentionMs === undefined) return 0
    const before = now() - o.retentionMs
    let pruned = 0
    for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
      const n = await o.ledger.pruneResolvedBefore(before, PRUNE_BATCH, now())
      pruned += n
      if (n < PRUNE_BATCH) break
      await new Promise((resolve) => setTimeout(resolve, PRUNE_PAUSE_MS))
    }
    if (pruned > 0) o.logger.info({ event: 'ledger_retention', pruned, olderThan: new Date(before).toISOString() }, 'resolved records past the retention window pruned: params, answers and notes removed, ids kept')
    // the front door's reads go whole (a repeat is a fresh read); its submissions stay with their ids (docs/api.md#a2a-front-door)
    let reads = 0
    for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
      const n = await o.ledger.pruneFrontReadsBefore(before, PRUNE_BATCH)
      reads += n
      if (n < PRUNE_BATCH) break
      await new Promise((resolve) => setTimeout(resolve, PRUNE_PAUSE_MS))
    }
    if (reads > 0) o.logger.info({ event: 'ledger_retention', frontReads: reads, olderThan: new Date(before).toISOString() }, 'front-door reads past the retention window deleted')
    return pruned
  }

  async function sweep (): Promise<string[]> {
    // the sends whose wait is over on the monotonic clock are forgotten
    const t = mono()
    for (const [id, until] of sentUntil) if (until <= t) sentUntil.delete(id)
    // until every owner's wait has passed since the start, on this process's own monotonic clock,
    // no deadline is judged here: the wall clock (SQLite's ledger clock) may have jumped
    if (startedAt + longestWaitMs > t) return []
    const ids = await o.ledger.expirePending(now())
    logExpired(ids, 'its deadline passed with no outcome written')
    return ids
  }

  return {
    ...resolver,
    mutate,
    sweep,
    prune,
    clocks,
    grants,
    readControl: async (campaignId, viewer) => {
      await grants.require(viewer, 'read', campaignId)
      if (o.discovery.snapshot().controlMethods.read_control === undefined) {
        throw new GatewayError('capability_unavailable', { missingPrerequisites: [o.discovery.capability('control.read_control').reason] })
      }
      return await leases.fresh(campaignId)
    },
    listRequests: async (campaignId, viewer, opts) => {
      await grants.require(viewer, 'read', campaignId)
      return (await o.ledger.listByCampaign(campaignId, opts)).map((r) => requestView(r, viewer))
    },
    // an admin's listing (routes/requests.ts): admins keep every campaign, so it is whole
    listUnresolved: async (viewer, opts) => {
      const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor)
      // one more than asked: whether another page follows, without a count
      const rows = await o.ledger.listUnresolved({ state: opts.state, after, limit: opts.limit + 1 })
      const page = rows.slice(0, opts.limit)
      const last = page.at(-1)
      return {
        requests: page.map((r) => requestView(r, viewer)),
        nextCursor: rows.length > opts.limit && last !== undefined ? encodeCursor(last) : null
      }
    },
    getRequest: async (campaignId, requestId, viewer) => {
      await grants.require(viewer, 'read', campaignId)
      const r = await o.ledger.get(requestId)
      if (r === undefined || r.campaignId !== campaignId) throw new GatewayError('not_found', { message: 'No such request for this campaign.' })
      return requestView(r, viewer)
    },
    start: async () => {
      startedAt = mono()
      await clocks.start()
      // local lease state is unknown after a restart: the next decision asks read_control
      await o.ledger.forgetAllLeases(now())
      // the only writer of its store: nobody else can still be waiting on its pending records
      if (o.ledger.singleWriter) logExpired(await o.ledger.expireAllPending(now()), 'the gateway restarted before its outcome was written')
      else await sweep()
      timer ??= setInterval(() => {
        sweep().catch((err: unknown) => { o.logger.error({ err }, 'sweeping pending mutations failed') })
      }, o.sweepIntervalMs ?? 10_000)
      timer.unref()
      if (o.retentionMs !== undefined && pruneTimer === undefined) {
        const run = (): void => {
          prune().catch((err: unknown) => { o.logger.error({ err }, 'ledger retention failed') }).finally(() => {
            if (pruneTimer === undefined) return
            pruneTimer = setTimeout(run, o.retentionIntervalMs ?? 600_000)
            pruneTimer.unref()
          })
        }
        pruneTimer = setTimeout(run, Math.min(60_000, o.retentionIntervalMs ?? 600_000))
        pruneTimer.unref()
      }
    },
    stop: () => {
      clocks.stop()
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      if (pruneTimer !== undefined) clearTimeout(pruneTimer)
      pruneTimer = undefined
    }
  }
}
