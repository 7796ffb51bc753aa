// The PostgreSQL ledger's query plans at size (issue 47; docs/design.md#ledger): a schema filled
// with a few thousand records as the gateway writes them (bench/scale.ts's generator: many
// campaigns, mostly resolved, a few ambiguous and pending, half of them pruned), ANALYZEd as
// autovacuum would, then the very statements the store sends — captured from its pool, not
// copied — for the listings behind GET /v1/campaigns/:id/requests and GET /v1/requests, a record
// by id (the lookup, reconcile's first read), the campaign's ticket and the pages of `ledger export`,
// each EXPLAINed with its own parameters. Every one must reach mutation_records through an index: a
// sequential scan there reads the whole ledger, which grows forever (CONTRACT §13); a page of the
// export must also sort nothing and start at its cursor. No planner setting is changed.
// Skipped, saying so, without TEST_POSTGRES_URL.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillPostgres, scaleCampaignId, scalePlan, scaleRequestId, type ScalePlan } from '../../bench/scale.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'
import { createLedger } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { freshSchema } from '../helpers/postgres.js'

const BASE = process.env.TEST_POSTGRES_URL
if (BASE === undefined) console.warn('SKIP the PostgreSQL plan tests: TEST_POSTGRES_URL is not set')

const RECORDS = 5000

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Shared Hit Blocks'?: number
  'Shared Read Blocks'?: number
  Plans?: PlanNode[]
}

/** every node that reads mutation_records, as "<node type> <index>" (a bitmap heap scan: its bitmap's indexes; none: "-") */
function accesses (n: PlanNode, out: string[] = []): string[] {
  if (n['Relation Name'] === 'mutation_records') {
    const bitmaps = n['Node Type'] === 'Bitmap Heap Scan' ? indexesUnder(n) : []
    out.push(`${n['Node Type']} ${n['Index Name'] ?? (bitmaps.join('+') || '-')}`)
  }
  for (const c of n.Plans ?? []) accesses(c, out)
  return out
}

function indexesUnder (n: PlanNode): string[] {
  return (n.Plans ?? []).flatMap((c) => [...(c['Index Name'] === undefined ? [] : [c['Index Name']]), ...indexesUnder(c)])
}

/** every node type in the plan */
const nodeTypes = (n: PlanNode): string[] => [n['Node Type'], ...(n.Plans ?? []).flatMap(nodeTypes)]

/** the blocks a run of the plan read (its top node counts its children's) */
const blocks = (n: PlanNode): number => (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0)

