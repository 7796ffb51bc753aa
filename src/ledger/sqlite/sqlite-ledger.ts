// The SQLite ledger (docs/design.md#ledger): the Ledger interface on one better-sqlite3 file
// owned by this process. The file is in synchronous=FULL WAL mode and every write goes through
// the group commit (docs/design.md#group-commit), so a write is on disk before its method
// resolves; reads run at once and see only what is committed.
//
// At open the ledger does not touch `pending` records: the control plane calls
// `expireAllPending(now)` at start (this process owns the file, so no other owner can still
// be waiting for one of them).
import type Database from 'better-sqlite3'
import type { Logger } from 'pino'
import { createCampaignLocks } from '../campaign-locks.js'
import { UNGUARDED } from '../guard.js'
import type { AmbiguousAnswer, CampaignTicket, InsertResult, Ledger } from '../types.js'
import { migrate } from './migrations.js'
import { openSqliteDatabase } from './open.js'
import { controllerKey, toBinding, toBoundTask, toFrontSend, toJson, toLease, toRecord } from '../rows.js'
import { prepareStatements } from './statements.js'
import { createGroupCommit, type GroupCommit } from './group-commit.js'

export { LedgerLockedError } from './open.js'

export interface SqliteLedgerOptions {
  /** the file (its directory is created if missing), or ':memory:' for tests */
  path: string
  /** what a record this store turns ambiguous answers (the control plane's rendering) */
  ambiguousAnswer: AmbiguousAnswer
  logger?: Logger
  /**
   * the ledger's clock: one process owns the file, so it is this process's own (the control
   * plane's, which tests move); default Date.now
   */
  now?: (() => number) | undefined
}

const databases = new WeakMap<Ledger, { db: Database.Database; group: GroupCommit }>()
const unguarded = (ledger: Ledger): Ledger => (ledger as Ledger & { [UNGUARDED]?: Ledger })[UNGUARDED] ?? ledger

/** the database behind a SQLite ledger, for tests and diagnostics (pragmas, batching) */
export function sqliteDatabaseOf (ledger: Ledger): Database.Database | undefined {
  return databases.get(unguarded(ledger))?.db
}

/** a SQLite ledger's commits and the writes they held since open (the bench, tests) */
export function sqliteCommitStatsOf (ledger: Ledger): { batches: number; writes: number } | undefined {
  const s = databases.get(unguarded(ledger))?.group.stats
  return s === undefined ? undefined : { ...s }
}

