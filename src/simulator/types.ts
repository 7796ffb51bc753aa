// The simulator's public types: what tests configure, inject and inspect.
// Kept apart from the implementation so the gateway's tests can import types without
// pulling in Fastify.
import type { CryptoKey, JWK, KeyObject } from 'jose'

/** How the remote answers on the wire (refusals, history, cancel, blocking). */
export type WireProfile = 'openoperator' | 'fasta2a' | 'a2a-js'

/** 'campaign-control' is the openoperator profile plus `campaignControl` with its defaults. */
export type SimulatorProfile = WireProfile | 'campaign-control'

export type AuthScheme = 'bearer' | 'x-api-key'

/**
 * Which A2A protocol the remote speaks, orthogonal to the profile. 'v0.3': today's remote,
 * no version negotiation. 'v1.0': an @a2a-js/sdk 1.x server, v1.0 only (card without `url`,
 * `SendMessage`/`GetTask`/`CancelTask`, -32009 for any `A2A-Version` but 1.0). 'dual': the
 * same server with v0.3 compatibility on, the version picked per request by `A2A-Version`
 * (absent or 0.3: v0.3, exactly as 'v0.3'). Under v1.0 the JSON-RPC layer (framing, errors,
 * blocking, cancel of a finished task) is the SDK's whatever the profile; the profile still
 * shapes the tasks (steps, timestamps, metadata, where a result lands).
 */
export type SimulatorProtocol = 'v0.3' | 'v1.0' | 'dual'

/** Agent card caching headers (A2A v1.0 §8.6). */
export interface CardCacheOptions {
  /** `Cache-Control: public, max-age=N`; 0 sends `no-cache`. Default 3600. */
  maxAgeSeconds?: number
  /** An `ETag` (W/"<16 hex of sha256 of the body>") and 304 for a matching If-None-Match. Default true. */
  etag?: boolean
}

export interface CardSigningKey {
  privateKey: CryptoKey | KeyObject | JWK
  kid: string
  /** A JWS algorithm the key can sign with, e.g. 'ES256' or 'RS256'. */
  alg: string
}

/** Signed agent cards (A2A v1.0 §8.4): one JWS signature per key, over the canonical card. */
export interface CardSigningOptions {
  keys: CardSigningKey[]
}

/** Card answers by status (200, 304, 404), per path, e.g. `{ '/a2a/.well-known/agent-card.json': { 200: 1, 304: 2 } }`. */
export type CardRequestCounts = Record<string, Record<number, number>>

export interface SimulatorOptions {
  profile?: SimulatorProfile
  /** When set, POST /a2a/ requires it (401 JSON otherwise). */
  secret?: string
  authSchemes?: AuthScheme[]
  argusEnabled?: boolean
  /**
   * The entries `campaign.list` answers in its payload's `campaigns` (as the remote reports each
   * campaign: `campaign_id`, `project`, …). Default: camp-1 and camp-2, no project.
   */
  campaigns?: Array<Record<string, unknown>>
  /** 40-hex commit served by GET /health. */
  sourceSha?: string
  tls?: { key: string | Buffer; cert: string | Buffer }
  host?: string
  port?: number
  /**
   * tasks/get polls a new task needs before it is completed (openoperator/fasta2a, and a2a-js
   * without blocking). Default 2, except Argus reads of the openoperator profile: 0 (answered
   * `completed` at once, the reads bypass every model call). Setting it applies to all tasks.
   */
  taskSteps?: number
  /** Applied to the card before it is signed (so a transformed card is still validly signed). */
  card?: CardTransform
  /** Applied to the served card after signing: a tampered card, for signature tests. */
  cardAfterSigning?: CardTransform
  /** Serve (and by default advertise) the campaign-control extension. */
  campaignControl?: CampaignControlOptions
  /** Default 'v0.3'. */
  protocol?: SimulatorProtocol
  /** Default: off for v0.3 (no caching headers), `{ maxAgeSeconds: 3600, etag: true }` for v1.0 and dual. */
  cardCache?: CardCacheOptions
  cardSigning?: CardSigningOptions
  /** Faults in force from the start, before the first request (`SIMULATOR_FAULTS`, parsed by `parseFaultRules`). */
  faults?: readonly FaultRule[]
}

/** The logical operations of urn:openoperator:campaign-control:v1 (docs/design.md#campaign-control). */
export type ControlOperation = 'claim_control' | 'read_control' | 'renew_control' | 'release_control' | 'intervene' | 'request_status' | 'cancel'

