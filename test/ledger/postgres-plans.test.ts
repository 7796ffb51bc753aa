// The PostgreSQL ledger's query plans at size (issue 47; docs/design.md#ledger): a schema filled
// with a few thousand records as the gateway writes them (bench/scale.ts's generator: many
// campaigns, mostly resolved, a few ambiguous and pending, half of them pruned), ANALYZEd as
// autovacuum would, then the very statements the store sends — captured from its pool, not
// copied — for the listings behind GET /v1/campaigns/:id/requests and GET /v1/requests, a record
// by id (the lookup, reconcile's first read) and the campaign's ticket, each EXPLAINed with its own
// parameters. Every one must reach mutation_records through an index: a sequential scan there
// reads the whole ledger, which grows forever (CONTRACT §13). No planner setting is changed.
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

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }

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

  /** the statement `run` sends, EXPLAINed with its own parameters */
  async function planOf (run: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0
    await run()
    expect(sent.length).toBeGreaterThan(0)
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      const out: string[] = []
      for (const s of sent) {
        const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${s.text}`, s.values)
        out.push(...accesses(r.rows[0]!['QUERY PLAN'][0]!.Plan))
      }
      return out
    } finally {
      await c.end()
    }
  }

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

  it('a record by id (its lookup, reconcile\'s first read) and a campaign\'s ticket, read through an index', async () => {
    const i = plan.lastOf[[...plan.ambiguous][0]!]!
    noSeqScan(await planOf(async () => await ledger.get(scaleRequestId(i))))
    noSeqScan(await planOf(async () => await ledger.ticket(busiest(), { requestId: scaleRequestId(i), lease: true })))
  })
})
