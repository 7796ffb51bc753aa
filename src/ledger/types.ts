// The ledger's interface (docs/design.md "Ledger"): the durable record of every mutation, the
// gateway's view of each campaign's lease, and each campaign's bound task. `src/control/`
// talks only to this interface, so an SQLite and a PostgreSQL implementation can serve it
// alike and one contract test suite runs against both. Every method is async for that reason.
// Its vocabulary (operations, record states) is a leaf it shares with the REST schemas.
import type { MutationOperation, RecordState, UnresolvedState } from '../../schemas/mutations.js'

export type { MutationOperation, RecordState, UnresolvedState }

/** where a record sorts in creation order: a page's cursor */
export interface RecordPosition { createdAt: number; requestId: string }

export interface Resolution {
  kind: 'reconcile' | 'acknowledge'
  /**
   * the resolving caller's name: shown, never compared — who owns the record is its `identity`
   * (docs/design.md#request-records)
   */
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
  /** caller name (the authenticated caller): shown, logged and counted, never an owner */
  caller: string
  /**
   * the owner: `static:<caller name>` or `jwt:<issuer>#<subject>` (src/control/identity.ts). Every
   * ownership decision — replay or 409, what the record shows — compares it, never the name
   * (docs/design.md#request-records)
   */
  identity: string
  operation: MutationOperation
  paramsHash: string
  /** the caller's normalised body, shown only to its own caller or an admin */
  params: unknown
  /** the epoch the mutation carries (null for claim) */
  controllerEpoch: number | null
  /** instance id of the process that will send it */
  owner: string
  /**
   * how long the owner may still wait for its outcome, grace included: the store writes the
   * deadline as its own clock's now plus this (docs/design.md#one-clock)
   */
  waitMs: number
  /** ms since epoch (this process's clock: the order records are shown in) */
  createdAt: number
}

/** what a finished request answers, stored so a replay returns it unchanged */
export interface StoredAnswer {
  httpStatus: number
  body: unknown
}

/**
 * what a record the store itself turns ambiguous (an expired pending record, migration 3)
 * answers on a replay: the control plane's rendering (src/control/ambiguous-answer.ts), handed to
 * the store when it opens. Stores keep state; they never write an HTTP answer of their own
 */
export type AmbiguousAnswer = (campaignId: string, requestId: string) => StoredAnswer

export interface MutationRecord extends Omit<NewMutationRecord, 'waitMs' | 'identity'> {
  /**
   * the owner's identity; null for a record whose owner is unknown (a JWT caller's, written
   * before records carried one: migration 6), which matches no caller — its details go to admins
   * alone and its id is 409 to everyone (docs/design.md#request-records)
   */
  identity: string | null
  /** ms since epoch on the ledger's clock after which any process may turn it ambiguous */
  deadline: number
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
  /**
   * when retention removed its params, answer and note (docs/design.md#request-ids-are-forever):
   * the record stays, so its id is never sent again; null while whole
   */
  prunedAt: number | null
}

/**
 * What a mutation reads of its campaign before its lease checks, and its pending insert must find
 * unchanged (docs/design.md#serialisation): the campaign's generation counts the pending records
 * ever inserted for it (and unsent ones taken back), so an insert on a stale ticket proves that
 * another mutation of the campaign started meanwhile, whoever held which lock.
 */
export interface CampaignTicket {
  campaignId: string
  generation: number
  /** the oldest pending or ambiguous record, if any: it blocks every mutation but a fence */
  blocker: MutationRecord | undefined
  /** asked for with `requestId`: that id's record, read with the ticket (undefined: none) */
  record?: MutationRecord | undefined
  /** asked for with `lease`: the campaign's lease view, read with the ticket (null: none) */
  lease?: LeaseView | null
}

/**
 * 'inserted': the record is pending and the campaign's generation moved on by one;
 * 'exists': the request id is used already (by anyone); 'moved': another mutation of the
 * campaign started since the ticket; 'blocked': the campaign has a pending record (or, but for
 * a fence, an ambiguous one) — the store refuses a second (docs/design.md#serialisation)
 */
export type InsertResult = 'inserted' | 'exists' | 'moved' | 'blocked'

