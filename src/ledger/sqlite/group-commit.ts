// Group commit for the SQLite ledger (docs/design.md#group-commit): every write of the ledger
// is a closure queued here, and the closures queued while the event loop serves one round run
// together at the next `setImmediate`, each in a savepoint of one transaction, committed once.
// synchronous=FULL makes that commit — and so every write in it — durable before any of their
// promises settle: a write resolves after the commit that holds it, never before, and a failed
// commit rejects every write of its batch (none of them is on disk, none of them took effect).
// Why: one fsync per write put two durable commits of each mutation on the event loop, a third
// of its CPU; writes of different campaigns now share one.
import type Database from 'better-sqlite3'

interface Queued {
  run: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

export interface GroupCommit {
  /** runs `fn` in the next batch's transaction; settles once that transaction is committed */
  write: <T>(fn: () => T) => Promise<T>
  /** commits what is queued now, synchronously (close) */
  flush: () => void
  /** batches committed and writes they held, since open (diagnostics and tests) */
  readonly stats: { batches: number; writes: number }
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown }

export function createGroupCommit (db: Database.Database): GroupCommit {
  let queue: Queued[] = []
  let scheduled: NodeJS.Immediate | undefined
  const stats = { batches: 0, writes: 0 }

  // a write that throws is rolled back to its own savepoint and reported to its caller alone;
  // one that lost the whole transaction (SQLite rolls back on some I/O and full-disk errors)
  // takes the batch with it, since what ran before it is gone too
  const inSavepoint = db.transaction((fn: () => unknown) => fn())
  const runBatch = db.transaction((batch: Queued[]): Outcome[] => {
    const outcomes: Outcome[] = []
    for (const w of batch) {
      try {
        outcomes.push({ ok: true, value: inSavepoint(w.run) })
      } catch (err) {
        if (!db.inTransaction) throw err
        outcomes.push({ ok: false, err })
      }
    }
    return outcomes
  })

  const flush = (): void => {
    if (scheduled !== undefined) clearImmediate(scheduled)
    scheduled = undefined
    const batch = queue
    queue = []
    if (batch.length === 0) return
    let outcomes: Outcome[]
    try {
      outcomes = runBatch(batch)
    } catch (err) {
      for (const w of batch) w.reject(err)
      return
    }
    stats.batches++
    stats.writes += batch.length
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i]!
      if (o.ok) batch[i]!.resolve(o.value)
      else batch[i]!.reject(o.err)
    }
  }

  return {
    write: async <T>(fn: () => T) => await new Promise<T>((resolve, reject) => {
      queue.push({ run: fn, resolve: resolve as (value: unknown) => void, reject })
      scheduled ??= setImmediate(flush)
    }),
    flush,
    stats
  }
}
