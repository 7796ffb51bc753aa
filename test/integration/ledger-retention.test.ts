// Ledger retention (docs/design.md#operating-the-ledger): resolved records past
// GATEWAY_LEDGER_RETENTION_DAYS are deleted in small batches off the request path, on both
// ledgers; pending and ambiguous records and a bound task's record stay; the size stays bounded
// over many records. RETENTION_RECORDS sets how many (default 3,000; the note's figures use
// 100,000). PostgreSQL runs only with TEST_POSTGRES_URL (skipped, saying so, without it).
import { statSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteDatabaseOf } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { appliedOutcome, pendingRecord } from '../ledger/records.js'
import { freshSchema } from '../helpers/postgres.js'

const N = Number(process.env.RETENTION_RECORDS ?? 3000)
const DAY = 86_400_000
const dir = mkdtempSync(join(tmpdir(), 'oogw-retention-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })
const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP ledger retention on PostgreSQL: TEST_POSTGRES_URL is not set')

/** n resolved records, last changed at `at` (in batches, as fast as the store takes them) */
async function fill (ledger: Ledger, n: number, at: number): Promise<void> {
  const db = sqliteDatabaseOf(ledger)
  const put = async (): Promise<void> => {
    const r = pendingRecord({ createdAt: at, deadline: at + 1 })
    await ledger.insertPending(r)
    await ledger.recordOutcome(r.requestId, appliedOutcome(at))
  }
  for (let i = 0; i < n; i += 500) {
    const batch = Math.min(500, n - i)
    if (db !== undefined) {
      db.exec('BEGIN')
      for (let k = 0; k < batch; k++) await put()
      db.exec('COMMIT')
    } else {
      await Promise.all(Array.from({ length: batch }, put))
    }
  }
}

async function sizeOf (gw: TestGateway, kind: 'sqlite' | 'postgres', file: string): Promise<number> {
  if (kind === 'sqlite') {
    sqliteDatabaseOf(gw.app.ledger)?.pragma('wal_checkpoint(TRUNCATE)')
    return statSync(file).size
  }
  const c = new pg.Client({ connectionString: gw.env.GATEWAY_LEDGER_URL })
  await c.connect()
  // what autovacuum does on its own schedule: dead rows' space becomes reusable
  await c.query('VACUUM mutation_records')
  const n = Number((await c.query("SELECT pg_total_relation_size('mutation_records') AS n")).rows[0].n)
  await c.end()
  return n
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(kind === 'postgres' && PG === undefined)(`retention on ${kind}`, () => {
    it(`${N} old records pruned to what must stay; a second fill reuses the space`, async () => {
      let url: string
      let drop: (() => Promise<void>) | undefined
      const file = join(dir, `${kind}-ledger.db`)
      if (kind === 'sqlite') url = `sqlite:${file}`
      else ({ url, drop } = await freshSchema(PG!))
      let offset = 0
      const gw = await startGateway({ clock: () => Date.now() + offset, env: { GATEWAY_LEDGER_URL: url, GATEWAY_LEDGER_RETENTION_DAYS: '30' } })
      try {
        const ledger = gw.app.ledger
        const old = Date.now() - 10 * DAY
        // what must stay, however old: an ambiguous record, a pending one, a bound task's record
        const ambiguous = pendingRecord({ createdAt: old, deadline: old + 1 })
        await ledger.insertPending(ambiguous)
        await ledger.expirePending(old + 2)
        const pending = pendingRecord({ createdAt: old, deadline: Date.now() + DAY })
        await ledger.insertPending(pending)
        const bound = pendingRecord({ operation: 'submit', createdAt: old })
        await ledger.insertPending(bound)
        await ledger.recordOutcome(bound.requestId, appliedOutcome(old, 'task-kept'))
        await ledger.setBoundTask({ campaignId: bound.campaignId, taskId: 'task-kept', requestId: bound.requestId, boundAt: old })

        const t0 = Date.now()
        await fill(ledger, N, old)
        const fillMs = Date.now() - t0
        const full = await sizeOf(gw, kind, file)
        expect(await ledger.countRecords()).toBe(N + 3)
        // inside the window: nothing goes
        expect(await gw.app.control.prune()).toBe(0)
        // 40 days on, past the 30-day window
        offset = 40 * DAY
        const p0 = Date.now()
        let pruned = 0
        for (let n = -1; n !== 0;) { n = await gw.app.control.prune(); pruned += n }
        const pruneMs = Date.now() - p0
        expect(pruned).toBe(N)
        expect(await ledger.countRecords()).toBe(3)
        for (const r of [ambiguous, pending, bound]) expect(await ledger.get(r.requestId)).toBeDefined()
        const afterPrune = await sizeOf(gw, kind, file)
        // a second fill and prune: the space is reused, the size does not double
        offset = 0
        await fill(ledger, N, Date.now() - 10 * DAY)
        const refilled = await sizeOf(gw, kind, file)
        offset = 40 * DAY
        for (let n = -1; n !== 0;) n = await gw.app.control.prune()
        console.log(`retention ${kind}: ${N} records filled in ${fillMs} ms, size ${(full / 1048576).toFixed(1)} MiB; pruned in ${pruneMs} ms, size after ${(afterPrune / 1048576).toFixed(1)} MiB; refilled ${(refilled / 1048576).toFixed(1)} MiB`)
        expect(refilled).toBeLessThan(full * 1.5)
      } finally {
        await gw.close()
        await drop?.()
      }
    }, 600_000)
  })
}