describe.skipIf(BASE === undefined)('the PostgreSQL ledger\'s plans over a filled schema', { tags: ['slow'] }, () => {
  let url: string
  let drop: (() => Promise<void>) | undefined
  let ledger: Ledger
  let plan: ScalePlan
  const sent: Array<{ text: string; values: unknown[] }> = []
  const original = pg.Pool.prototype.query

  beforeAll(async () => {
    const s = await freshSchema(BASE!)
    url = s.url
    drop = s.drop
    plan = scalePlan(RECORDS)
    await fillPostgres(url, plan, Date.now())
    ledger = await createLedger(url, { ambiguousAnswer })
    // the statements the store sends, as sent: text and parameters
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      const c = args[0] as { text?: string; values?: unknown[] } | string
      if (typeof c === 'object' && typeof c.text === 'string' && c.text.includes('mutation_records')) sent.push({ text: c.text, values: c.values ?? [] })
      return (original as (...a: unknown[]) => unknown).apply(this, args)
    } as typeof pg.Pool.prototype.query
  }, 120_000)

  afterAll(async () => {
    pg.Pool.prototype.query = original
    await ledger?.close()
    await drop?.()
  })

  /** the plans of the statements `run` sends, each EXPLAINed with its own parameters (`analyze`: run, with its buffers) */
  async function plansOf (run: () => Promise<unknown>, analyze = false): Promise<PlanNode[]> {
    sent.length = 0
    await run()
    expect(sent.length).toBeGreaterThan(0)
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      const out: PlanNode[] = []
      for (const s of sent) {
        const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (${analyze ? 'ANALYZE, BUFFERS, ' : ''}FORMAT JSON) ${s.text}`, s.values)
        out.push(r.rows[0]!['QUERY PLAN'][0]!.Plan)
      }
      return out
    } finally {
      await c.end()
    }
  }
  /** how the statements `run` sends read mutation_records */
  const planOf = async (run: () => Promise<unknown>): Promise<string[]> => (await plansOf(run)).flatMap((p) => accesses(p))

  const busiest = (): string => scaleCampaignId(plan.countOf.indexOf(Math.max(...plan.countOf)))
  /** every read of mutation_records goes through one of its indexes; a sequential scan is named in the failure */
  const noSeqScan = (nodes: string[]): void => {
    expect(nodes.length).toBeGreaterThan(0)
    expect(nodes.filter((n) => !/^(Index Scan|Index Only Scan|Bitmap Heap Scan) mutation_records_\w+/.test(n))).toEqual([])
  }

  it('a campaign\'s records, newest first (GET /v1/campaigns/:id/requests), read through an index', async () => {
    noSeqScan(await planOf(async () => await ledger.listByCampaign(busiest(), { limit: 100 })))
    noSeqScan(await planOf(async () => await ledger.listByCampaign(busiest(), { state: 'applied', limit: 100 })))
  })

  it('the unresolved records of every campaign, a page and the next (GET /v1/requests), read through an index', async () => {
    const first = await ledger.listUnresolved({ limit: 101 })
    expect(first.length).toBeGreaterThan(0)
    noSeqScan(await planOf(async () => await ledger.listUnresolved({ limit: 101 })))
    const last = first.at(-1)!
    noSeqScan(await planOf(async () => await ledger.listUnresolved({ state: 'ambiguous', after: { createdAt: last.createdAt, requestId: last.requestId }, limit: 101 })))
  })

  // ledger export (src/cli/ledger-command.ts) pages through every record by (created_at, request_id):
  // a scan and a sort of the whole ledger per page made it quadratic (issue 47; migration 9)
  it('the export, a page at a time: the first, one after a cursor, one from a time on, seek the creation-order index and sort nothing', async () => {
    const first = await ledger.exportRecords({ limit: 1000 })
    expect(first).toHaveLength(1000)
    const last = first.at(-1)!
    const middle = first[500]!
    const pages = [
      async () => await ledger.exportRecords({ limit: 1000 }),
      async () => await ledger.exportRecords({ after: { createdAt: last.createdAt, requestId: last.requestId }, limit: 1000 }),
      async () => await ledger.exportRecords({ since: middle.createdAt, limit: 1000 }),
      async () => await ledger.exportRecords({ since: middle.createdAt, after: { createdAt: last.createdAt, requestId: last.requestId }, limit: 1000 })
    ]
    for (const page of pages) {
      const plans = await plansOf(page)
      expect(plans.flatMap((p) => accesses(p))).toEqual(['Index Scan mutation_records_created'])
      expect(plans.flatMap(nodeTypes).filter((t) => /Sort/.test(t))).toEqual([])
    }
  })

  it('a late page of the export reads about what the first does: the cursor and the window both bound the index scan', async () => {
    // a few records a page, so a scan from the index's start (a bound left loose: every page reads
    // all the records before it) stands out against the page's own reads
    const all = await ledger.exportRecords({ limit: RECORDS })
    const at = (k: number): { createdAt: number; requestId: string } => ({ createdAt: all[k]!.createdAt, requestId: all[k]!.requestId })
    const read = async (run: () => Promise<unknown>): Promise<number> => blocks((await plansOf(run, true))[0]!)
    const firstPage = await read(async () => await ledger.exportRecords({ limit: 5 }))
    const late = [
      await read(async () => await ledger.exportRecords({ after: at(RECORDS - 100), limit: 5 })),
      await read(async () => await ledger.exportRecords({ since: all[RECORDS - 100]!.createdAt, limit: 5 })),
      await read(async () => await ledger.exportRecords({ since: all[RECORDS - 200]!.createdAt, after: at(RECORDS - 100), limit: 5 })),
      await read(async () => await ledger.exportRecords({ since: all[RECORDS - 100]!.createdAt, after: at(100), limit: 5 }))
    ]
    for (const n of late) expect(n).toBeLessThanOrEqual(firstPage + 8)
  })

  it('a campaign\'s export, first page and one after a cursor, reads through the campaign\'s index', async () => {
    const c = busiest()
    const first = await ledger.exportRecords({ campaignId: c, limit: 20 })
    expect(first).toHaveLength(20)
    const last = first.at(-1)!
    for (const page of [
      async () => await ledger.exportRecords({ campaignId: c, limit: 1000 }),
      async () => await ledger.exportRecords({ campaignId: c, after: { createdAt: last.createdAt, requestId: last.requestId }, limit: 1000 }),
      async () => await ledger.exportRecords({ campaignId: c, since: last.createdAt, limit: 1000 })
    ]) {
      const nodes = await planOf(page)
      noSeqScan(nodes)
      // a sort here, if any, is of this campaign's records after the cursor, never the ledger's
      expect(nodes.filter((n) => !n.endsWith(' mutation_records_campaign'))).toEqual([])
    }
  })

  it('a record by id (its lookup, reconcile\'s first read) and a campaign\'s ticket, read through an index', async () => {
    const i = plan.lastOf[[...plan.ambiguous][0]!]!
    noSeqScan(await planOf(async () => await ledger.get(scaleRequestId(i))))
    noSeqScan(await planOf(async () => await ledger.ticket(busiest(), { requestId: scaleRequestId(i), lease: true })))
  })
})
