// The mutation pipeline's vocabulary (docs/design.md#order-of-checks): what it is handed once (its
// dependencies, the state every step reads), what each mutation asks and answers, and the state
// one mutation carries from its first check to its outcome.
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import type { ControlOperation } from '../discovery/capabilities.js'
import type { Discovery } from '../discovery/discovery.js'
import type { BindingStore, BoundTaskStore, CampaignLockStore, LeaseStore, MutationOperation, RecordStore } from '../ledger/types.js'
import type { UpstreamClient } from '../upstream/client.js'
import type { ClockWatch } from './clocks.js'
import type { GrantGate } from './grants.js'
import type { LeaseKeeper } from './leases.js'

export type MutationMetric = 'applied' | 'rejected' | 'ambiguous' | 'blocked' | 'replayed'

/**
 * The points of a mutation where a crash leaves a different trace (docs/design.md#outcomes):
 * before its pending record is committed, after it and before a byte leaves, and after the
 * answer before the outcome is written. Crash tests stop the process exactly there.
 */
export type MutationStep = 'before-pending' | 'before-send' | 'before-outcome'

export interface PipelineDeps {
  /** the records, the campaign's queue, the controller bindings; the bound task and the lease view an applied result writes */
  ledger: RecordStore & CampaignLockStore & BindingStore & BoundTaskStore & LeaseStore
  client: UpstreamClient
  discovery: Discovery
  leases: LeaseKeeper
  instanceId: string
  connectTimeoutMs: number
  mutationTimeoutMs: number
  readTimeoutMs: number
  maxTaskResponseBytes: number
  lockWaitMs: number
  logger: Logger
  now: () => number
  onMutation?: (operation: MutationOperation, outcome: MutationMetric) => void
  /**
   * the upstream circuit breaker's view (docs/design.md#circuit-breaker): while it is not closed
   * a mutation is refused before anything is written; absent: always closed
   */
  circuit?: { retryAfterSeconds: () => number | undefined }
  /** called synchronously at each step (crash tests); default none */
  onStep?: (step: MutationStep, requestId: string) => void
  /** this replica's offsets to the ledger's and the remote's clocks (docs/design.md#one-clock) */
  clocks: ClockWatch
  /** another identity presented a bound controller id (a metric) */
  onControllerConflict?: () => void
  /** a pending record was committed and its mutation may now leave: its owner waits `waitMs` (docs/design.md#one-clock) */
  onPending?: (requestId: string, waitMs: number) => void
  /** grants per campaign (docs/design.md#grants); absent (a rig of the steps alone), every caller reaches every campaign */
  grants?: GrantGate
}

export interface MutationRequest {
  operation: MutationOperation
  campaignId: string
  caller: Caller
  body: unknown
  /** the Idempotency-Key header, as received */
  idempotencyKey: string | string[] | undefined
  /**
   * the task a cancel names (the A2A front door's tasks/cancel, docs/api.md#a2a-front-door): it must
   * still be the campaign's bound task, and it is part of the params hash; REST names none
   */
  taskId?: string | undefined
}

export interface MutationAnswer { httpStatus: number; body: unknown; replayed: boolean }

/** one mutation once its request is read: what every later step and its log line use */
export interface Mutation {
  req: MutationRequest
  /** this process's clock when it started: its log line's duration */
  started: number
  /** the normalised body: the params the record keeps */
  body: Record<string, unknown>
  requestId: string
  controllerId: string
  paramsHash: string
  /** a claim or a fence: under no lease, sent on the ledger's clock alone */
  isClaim: boolean
}

/** the card's operation each mutation needs; submit rides on message/send */
export const CONTROL_OPERATION: Record<MutationOperation, ControlOperation | undefined> = {
  claim: 'claim_control',
  renew: 'renew_control',
  release: 'release_control',
  intervene: 'intervene',
  cancel: 'cancel',
  // an admin's claim on a blocked campaign (docs/design.md#fence)
  fence: 'claim_control',
  submit: undefined
}