export interface CampaignControlOptions {
  /**
   * Method name per operation, advertised and served (default: the seed's map; on the v1.0
   * and dual protocols `cancel` is `CancelTask`). A null removes the operation from the card
   * and the server, which then answers its default method name as an unknown method (for
   * `cancel`: the standard cancel itself, `tasks/cancel` or, under v1.0, `CancelTask`).
   */
  operations?: Partial<Record<ControlOperation, string | null>>
  /** false: advertised as such, and mutations skip the lease and epoch checks. Default true. */
  leaseEpochEnforced?: boolean
  /** false: advertised as such, and the constraints envelope is not checked. Default true. */
  policyEnforced?: boolean
  /** false: a submission naming a `project` is refused (policy_violation). Default true. */
  projectSelection?: boolean
  /** false: serve the extension without putting it in the card. Default true. */
  advertise?: boolean
  /** States a submitted task walks, one per tasks/get; it stays in the last. Default ['submitted', 'working']. v0.3 names or TASK_STATE_* ones. */
  submissionStates?: string[]
  /** The control clock in ms since the epoch (default Date.now); `control.advanceClock` adds to it. */
  now?: () => number
  /**
   * A submitted task not yet final is `completed` (with a result artifact) this many ms after it
   * was submitted, on real time (`SIMULATOR_TASK_SECONDS`). Default: never, it stays in the last
   * of `submissionStates`.
   */
  completeAfterMs?: number
}

/** A lease as the wire carries it; `expires_at` is integer Unix seconds. */
export interface Lease {
  controller_id: string
  epoch: number
  expires_at: number
}

/** The operations that mutate a campaign (and so carry a request id). */
export type MutationOperation = 'claim_control' | 'renew_control' | 'release_control' | 'intervene' | 'submit' | 'cancel'

/**
 * A mutation the remote applied (replays are not applied again, so never listed twice), with
 * the ground truth an invariant check needs: who sent it, and the book just before it applied.
 */
export interface AppliedMutation {
  operation: MutationOperation
  requestId: string
  campaignId: string
  /** Control clock, ms. */
  at: number
  /** The controller_id the request carried; null when it carried none (a cancel's metadata may not). */
  controllerId: string | null
  /** The controller_epoch the request carried; null for a claim, or a cancel that carried none. */
  epoch: number | null
  /** The campaign's epoch in the remote's book just before this mutation (for a claim: before the claim). */
  currentEpoch: number
  /**
   * Whether, just before it applied, an unexpired lease held by `controllerId` at `epoch`
   * existed (for a claim: whether the claimer already held a live lease, any epoch). A cancel
   * is applied without authority, so it may be false there.
   */
  leaseLive: boolean
}

/** A mutating request that reached its handler (replays and refused or malformed ones too). */
export interface ReceivedMutation {
  requestId: string
  operation: MutationOperation
  /** The campaign_id it named; null when it named none usable (malformed params). */
  campaignId: string | null
  /** Control clock, ms. */
  at: number
}

export interface InterventionRecord {
  requestId: string
  controllerId: string
  epoch: number
  intervention: Record<string, unknown>
  at: number
}

/**
 * The remote's campaign-control state, for tests. Present on every simulator (empty unless
 * campaign control is served); it survives `reset()`, as the remote's persistence would.
 */
export interface SimulatorControl {
  /** Every mutation applied, in order. */
  applied(): AppliedMutation[]
  /** The lease as read_control answers it now: null when none or expired. */
  lease(campaignId: string): Lease | null
  interventions(campaignId: string): InterventionRecord[]
  /** Every mutating request that reached a handler, in order, replays included (faults that answer first, and held requests not yet delivered, are not). */
  received(): ReceivedMutation[]
  /** Times each request_id reached a mutating method's handler: `received()` counted by request id. */
  requestCounts(): Map<string, number>
  /** Installs a lease (e.g. another controller's takeover) or removes one; the campaign's epoch becomes the lease's. */
  setLease(campaignId: string, lease: Lease | null): void
  /** Moves the control clock forward, so leases expire without sleeping. */
  advanceClock(ms: number): void
  /** The control clock, ms since the epoch. */
  now(): number
}

export type CardTransform = (card: Record<string, unknown>) => Record<string, unknown>

export interface ReceivedRequest {
  method: string
  /** The request target as sent: path plus query string, if any. */
  path: string
  headers: Record<string, string>
  rawBody: string
  json?: unknown
  at: number
}

export type FaultTarget =
  | 'agent-card'
  | 'agent-json'
  | 'card'
  | 'rpc'
  | { rpcMethod: string }
  | { argusOperation: string }
  | 'health'
  /** GET /docs/a2a.json */
  | 'a2a-docs'
  /** one of the seed's wrong routes (e.g. '/a2a/tasks/get'), GET and POST: a misrouted server answering them */
  | { wrongRoute: string }
  /** a campaign-control operation by its logical name, whatever method carries it; 'submit': a message/send (SendMessage) carrying argus_supervisor metadata */
  | { operation: ControlOperation | 'submit' }

