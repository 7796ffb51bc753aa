// The ledger's interface (docs/design.md "Ledger"): the durable record of every mutation, the
// gateway's view of each campaign's lease, and each campaign's bound task. `src/control/`
// talks only to this interface, so an SQLite and a PostgreSQL implementation can serve it
// alike and one contract test suite runs against both. Every method is async for that reason.

/** the logical mutations the gateway sends (REST route → remote operation) */
export const MUTATION_OPERATIONS = ['claim', 'renew', 'release', 'submit', 'intervene', 'cancel'] as const
export type MutationOperation = typeof MUTATION_OPERATIONS[number]

/**
 * pending: committed, maybe sent, outcome not yet known (owner is waiting)
 * applied / rejected: the outcome classes of a sent mutation
 * ambiguous: the remote may or may not have applied it; blocks its campaign until resolved
 * not_applied: an ambiguous record resolved as never applied (reconcile or acknowledge)
 */
export const RECORD_STATES = ['pending', 'applied', 'rejected', 'ambiguous', 'not_applied'] as const
export type RecordState = typeof RECORD_STATES[number]

/** the states that block a campaign until they are resolved */
export const UNRESOLVED_STATES = ['pending', 'ambiguous'] as const satisfies readonly RecordState[]
export type UnresolvedState = typeof UNRESOLVED_STATES[number]

/** where a record sorts in creation order: a page's cursor */
export interface RecordPosition { createdAt: number; requestId: string }

export interface Resolution {
  kind: 'reconcile' | 'acknowledge'
  /** caller name */
  by: string
  /** ms since epoch */
  at: number
  note: string | null
  /** acknowledge only */
  resolution: 'assume_applied' | 'assume_not_applied' | null
}

export interface NewMutationRecord {
  requestId: string
  campaignId: string
  /** caller name (the authenticated caller) */
  caller: string
  operation: MutationOperation
  paramsHash: string
  /** the caller's normalised body, shown only to its own caller or an admin */
  params: unknown
  /** the epoch the mutation carries (null for claim) */
  controllerEpoch: number | null
  /** instance id of the process that will send it */
  owner: string
  /** ms since epoch after which another process may turn it ambiguous */
  deadline: number
  /** ms since epoch */
  createdAt: number
}

/** what a finished request answers, stored so a replay returns it unchanged */
export interface StoredAnswer {
  httpStatus: number
  body: unknown
}

export interface MutationRecord extends NewMutationRecord {
  state: RecordState
  /** ms since epoch of the last state change */
  updatedAt: number
  /** the REST answer given (null while pending) */
  answer: StoredAnswer | null
  /** contract error code of a refused or ambiguous outcome, or null */
  outcomeCode: string | null
  /** the durable task id of an applied submission (or the task a cancel targeted) */
  taskId: string | null
  /** how many reconcile attempts failed (acknowledge requires one, where request_status exists) */
  reconcileFailures: number
  resolution: Resolution | null
}

export interface Outcome {
  state: Exclude<RecordState, 'pending'>
  answer: StoredAnswer
  outcomeCode: string | null
  taskId: string | null
  at: number
}

/** the gateway's view of a campaign's lease; local state can refuse, never authorise */
export interface LeaseView {
  campaignId: string
  /** false after a restart, a reconcile, an ambiguous result or a failed readback */
  known: boolean
  /** the lease as last seen (null: no lease held), meaningful only when known */
  lease: { controllerId: string; epoch: number; expiresAt: number } | null
  /** the highest epoch ever seen for the campaign: a lower one from the remote is invalid */
  maxEpochSeen: number
  updatedAt: number
}

export interface BoundTask { campaignId: string; taskId: string; requestId: string; boundAt: number }