/** a controller id bound to the one caller identity that may use it (docs/design.md#controller-bindings) */
export interface ControllerBinding {
  /** as first presented */
  controllerId: string
  /** `static:<caller name>` or `jwt:<issuer>#<subject>` */
  identity: string
  /** the caller name the identity had when it bound the id */
  caller: string
  boundAt: number
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
/**
 * One A2A front-door `message/send` (docs/api.md#a2a-front-door): de-duplicated by (caller
 * identity, message id), and the owner of the task a submission created. Shared by replicas, so
 * a task is visible to its own caller alone whichever replica is asked.
 */
export interface FrontSend {
  /** `static:<caller name>` or `jwt:<issuer>#<subject>` (src/control/identity.ts) */
  identity: string
  messageId: string
  /** the caller name when it was sent */
  caller: string
  /** a hash of the normalised send: the same id with other content is refused */
  contentHash: string
  kind: 'read' | 'submit'
  /** the submission's campaign; null for a read */
  campaignId: string | null
  /** the task a submission created, once known */
  taskId: string | null
  /** a read's first answer (the JSON-RPC result), replayed to a repeat; null for a submission */
  answer: unknown
  createdAt: number
}

/*
 * The ledger's roles (docs/design.md#ledger): each consumer takes only the roles it calls, so what
 * a module can touch of storage is read off its parameter types. `Ledger` is all of them at once:
 * what a store implements and the app holds.
 */

/** the mutation records and the checks that serialise a campaign's (docs/design.md#serialisation) */
export interface RecordStore {
  /**
   * the campaign's generation and blocker, read before a mutation's lease checks; with it, when
   * asked, a request id's record and the campaign's lease view, as of the same moment (one
   * statement on PostgreSQL: docs/design.md#serialisation)
   */
  ticket: (campaignId: string, o?: { requestId?: string; lease?: boolean }) => Promise<CampaignTicket>
  /**
   * inserts a pending record in one transaction with the checks that serialise its campaign:
   * the id unused, the ticket's generation unchanged, no pending record (and, unless `fence`,
   * no ambiguous one); at most one pending record per campaign is also the store's own index
   */
  insertPending: (r: NewMutationRecord, ticket: CampaignTicket, opts?: { fence?: boolean }) => Promise<InsertResult>
  /**
   * a record that ended `rejected` with nothing sent (outcome code upstream_unavailable) is taken
   * back to `pending` for a retry of the same request, under the same checks as an insert, with
   * its params again if retention had pruned them (it was never sent, so running it is no second
   * send); 'exists' when it is no longer such a record
   */
  retryUnsent: (requestId: string, r: { owner: string; waitMs: number; controllerEpoch: number | null; params: unknown; at: number }, ticket: CampaignTicket) => Promise<InsertResult>
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
  /**
   * compare-and-set from `pending`; false when the record was no longer pending. An applied
   * submission with a task id names that task, in the same transaction, on the front-door send of
   * the record's identity whose message id is the request id (kind 'submit', same campaign, task
   * still unknown): its sender sees its task as soon as the record names it, whether or not the
   * send's answer reached the door (docs/design.md#front-door)
   */
  recordOutcome: (requestId: string, o: Outcome) => Promise<boolean>
  /**
   * compare-and-set from `ambiguous` to `applied` / `not_applied`, with who resolved it; the
   * new answer replaces the stored one, so a later replay tells the resolved state. A submission
   * settled `applied` with a task id names it on its front-door send as `recordOutcome` does, in
   * the same transaction
   */
  resolve: (requestId: string, to: 'applied' | 'not_applied', r: Resolution, taskId: string | null, answer: StoredAnswer) => Promise<boolean>
  noteReconcileFailure: (requestId: string, at: number) => Promise<void>
  /**
   * pending records whose deadline has passed on the ledger's clock become ambiguous; `at` is
   * written as their updatedAt; returns their ids
   */
  expirePending: (at: number) => Promise<string[]>
  /** every pending record becomes ambiguous (SQLite start: this process owns the file) */
  expireAllPending: (at: number) => Promise<string[]>
  countAmbiguous: () => Promise<number>
  /**
   * the campaigns whose records name this task (a submission that made it, a cancel that targeted
   * it), in campaign id order; none for a task no recorded mutation named (docs/design.md#grants)
   */
  campaignsOfTask: (taskId: string) => Promise<string[]>
}

/** the per-campaign lock: a queue, relied on for nothing (docs/design.md#serialisation) */
export interface CampaignLockStore {
  /**
   * queues mutations of one campaign (across replicas where the store allows it); waits at most
   * `waitMs`, then returns undefined. The returned function releases the lock. Nothing depends on
   * holding it: the insert's checks serialise (docs/design.md#serialisation)
   */
  lockCampaign: (campaignId: string, waitMs: number) => Promise<(() => Promise<void>) | undefined>
}

/** each campaign's lease view: local state can refuse, never authorise */
export interface LeaseStore {
  getLease: (campaignId: string) => Promise<LeaseView | undefined>
  /** a lease seen from the remote (null: none); raises maxEpochSeen, marks it known */
  putLease: (campaignId: string, lease: LeaseView['lease'], at: number) => Promise<void>
  /** forget what we knew: the next lease decision calls read_control first */
  markLeaseUnknown: (campaignId: string, at: number) => Promise<void>
  /** at start: nothing known before a restart is trusted (maxEpochSeen stays) */
  forgetAllLeases: (at: number) => Promise<void>
}

/** each campaign's bound task */
export interface BoundTaskStore {
  getBoundTask: (campaignId: string) => Promise<BoundTask | undefined>
  setBoundTask: (b: BoundTask) => Promise<void>
  /** the campaign has no bound task (a submission acknowledged applied without its task id) */
  clearBoundTask: (campaignId: string) => Promise<void>
}

/** controller ids bound to caller identities (docs/design.md#controller-bindings) */
export interface BindingStore {
  /**
   * binds a controller id to an identity unless another holds it (ids that differ only in
   * letter case are one); answers the binding in force afterwards, this one or the other's
   */
  bindController: (b: ControllerBinding) => Promise<ControllerBinding>
  /** every binding, in controller id order */
  listControllerBindings: () => Promise<ControllerBinding[]>
  /** the binding removed, which held the id in any letter case; undefined when none did */
  removeControllerBinding: (controllerId: string) => Promise<ControllerBinding | undefined>
  /**
   * the campaigns whose lease view holds a lease under this controller id (letter case aside)
   * that has not expired at `nowMs` on the ledger's clock, whether or not the view is `known`: a
   * lease last seen live may still be (docs/design.md#controller-bindings); in campaign id order
   */
  liveLeasesOf: (controllerId: string, nowMs: number) => Promise<string[]>
}

/** the A2A front door's sends (docs/design.md#front-door) */
export interface FrontSendStore {
  /** the front door's send of this identity and message id, if any */
  getFrontSend: (identity: string, messageId: string) => Promise<FrontSend | undefined>
  /** inserts the send unless the identity already used the message id; answers the send in force */
  putFrontSend: (s: FrontSend) => Promise<FrontSend>
  /** what the send came to: a read's answer, a submission's task (the task's owner from then on) */
  settleFrontSend: (identity: string, messageId: string, r: { taskId?: string; answer?: unknown }) => Promise<void>
  /** the send of this identity that created the task; undefined when the task is not the identity's */
  frontTaskOf: (identity: string, taskId: string) => Promise<FrontSend | undefined>
}

/** the ledger's clock and the remote's measured against it (docs/design.md#one-clock) */
export interface ClockStore {
  /**
   * the ledger's clock, ms since the epoch: PostgreSQL's own, or this process's for SQLite. Every
   * deadline is written and judged on it (docs/design.md#one-clock)
   */
  now: () => Promise<number>
  /**
   * this replica's last measurement of the remote's clock against the ledger's (remote minus
   * ledger, ms), stamped with the ledger's own clock (docs/design.md#one-clock)
   */
  putRemoteClock: (instanceId: string, m: { lo: number; hi: number }) => Promise<void>
  /** the freshest measurement any replica wrote no more than `maxAgeMs` ago on the ledger's clock, with its age */
  freshRemoteClock: (maxAgeMs: number) => Promise<{ lo: number; hi: number; ageMs: number } | undefined>
}

/** retention (docs/design.md#request-ids-are-forever) */
export interface RetentionStore {
  /**
   * removes the params, answer and resolution note of at most `limit` resolved records (applied,
   * rejected, not_applied) last changed before `before` and not pruned yet; the record itself
   * stays forever (docs/design.md#request-ids-are-forever); answers how many
   */
  pruneResolvedBefore: (before: number, limit: number, at: number) => Promise<number>
  /**
   * deletes at most `limit` front-door reads sent before `before`, their stored answers with them
   * (a repeat after that is a fresh read); answers how many. Submissions stay: their hash and task
   * owner are kept as long as the request id (docs/design.md#request-ids-are-forever)
   */
  pruneFrontReadsBefore: (before: number, limit: number) => Promise<number>
  /** how many records the ledger holds (retention tests, operators) */
  countRecords: () => Promise<number>
}

/** what an operator takes out of the ledger (docs/design.md#operating-the-ledger) */
export interface ExportStore {
  /**
   * the audit trail in creation order (created_at, then request id), a page at a time: the
   * records after `after`, from `since` on, of one campaign if given (docs/design.md#operating-the-ledger)
   */
  exportRecords: (o: { since?: number; campaignId?: string; after?: RecordPosition; limit: number }) => Promise<MutationRecord[]>
  /** SQLite only: a consistent copy of the file, taken online (PostgreSQL has pg_dump) */
  backupTo?: (file: string) => Promise<void>
}

/** the store itself: what it is, whether it serves, and its end */
export interface LedgerLifecycle {
  /** which store this is (logs, tests); the control plane asks for a capability, never this */
  readonly kind: 'sqlite' | 'postgres'
  /**
   * this process is the store's only writer (SQLite: one process owns the file), so at start no
   * other process can still be waiting on one of its pending records
   */
  readonly singleWriter: boolean
  /** reachable and writable enough to serve (readiness) */
  ping: () => Promise<boolean>
  close: () => Promise<void>
}

export interface Ledger extends RecordStore, CampaignLockStore, LeaseStore, BoundTaskStore, BindingStore,
  FrontSendStore, ClockStore, RetentionStore, ExportStore, LedgerLifecycle {}
