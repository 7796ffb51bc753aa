// The campaign control plane as one plain factory (docs/design.md#campaign-control): the
// mutation pipeline, lease reads, the request listing, reconcile and acknowledge, and the
// sweep that turns overdue `pending` records ambiguous. No Fastify: the plugin wires it in.
//
// An assembly over one state object (plane-state.ts): the pipeline (pipeline.ts) and the resolver
// (resolve.ts) built on it, the reads (plane-reads.ts), and the sweep and retention
// (plane-upkeep.ts).
import type { Caller } from '../../schemas/callers.js'
import type { RequestView } from '../../schemas/control.js'
import type { RecordState, UnresolvedState } from '../ledger/types.js'
import { CAMPAIGN_LOCK_WAIT_MS } from '../core/campaign-lock.js'
import type { ClockWatch } from './clocks.js'
import type { GrantGate } from './grants.js'
import { createPipeline, type MutationAnswer, type MutationRequest, type PipelineDeps } from './pipeline.js'
import { getRequest, listRequests, listUnresolved, readControl } from './plane-reads.js'
import { noteSent, openPlane, waitLeftMs, type ControlPlaneOptions, type PlaneState } from './plane-state.js'
import { prune, start, stop, sweep } from './plane-upkeep.js'
import { createResolver, type Resolver } from './resolve.js'
import type { Lease } from './wire.js'

export type { ControlPlaneOptions } from './plane-state.js'

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

/** the pipeline on the plane's parts; each send it commits is remembered with its owner's wait (docs/design.md#one-clock) */
function pipelineDeps (s: PlaneState): PipelineDeps {
  const { o } = s
  return {
    ledger: o.ledger,
    client: o.client,
    discovery: o.discovery,
    leases: s.leases,
    instanceId: o.instanceId,
    connectTimeoutMs: o.connectTimeoutMs,
    mutationTimeoutMs: o.mutationTimeoutMs,
    readTimeoutMs: o.readTimeoutMs,
    maxTaskResponseBytes: o.maxTaskResponseBytes,
    lockWaitMs: o.lockWaitMs ?? CAMPAIGN_LOCK_WAIT_MS,
    logger: o.logger,
    now: s.now,
    onMutation: o.onMutation,
    onStep: o.onStep,
    circuit: o.circuit,
    clocks: s.clocks,
    onControllerConflict: o.onControllerConflict,
    onPending: (requestId, waitMs) => { noteSent(s, requestId, waitMs) },
    grants: s.grants
  }
}

export function createControlPlane (o: ControlPlaneOptions): ControlPlane {
  const s = openPlane(o)
  const mutate = createPipeline(pipelineDeps(s))
  const resolver = createResolver({ ledger: o.ledger, client: o.client, discovery: o.discovery, leases: s.leases, readTimeoutMs: o.readTimeoutMs, logger: o.logger, now: s.now, waitLeftMs: (r) => waitLeftMs(s, r), grants: s.grants })
  return {
    ...resolver,
    mutate,
    sweep: async () => await sweep(s),
    prune: async () => await prune(s),
    clocks: s.clocks,
    grants: s.grants,
    readControl: async (campaignId, viewer) => await readControl(s, campaignId, viewer),
    listRequests: async (campaignId, viewer, opts) => await listRequests(s, campaignId, viewer, opts),
    listUnresolved: async (viewer, opts) => await listUnresolved(s, viewer, opts),
    getRequest: async (campaignId, requestId, viewer) => await getRequest(s, campaignId, requestId, viewer),
    start: async () => { await start(s) },
    stop: () => { stop(s) }
  }
}