export interface Ledger {
  readonly kind: 'sqlite' | 'postgres'
  /** inserts a pending record; 'exists' when the request id is used already (by anyone) */
  insertPending: (r: NewMutationRecord) => Promise<'inserted' | 'exists'>
  /**
   * a record that ended `rejected` with nothing sent (outcome code upstream_unavailable) is
   * taken back to `pending` for a retry of the same request (compare-and-set); false when it is
   * no longer such a record
   */
  retryUnsent: (requestId: string, r: { owner: string; deadline: number; controllerEpoch: number | null; at: number }) => Promise<boolean>
  get: (requestId: string) => Promise<MutationRecord | undefined>
  /** newest first */
  listByCampaign: (campaignId: string, opts?: { state?: RecordState; limit?: number }) => Promise<MutationRecord[]>
  /** the oldest `pending` or `ambiguous` record of the campaign, if any */
  firstUnresolved: (campaignId: string) => Promise<MutationRecord | undefined>
  /**
   * the `pending` and `ambiguous` records of every campaign (or those of one `state`), oldest
   * first (created_at, then request id), a page at a time: the records after `after`, the last
   * one of the previous page. A record inserted meanwhile sorts after every page already read
   * (it is newer), so pages never shift; a record resolved meanwhile simply drops out
   * (docs/design.md#finding-unresolved)
   */
  listUnresolved: (o: { state?: UnresolvedState; after?: RecordPosition; limit: number }) => Promise<MutationRecord[]>
  /** compare-and-set from `pending`; false when the record was no longer pending */
  recordOutcome: (requestId: string, o: Outcome) => Promise<boolean>
  /**
   * compare-and-set from `ambiguous` to `applied` / `not_applied`, with who resolved it; the
   * new answer replaces the stored one, so a later replay tells the resolved state
   */
  resolve: (requestId: string, to: 'applied' | 'not_applied', r: Resolution, taskId: string | null, answer: StoredAnswer) => Promise<boolean>
  noteReconcileFailure: (requestId: string, at: number) => Promise<void>
  /** pending records whose deadline is before `now` become ambiguous; returns their ids */
  expirePending: (now: number) => Promise<string[]>
  /** every pending record becomes ambiguous (SQLite start: this process owns the file) */
  expireAllPending: (now: number) => Promise<string[]>
  countAmbiguous: () => Promise<number>

  getLease: (campaignId: string) => Promise<LeaseView | undefined>
  /** a lease seen from the remote (null: none); raises maxEpochSeen, marks it known */
  putLease: (campaignId: string, lease: LeaseView['lease'], at: number) => Promise<void>
  /** forget what we knew: the next lease decision calls read_control first */
  markLeaseUnknown: (campaignId: string, at: number) => Promise<void>
  /** at start: nothing known before a restart is trusted (maxEpochSeen stays) */
  forgetAllLeases: (at: number) => Promise<void>

  getBoundTask: (campaignId: string) => Promise<BoundTask | undefined>
  setBoundTask: (b: BoundTask) => Promise<void>
  /** the campaign has no bound task (a submission acknowledged applied without its task id) */
  clearBoundTask: (campaignId: string) => Promise<void>

  /**
   * serialises mutations of one campaign (across replicas where the store allows it); waits
   * at most `waitMs`, then returns undefined. The returned function releases the lock.
   */
  lockCampaign: (campaignId: string, waitMs: number) => Promise<(() => Promise<void>) | undefined>

  /**
   * the audit trail in creation order (created_at, then request id), a page at a time: the
   * records after `after`, from `since` on, of one campaign if given (docs/design.md#operating-the-ledger)
   */
  exportRecords: (o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }) => Promise<MutationRecord[]>
  /**
   * retention: deletes at most `limit` resolved records (applied, rejected, not_applied) last
   * changed before `before`, never one a campaign's bound task names; answers how many
   */
  deleteResolvedBefore: (before: number, limit: number) => Promise<number>
  /** how many records the ledger holds (retention tests, operators) */
  countRecords: () => Promise<number>
  /** SQLite only: a consistent copy of the file, taken online (PostgreSQL has pg_dump) */
  backupTo?: (file: string) => Promise<void>

  /** reachable and writable enough to serve (readiness) */
  ping: () => Promise<boolean>
  close: () => Promise<void>
}
