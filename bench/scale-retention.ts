// The scale bench's retention pass (issue 47; bench/scale.ts): a ledger of BENCH_SCALE_RETENTION
// records (default 1,250,000) none of which retention has reached yet, a copy of a kept one, and
// the gateway on it with a 30-day window: over a million records to prune. The gateway prunes as
// its timer does (src/control/plane-upkeep.ts: batches with a pause between them, a bounded
// number per run), its runs back to back from the moment the bench says so
// (bench/scale-gateway-child.ts) — the timer would space them ten minutes apart, which changes
// nothing within a run — for BENCH_SCALE_RETENTION_S seconds (default 120; 0: to the end), the
// whole pass's time then extrapolated from its rate, back to back and as the gateway schedules it. Read and mutation latencies, one request in flight in turn — a record by
// id, a campaign's listing, the unresolved listing, an intervention — are measured idle right
// before the pass and while it runs; the pass's time and its batches' come from the gateway, and
// on PostgreSQL the pruning statement it sent last, whose plan is shown once the pass is over.
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { DAY, prng, SEED, scaleCampaignId, scalePlan, scaleRequestId, type ScalePlan } from './scale-rows.js'
import { ledgerRows, scaleLedger, type Store } from './scale-fill.js'
import { claimAll, freeCampaigns, intervene, startScaleGateway, type Answer, type ScaleGateway } from './scale-gateway.js'
import type { ChildReport, Statement } from './scale-gateway-child.js'

/** the gateway's window for the pass: 150 of the ledger's 180 days fall outside it */
export const RETENTION_PASS_DAYS = 30
export const IDLE_S = Number(process.env.BENCH_SCALE_RETENTION_IDLE_S ?? 20)
export const PASS_S = Number(process.env.BENCH_SCALE_RETENTION_S ?? 120)

export const KINDS = ['record by id', 'campaign list', 'unresolved list', 'mutation'] as const
export type Kind = (typeof KINDS)[number]
export type Samples = Record<Kind, number[]>

export interface RetentionFigures {
  store: Store
  records: number
  /** records retention could prune when the gateway started, and after the pass */
  prunable: number
  left: number
  fillS: number | undefined
  note: string
  pass: Extract<ChildReport, { type: 'pruned' }>
  idle: Samples
  during: Samples
  loopIdle: Extract<ChildReport, { type: 'loop' }>
  loopPass: Extract<ChildReport, { type: 'loop' }>
  load: [number, number]
  /** PostgreSQL: the last pruning statement's plan, run again once the pass is over (rolled back) */
  planAfter: string | undefined
}

const prunableSql = `SELECT count(*) AS n FROM mutation_records
  WHERE pruned_at IS NULL AND state IN ('applied', 'rejected', 'not_applied') AND updated_at < $1`
const countPrunable = async (url: string): Promise<number> =>
  Number((await ledgerRows<{ n: number | string }>(url, prunableSql, [Date.now() - RETENTION_PASS_DAYS * DAY]))[0]!.n)

export async function retentionPass (store: Store, pgBase: string | undefined, runId: string, dir: string): Promise<RetentionFigures> {
  const size = Number(process.env.BENCH_SCALE_RETENTION ?? 1_250_000)
  const ledger = await scaleLedger({ store, size, pruned: false, use: 'copy', pgBase, runId }, dir)
  try {
    const plan = scalePlan(size)
    const prunable = await countPrunable(ledger.url)
    const free = await freeCampaigns(ledger.url, plan, parseInt(runId, 16))
    const gw = await startScaleGateway(ledger.url, { GATEWAY_LEDGER_RETENTION_DAYS: String(RETENTION_PASS_DAYS) }, { BENCH_SCALE_RETENTION: '1' })
    let f: Pass
    try {
      await claimAll(gw, free, runId)
      f = await measurePass(gw, plan, free, runId)
    } finally {
      await gw.close()
    }
    const planAfter = f.pass.statement === undefined ? undefined : await explain(ledger.url, f.pass.statement)
    return { store, records: size, prunable, left: await countPrunable(ledger.url), fillS: ledger.fillS, note: ledger.note, planAfter, ...f }
  } finally {
    await ledger.drop()
  }
}