/** throws LedgerLockedError when another process (or handle) owns the file */
export function createSqliteLedger (opts: SqliteLedgerOptions): Ledger {
  const db = openSqliteDatabase(opts.path)
  let s: ReturnType<typeof prepareStatements>
  try {
    const { from, to } = migrate(db, opts.ambiguousAnswer)
    s = prepareStatements(db)
    opts.logger?.info({ path: opts.path, schemaVersion: to, migratedFrom: from }, 'ledger opened')
  } catch (err) {
    db.close()
    throw err
  }
  const locks = createCampaignLocks()
  const group = createGroupCommit(db)
  const write = group.write
  const clock = opts.now ?? Date.now
  /**
   * the checks that serialise a campaign, then the write, in one transaction: better-sqlite3 is
   * synchronous and one process owns the file, so nothing interleaves (docs/design.md#serialisation)
   */
  const serialised = db.transaction((ticket: CampaignTicket, fence: boolean, write: () => boolean): InsertResult => {
    const generation = s.generation.get(ticket.campaignId)?.generation ?? 0
    if (generation !== ticket.generation) return 'moved'
    const open = s.openState.get(ticket.campaignId)?.state
    if (open === 'pending' || (open === 'ambiguous' && !fence)) return 'blocked'
    if (!write()) return 'exists'
    s.bumpGeneration.run(ticket.campaignId)
    return 'inserted'
  })
  /** after a won outcome or resolution write: its task, if an applied submission's, for its front-door sender */
  const named = (requestId: string, won: boolean): boolean => {
    if (won) s.nameFrontTask.run({ requestId })
    return won
  }
  const makeAmbiguous = db.transaction((rows: Array<{ request_id: string; campaign_id: string }>, now: number) => {
    const ids: string[] = []
    for (const r of rows) {
      const answer = toJson(opts.ambiguousAnswer(r.campaign_id, r.request_id))
      if (s.makeAmbiguous.run({ requestId: r.request_id, answer, at: now }).changes === 1) ids.push(r.request_id)
    }
    return ids
  })

  const ledger: Ledger = {
    kind: 'sqlite',
    singleWriter: true,
    now: async () => clock(),
    ticket: async (campaignId, o = {}) => {
      const generation = s.generation.get(campaignId)?.generation ?? 0
      const row = s.firstUnresolved.get(campaignId)
      const ticket: CampaignTicket = { campaignId, generation, blocker: row === undefined ? undefined : toRecord(row) }
      if (o.requestId !== undefined) {
        const own = s.get.get(o.requestId)
        ticket.record = own === undefined ? undefined : toRecord(own)
      }
      if (o.lease === true) {
        const lease = s.getLease.get(campaignId)
        ticket.lease = lease === undefined ? null : toLease(lease)
      }
      return ticket
    },
    insertPending: async (r, ticket, o = {}) => {
      if (s.exists.get(r.requestId) !== undefined) return 'exists'
      const { waitMs, ...rest } = r
      const params = toJson(r.params)
      return await write(() => serialised(ticket, o.fence === true, () => {
        if (s.exists.get(r.requestId) !== undefined) return false
        s.insertPending.run({ ...rest, deadline: clock() + waitMs, params })
        return true
      }))
    },
    retryUnsent: async (requestId, r, ticket) => {
      const params = toJson(r.params)
      return await write(() => serialised(ticket, false, () =>
        s.retryUnsent.run({ requestId, owner: r.owner, deadline: clock() + r.waitMs, controllerEpoch: r.controllerEpoch, params, at: r.at }).changes === 1))
    },
    get: async (requestId) => {
      const row = s.get.get(requestId)
      return row === undefined ? undefined : toRecord(row)
    },
    listByCampaign: async (campaignId, o = {}) => {
      const limit = o.limit ?? -1 // SQLite: a negative limit is no limit
      const rows = o.state === undefined ? s.listByCampaign.all(campaignId, limit) : s.listByCampaignState.all(campaignId, o.state, limit)
      return rows.map(toRecord)
    },
    firstUnresolved: async (campaignId) => {
      const row = s.firstUnresolved.get(campaignId)
      return row === undefined ? undefined : toRecord(row)
    },
    listUnresolved: async (o) => s.listUnresolved.all({
      state: o.state ?? null, afterAt: o.after?.createdAt ?? Number.MIN_SAFE_INTEGER, afterId: o.after?.requestId ?? '', limit: o.limit
    }).map(toRecord),
    // the outcome and the task it names for its front-door sender, in one savepoint of the batch
    recordOutcome: async (requestId, o) => {
      const row = { requestId, state: o.state, answer: toJson(o.answer), outcomeCode: o.outcomeCode, taskId: o.taskId, at: o.at }
      return await write(() => named(requestId, s.recordOutcome.run(row).changes === 1))
    },
    // outcome_code stays 'ambiguous_write': it says how the send ended, the answer what replays
    resolve: async (requestId, to, r, taskId, answer) => {
      const row = { requestId, to, answer: toJson(answer), resolution: toJson(r), taskId, at: r.at }
      return await write(() => named(requestId, s.resolve.run(row).changes === 1))
    },
    noteReconcileFailure: async (requestId, at) => { await write(() => s.noteReconcileFailure.run(at, requestId)) },
    // the rows are read in the batch: what is pending when it runs, not when it was queued
    expirePending: async (at) => await write(() => makeAmbiguous(s.pendingBefore.all(clock()), at)),
    expireAllPending: async (at) => await write(() => makeAmbiguous(s.allPending.all(), at)),
    countAmbiguous: async () => s.countAmbiguous.get()?.n ?? 0,

    getLease: async (campaignId) => {
      const row = s.getLease.get(campaignId)
      return row === undefined ? undefined : toLease(row)
    },
    putLease: async (campaignId, lease, at) => {
      const row = { campaignId, controllerId: lease?.controllerId ?? null, epoch: lease?.epoch ?? null, expiresAt: lease?.expiresAt ?? null, at }
      await write(() => s.putLease.run(row))
    },
    markLeaseUnknown: async (campaignId, at) => { await write(() => s.markLeaseUnknown.run(campaignId, at)) },
    forgetAllLeases: async (at) => { await write(() => s.forgetAllLeases.run(at)) },

    getBoundTask: async (campaignId) => {
      const row = s.getBoundTask.get(campaignId)
      return row === undefined ? undefined : toBoundTask(row)
    },
    setBoundTask: async (b) => {
      const row = { ...b }
      await write(() => s.setBoundTask.run(row))
    },
    clearBoundTask: async (campaignId) => { await write(() => s.clearBoundTask.run(campaignId)) },

    exportRecords: async (o) => s.exportRecords.all({
      since: o.since ?? 0, campaignId: o.campaignId ?? null, afterAt: o.after?.createdAt ?? -1, afterId: o.after?.requestId ?? '', limit: o.limit
    }).map(toRecord),
    pruneResolvedBefore: async (before, limit, at) => await write(() => s.prune.run({ before, limit, at }).changes),
    countRecords: async () => s.countRecords.get()?.n ?? 0,

    bindController: async (b) => {
      const key = controllerKey(b.controllerId)
      const row = { key, ...b }
      return toBinding(await write(() => {
        s.bind.run(row)
        return s.binding.get(key)!
      }))
    },
    listControllerBindings: async () => s.bindings.all().map(toBinding),
    putRemoteClock: async (instanceId, m) => { await write(() => s.putRemoteClock.run({ instanceId, lo: Math.floor(m.lo), hi: Math.ceil(m.hi), at: clock() })) },
    freshRemoteClock: async (maxAgeMs) => {
      const at = clock()
      const row = s.freshRemoteClock.get({ since: at - maxAgeMs })
      return row === undefined ? undefined : { lo: row.lo_ms, hi: row.hi_ms, ageMs: Math.max(0, at - row.measured_at) }
    },
    removeControllerBinding: async (controllerId) => {
      const row = await write(() => s.unbind.get(controllerKey(controllerId)))
      return row === undefined ? undefined : toBinding(row)
    },
    liveLeasesOf: async (controllerId, nowMs) => s.liveLeasesOf.all(controllerKey(controllerId), nowMs).map((r) => r.campaign_id),
    getFrontSend: async (identity, messageId) => {
      const row = s.frontSend.get(identity, messageId)
      return row === undefined ? undefined : toFrontSend(row)
    },
    putFrontSend: async (f) => {
      const row = { ...f, answer: f.answer === null || f.answer === undefined ? null : toJson(f.answer) }
      return toFrontSend(await write(() => {
        s.putFrontSend.run(row)
        return s.frontSend.get(f.identity, f.messageId)!
      }))
    },
    settleFrontSend: async (identity, messageId, r) => {
      const row = { identity, messageId, taskId: r.taskId ?? null, answer: r.answer === undefined ? null : toJson(r.answer) }
      await write(() => s.settleFrontSend.run(row))
    },
    frontTaskOf: async (identity, taskId) => {
      const row = s.frontTaskOf.get(taskId, identity)
      return row === undefined ? undefined : toFrontSend(row)
    },
    campaignsOfTask: async (taskId) => s.campaignsOfTask.all(taskId).map((r) => r.campaign_id),
    pruneFrontReadsBefore: async (before, limit) => await write(() => s.pruneFrontReads.run({ before, limit }).changes),
    // SQLite's online backup API: page by page, consistent, while this process keeps writing
    backupTo: async (file) => { await db.backup(file) },

    lockCampaign: locks.lock,
    ping: async () => {
      try {
        return s.ping.get()?.ok === 1
      } catch {
        return false
      }
    },
    close: async () => {
      if (!db.open) return
      // what is queued is committed, and its callers answered, before the file closes
      group.flush()
      db.close()
      opts.logger?.info({ path: opts.path }, 'ledger closed')
    }
  }
  databases.set(ledger, { db, group })
  return ledger
}