export type ArgusErrorCode =
  | 'invalid_argus_envelope'
  | 'argus_supervisor_disabled'
  | 'unsupported_argus_operation'
  | 'argus_supervisor_unavailable'

export type ArgusErrorPlacement = 'rpc-data' | 'rpc-message' | 'payload-string' | 'payload-object' | 'failed-task'

export type Fault =
  | { kind: 'delay'; ms: number }
  | { kind: 'status'; status: number; body?: string; contentType?: string }
  | { kind: 'drop' }
  | { kind: 'redirect'; status?: 301 | 302 | 307 | 308; location: string }
  | { kind: 'oversized'; bytes: number; mode: 'chunked' | 'content-length' }
  | { kind: 'rpc-error'; code: number; message: string; data?: unknown }
  /** answers this JSON-RPC result under the request's id, applying nothing */
  | { kind: 'result'; result: unknown }
  /** the same with the result as JSON text, for results JSON.stringify cannot build (nesting deeper than its stack) */
  | { kind: 'raw-result'; json: string }
  | { kind: 'wrong-id' }
  | { kind: 'invalid-json' }
  | { kind: 'argus-error'; code: ArgusErrorCode; placement: ArgusErrorPlacement }
  /** states: v0.3 names ('working') or v1.0 ones ('TASK_STATE_WORKING'), served in the request's wire either way */
  | { kind: 'task-states'; states: string[]; final?: 'payload' | { error: string } }
  /**
   * POST /a2a/ only: a late arrival. The front end accepts the request but the handler has
   * not reached it: it is neither applied nor counted, and its connection stays open and
   * unanswered, until `deliverHeld` runs it (then applied and answered, if the client is
   * still there) or `dropHeld` loses it. A client that hangs up meanwhile does not unhold it.
   */
  | { kind: 'hold' }

/** A fault with its target and count, as `SimulatorOptions.faults` and the admin route take it. */
export interface FaultRule {
  target: FaultTarget
  fault: Fault
  /** How many matching requests it takes; default every one until cleared. */
  times?: number
  /** The rule as written (`SIMULATOR_FAULTS` syntax), shown by `GET /_sim/faults`. */
  text?: string
}

export interface RpcCall {
  method: string
  id: unknown
  // The params are whatever the client sent; tests index into them freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  params: any
  headers: Record<string, string>
}

/** A request held by a `hold` fault, as `held()` lists it. */
export interface HeldRequest {
  /** The JSON-RPC method; '' when the body named none (e.g. it was not JSON). */
  method: string
  /** The JSON-RPC id; null when the body had none. */
  id: unknown
}

export interface Simulator {
  /** Origin, e.g. 'http://127.0.0.1:41234' (no path). */
  url: string
  secret: string | undefined
  received: ReceivedRequest[]
  rpcCalls(): RpcCall[]
  inject(target: FaultTarget, fault: Fault, times?: number): void
  clearFaults(): void
  /** The faults in force, as `GET /_sim/faults` lists them. */
  faults(): Array<{ rule: string; remaining: number | null }>
  /** The card transform applied before signing (on dual: to each version's card). */
  setCard(transform: CardTransform | undefined): void
  /** The transform applied after signing, to the card as served. */
  setCardAfterSigning(transform: CardTransform | undefined): void
  /** Replaces the signing keys (undefined: unsigned cards), for key rotation tests. */
  setCardSigning(signing: CardSigningOptions | undefined): void
  /** Replaces what `campaign.list` answers from now on. */
  setCampaigns(campaigns: Array<Record<string, unknown>>): void
  /** Card answers so far, by path and status; cleared by `reset()`. */
  cardRequests(): CardRequestCounts
  addTask(task: Record<string, unknown>): void
  getTask(id: string): Record<string, unknown> | undefined
  control: SimulatorControl
  /** The requests a `hold` fault holds now, in arrival order. */
  held(): HeldRequest[]
  /**
   * Runs each held request (matching `filter`, default all) through the normal handler now, in
   * arrival order, as if it had just arrived: applied or refused, and counted. Its client gets
   * the answer if still connected. Returns how many were delivered.
   */
  deliverHeld(filter?: (r: HeldRequest) => boolean): number
  /** Forgets held requests (matching `filter`, default all) unapplied, as a remote that lost them, and resets their connections. Returns the count. */
  dropHeld(filter?: (r: HeldRequest) => boolean): number
  /** Clears received requests, card answer counts, faults and both card transforms (back to the options'); tasks, control state, signing keys and held requests stay. */
  reset(): void
  /** Drops held requests and any pending delay, so it never waits for them. */
  close(): Promise<void>
}
