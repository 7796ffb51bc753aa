// Group commit (docs/design.md#group-commit), on real SQLite files: the writes queued in one
// round of the event loop share one transaction, and a write settles only once the commit that
// holds it is done — a second connection sees every resolved write, and none before. A write
// that throws fails alone; one that loses the transaction, or a commit that fails, fails the
// whole batch and leaves nothing of it.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createGroupCommit } from '../../src/ledger/sqlite/group-commit.js'

const dir = mkdtempSync(join(tmpdir(), 'group-commit-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

/** the writer, in WAL mode with synchronous=FULL as the ledger opens it, and a second reader */
function open (): { db: Database.Database; reader: Database.Database; rows: () => number[]; close: () => void } {
  const path = join(dir, `${randomBytes(6).toString('hex')}.db`)
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  db.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE t (n INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`)
  const reader = new Database(path, { readonly: true })
  const all = reader.prepare<[], { n: number }>('SELECT n FROM t ORDER BY n')
  return { db, reader, rows: () => all.all().map((r) => r.n), close: () => { reader.close(); db.close() } }
}

describe('group commit', () => {
  it('writes queued in one round share one commit, and each settles only after it: another connection sees every settled write and none before', async () => {
    const { db, rows, close } = open()
    const gc = createGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)')
    const seenAtSettle: number[][] = []
    const writes = Array.from({ length: 20 }, async (_, i) => {
      const changes = await gc.write(() => insert.run(i).changes)
      seenAtSettle.push(rows())
      return changes
    })
    // queued, not yet run: nothing is visible, not even to the writer's own connection
    expect(rows()).toEqual([])
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).toEqual({ c: 0 })
    expect(await Promise.all(writes)).toEqual(Array(20).fill(1))
    for (const seen of seenAtSettle) expect(seen).toHaveLength(20)
    expect(gc.stats).toEqual({ batches: 1, writes: 20 })
    // the next round is the next batch, in the order queued
    await Promise.all([gc.write(() => insert.run(21)), gc.write(() => insert.run(20))])
    expect(gc.stats).toEqual({ batches: 2, writes: 22 })
    expect(rows()).toEqual(Array.from({ length: 22 }, (_, i) => i))
    close()
  })

  it('a write that throws is rolled back alone and rejects alone; the others of its batch commit', async () => {
    const { db, rows, close } = open()
    const gc = createGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)')
    const results = await Promise.allSettled([
      gc.write(() => insert.run(1)),
      // two rows, the second a duplicate: its first row goes with it
      gc.write(() => { insert.run(2); insert.run(1) }),
      gc.write(() => insert.run(3))
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/)
    expect(rows()).toEqual([1, 3])
    expect(gc.stats).toEqual({ batches: 1, writes: 3 })
    close()
  })

  it('a write that loses the transaction fails its whole batch: what ran before it is gone, so none of them resolves, and the next batch commits', async () => {
    const { db, rows, close } = open()
    const gc = createGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)')
    const results = await Promise.allSettled([
      gc.write(() => insert.run(1)),
      // as SQLite does itself on some I/O and full-disk errors: the whole transaction rolled back
      gc.write(() => { db.exec('ROLLBACK'); throw new Error('disk I/O error') }),
      gc.write(() => insert.run(3))
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(rows()).toEqual([])
    expect(db.inTransaction).toBe(false)
    await gc.write(() => insert.run(4))
    expect(rows()).toEqual([4])
    close()
  })

  it('a commit that fails rejects every write of its batch and leaves none of them', async () => {
    const { db, rows, close } = open()
    const gc = createGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (n, parent) VALUES (?, ?)')
    // a deferred foreign key is checked at COMMIT: the one bad row fails the commit itself
    const results = await Promise.allSettled([gc.write(() => insert.run(1, null)), gc.write(() => insert.run(2, 99)), gc.write(() => insert.run(3, null))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/)
    expect(rows()).toEqual([])
    expect(gc.stats).toEqual({ batches: 0, writes: 0 })
    close()
  })

  it('flush commits what is queued at once (close), and the queued promises settle', async () => {
    const { db, rows, close } = open()
    const gc = createGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)')
    const w = gc.write(() => insert.run(7).changes)
    gc.flush()
    expect(rows()).toEqual([7])
    expect(await w).toBe(1)
    gc.flush() // nothing queued: nothing happens
    expect(gc.stats).toEqual({ batches: 1, writes: 1 })
    close()
  })
})