type Pass = Pick<RetentionFigures, 'pass' | 'idle' | 'during' | 'loopIdle' | 'loopPass' | 'load'>

async function measurePass (gw: ScaleGateway, plan: ScalePlan, free: number[], runId: string): Promise<Pass> {
  const next = sampler(gw, plan, free, runId)
  // warm-up: the JIT and the store's caches
  await sample(next, () => false, 50)
  gw.ask({ type: 'loop' })
  await gw.next('loop')
  const idleEnd = performance.now() + IDLE_S * 1000
  const idle = await sample(next, () => performance.now() >= idleEnd)
  gw.ask({ type: 'loop' })
  const loopIdle = await gw.next('loop')
  const l0 = loadavg()[0]!
  const done = gw.next('pruned')
  let over = false
  void done.finally(() => { over = true })
  gw.ask({ type: 'prune', ...(PASS_S > 0 ? { seconds: PASS_S } : {}) })
  const during = await sample(next, () => over)
  const pass = await done
  gw.ask({ type: 'loop' })
  const loopPass = await gw.next('loop')
  return { pass, idle, during, loopIdle, loopPass, load: [l0, loadavg()[0]!] }
}

/** the requests in turn, one in flight: each call answers its kind and how it went */
function sampler (gw: ScaleGateway, plan: ScalePlan, free: number[], runId: string): () => Promise<[Kind, Answer]> {
  const rnd = prng(SEED + 3)
  let k = 0
  let cursor: string | null = null
  return async () => {
    const kind = KINDS[k++ % KINDS.length]!
    if (kind === 'record by id') {
      const i = Math.floor(rnd() * plan.size)
      return [kind, await gw.call('GET', `/v1/campaigns/${scaleCampaignId(plan.campaignOf[i]!)}/requests/${scaleRequestId(i)}`)]
    }
    if (kind === 'campaign list') return [kind, await gw.call('GET', `/v1/campaigns/${scaleCampaignId(Math.floor(rnd() * plan.campaigns))}/requests`)]
    if (kind === 'unresolved list') {
      const r = await gw.call('GET', `/v1/requests${cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`}`)
      if (r.status === 200) cursor = (JSON.parse(r.text) as { nextCursor: string | null }).nextCursor
      return [kind, r]
    }
    return [kind, await intervene(gw, free[k % free.length]!, runId, 'rv', k)]
  }
}

/** requests until `stop` says so (checked before each), or `rounds` of every kind */
async function sample (next: () => Promise<[Kind, Answer]>, stop: () => boolean, rounds = Infinity): Promise<Samples> {
  const out: Samples = { 'record by id': [], 'campaign list': [], 'unresolved list': [], mutation: [] }
  for (let n = 0; n < rounds * KINDS.length && !stop(); n++) {
    const [kind, r] = await next()
    if (r.status !== 200) throw new Error(`${kind} answered ${r.status}: ${r.text.slice(0, 300)}`)
    out[kind].push(r.ms)
  }
  return out
}

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] }

/** how `s` reads mutation_records now, and how long it takes: EXPLAIN ANALYZE in a transaction rolled back */
async function explain (url: string, s: Statement): Promise<string> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query('BEGIN')
    const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, s.values)
    const top = r.rows[0]!['QUERY PLAN'][0]!
    const reads: string[] = []
    const walk = (n: PlanNode): void => {
      if (n['Relation Name'] === 'mutation_records' && n['Node Type'] !== 'ModifyTable') {
        const removed = n['Rows Removed by Filter']
        reads.push(`${n['Node Type']}${n['Index Name'] === undefined ? '' : ` ${n['Index Name']}`}${removed === undefined ? '' : ` (${removed} rows filtered out)`}`)
      }
      for (const k of n.Plans ?? []) walk(k)
    }
    walk(top.Plan)
    return `${reads.join(' + ')}: ${top['Execution Time'].toFixed(0)} ms`
  } finally {
    await c.query('ROLLBACK').catch(() => undefined)
    await c.end()
  }
}
