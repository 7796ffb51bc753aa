// The SQLite ledger's query plans at size (issue 47; docs/design.md#ledger), the twin of
// postgres-plans.test.ts: a file filled with a few thousand records as the gateway writes them
// (bench/scale.ts's generator), opened by the store, then the very statements the store runs —
// captured from better-sqlite3 as run, with their parameters, not copied — for the pages of
// `ledger export`, the listings behind GET /v1/campaigns/:id/requests and GET /v1/requests, a
// record by id and the campaign's ticket, each under EXPLAIN QUERY PLAN. Every read of
// mutation_records must SEARCH an index: a SCAN reads the whole ledger, which grows forever
// (CONTRACT §13), and a temporary b-tree for the ORDER BY sorts every record it matched. A page of
// the export sorts nothing at all; a campaign's sorts only the ties of one creation time.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillSqlite, scaleCampaignId, scalePlan, scaleRequestId, type ScalePlan } from '../../bench/scale.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'
import { createLedger, sqliteDatabaseOf } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'

const RECORDS = 5000

type Run = (...args: unknown[]) => unknown
const RUNS = ['all', 'get', 'iterate', 'run'] as const

describe('the SQLite ledger\'s plans over a filled file', { tags: ['slow'] }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-sqlite-plans-'))
  let ledger: Ledger
  let db: Database.Database
  let plan: ScalePlan
  const sent: Array<{ source: string; args: unknown[] }> = []
  const probe = new Database(':memory:')
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<(typeof RUNS)[number], Run>
  probe.close()
  const original = Object.fromEntries(RUNS.map((m) => [m, proto[m]])) as Record<(typeof RUNS)[number], Run>

  beforeAll(async () => {
    plan = scalePlan(RECORDS)
    const path = join(dir, 'ledger.db')
    fillSqlite(path, plan, Date.now())
    ledger = await createLedger(`sqlite:${path}`, { ambiguousAnswer })
    db = sqliteDatabaseOf(ledger)!
    // the statements the store runs, as run: text and parameters
    for (const m of RUNS) {
      proto[m] = function (this: { source: string }, ...args: unknown[]) {
        if (this.source.includes('mutation_records') && !this.source.startsWith('EXPLAIN')) sent.push({ source: this.source, args })
        return original[m].apply(this, args)
      }
    }
  }, 120_000)

  afterAll(async () => {
    for (const m of RUNS) proto[m] = original[m]
    await ledger?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** the plan lines of the statements `run` runs that read mutation_records */
  async function planOf (run: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0
    await run()
    expect(sent.length).toBeGreaterThan(0)
    return sent.flatMap((s) => (db.prepare(`EXPLAIN QUERY PLAN ${s.source}`).all(...s.args) as Array<{ detail: string }>).map((r) => r.detail))
      .filter((d) => /mutation_records\b|TEMP B-TREE/.test(d))
  }

  const busiest = (): string => scaleCampaignId(plan.countOf.indexOf(Math.max(...plan.countOf)))
  /** every read of mutation_records searches one of its indexes; a scan or a sort of all it matched is named in the failure */
  const searched = (lines: string[], index = /mutation_records_\w+|sqlite_autoindex_mutation_records_1/): void => {
    expect(lines.filter((l) => /mutation_records\b/.test(l)).length).toBeGreaterThan(0)
    const search = new RegExp(`^SEARCH mutation_records USING (COVERING )?INDEX (${index.source}) \\(`)
    expect(lines.filter((l) => /mutation_records\b/.test(l) && !search.test(l))).toEqual([])
    expect(lines.filter((l) => l === 'USE TEMP B-TREE FOR ORDER BY')).toEqual([])
  }

  // ledger export (src/cli/ledger-command.ts) pages through every record by (created_at, request_id):
  // a scan and a sort of the whole ledger per page made it quadratic (issue 47; migration 9)
  it('the export, a page at a time: the first, one after a cursor, one from a time on, search the creation-order index and sort nothing', async () => {
    const first = await ledger.exportRecords({ limit: 1000 })
    expect(first).toHaveLength(1000)
    const last = { createdAt: first.at(-1)!.createdAt, requestId: first.at(-1)!.requestId }
    const since = first[500]!.createdAt
    // each page, and the creation time it starts at
    const pages: Array<[() => Promise<unknown>, number]> = [
      [async () => await ledger.exportRecords({ limit: 1000 }), 0],
      [async () => await ledger.exportRecords({ after: last, limit: 1000 }), last.createdAt],
      [async () => await ledger.exportRecords({ since, limit: 1000 }), since],
      [async () => await ledger.exportRecords({ since, after: last, limit: 1000 }), last.createdAt]
    ]
    for (const [page, start] of pages) {
      const lines = await planOf(page)
      searched(lines, /mutation_records_created/)
      expect(lines.filter((l) => l.includes('TEMP B-TREE'))).toEqual([])
      // SQLite seeks on one lower bound of created_at and only filters by the other, so both must
      // start at the page (within the millisecond before it): a loose one read every record before
      // the page, on every page, and the plan above reads the same either way
      const bound = sent[0]!.args[0] as { since: number; afterAt: number }
      expect(bound.since).toBeGreaterThanOrEqual(start)
      expect(bound.afterAt).toBeGreaterThanOrEqual(start - 1)
    }
  })

  it('a campaign\'s export, first page and one after a cursor, searches the campaign\'s index and sorts only the ties of a creation time', async () => {
    const c = busiest()
    const first = await ledger.exportRecords({ campaignId: c, limit: 20 })
    expect(first).toHaveLength(20)
    const last = { createdAt: first.at(-1)!.createdAt, requestId: first.at(-1)!.requestId }
    for (const page of [
      async () => await ledger.exportRecords({ campaignId: c, limit: 1000 }),
      async () => await ledger.exportRecords({ campaignId: c, after: last, limit: 1000 }),
      async () => await ledger.exportRecords({ campaignId: c, since: last.createdAt, after: last, limit: 1000 })
    ]) {
      const lines = await planOf(page)
      searched(lines, /mutation_records_campaign/)
      expect(lines.filter((l) => l.includes('TEMP B-TREE') && l !== 'USE TEMP B-TREE FOR LAST TERM OF ORDER BY')).toEqual([])
    }
  })

  it('a campaign\'s records, newest first (GET /v1/campaigns/:id/requests), and the unresolved of every campaign, a page and the next (GET /v1/requests)', async () => {
    searched(await planOf(async () => await ledger.listByCampaign(busiest(), { limit: 100 })))
    searched(await planOf(async () => await ledger.listByCampaign(busiest(), { state: 'applied', limit: 100 })))
    const first = await ledger.listUnresolved({ limit: 101 })
    expect(first.length).toBeGreaterThan(0)
    searched(await planOf(async () => await ledger.listUnresolved({ limit: 101 })))
    const last = first.at(-1)!
    searched(await planOf(async () => await ledger.listUnresolved({ state: 'ambiguous', after: { createdAt: last.createdAt, requestId: last.requestId }, limit: 101 })))
  })

  it('a record by id (its lookup, reconcile\'s first read) and a campaign\'s ticket', async () => {
    const i = plan.lastOf[[...plan.ambiguous][0]!]!
    searched(await planOf(async () => await ledger.get(scaleRequestId(i))))
    searched(await planOf(async () => await ledger.ticket(busiest(), { requestId: scaleRequestId(i), lease: true })))
  })
})
