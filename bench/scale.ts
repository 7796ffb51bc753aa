// npm run bench -- --scale (issue 47): the ledger at size. For each size of BENCH_SCALE_SIZES
// (default 10000,1000000,10000000) and each store — an SQLite file, and PostgreSQL on a schema of
// BENCH_POSTGRES_URL or TEST_POSTGRES_URL (else skipped, saying so) — a ledger of that many
// records over up to 100,000 campaigns and 1,000 callers (bench/scale-rows.ts: as the gateway
// writes them, the older than 90 days pruned) is filled in the store after the gateway's own
// migrations, once, and kept (bench/scale-fill.ts): from 1M on a run uses the kept ledger itself,
// its own writes (a few thousand records, request ids of the run's own) removed before the next
// run; below, a copy (SQLite) or a fresh fill (PostgreSQL). Then the simulator and the gateway,
// each in a process of its own (bench/scale-gateway.ts), and the bench measures: start (fork to
// listening), the listings, a record by id, mutations serial and 32 in flight, reconcile of
// ambiguous records, the ledger's size on disk, and `ledger export`'s time and peak RSS
// (/usr/bin/time; stopped after BENCH_SCALE_EXPORT_TIMEOUT_S, its rate then extrapolated). Then
// retention's pass over a million records not pruned yet (bench/scale-retention.ts;
// BENCH_SCALE_RETENTION=0 skips it). Then a table and the issue's targets, each judged, with what
// explains a miss (bench/scale-report.ts). No network beyond 127.0.0.1 and the PostgreSQL URL.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildChildren, BUILD } from './child-ipc.js'
import { ledgerRows, scaleLedger, type ScaleLedger, type Store, type Use } from './scale-fill.js'
import { claimAll, freeCampaigns, intervene, sleep, startScaleGateway, type Answer, type ScaleGateway } from './scale-gateway.js'
import { report } from './scale-report.js'
import { retentionPass, type RetentionFigures } from './scale-retention.js'
import { prng, SEED, scaleCampaignId, scalePlan, scaleRequestId, type ScalePlan } from './scale-rows.js'

// the generator and the fills, where test/ledger/postgres-plans.test.ts finds them
export { scaleCampaignId, scalePlan, scaleRequestId, scaleRows, type ScalePlan, type ScaleRow } from './scale-rows.js'
export { fillPostgres, fillSqlite } from './scale-fill.js'

/** from this size a run uses the kept ledger itself: its few thousand records are under 1 % of it */
const REUSE_FROM = 1_000_000
const RECONCILES = 100

export interface Phase { rate: number; latencies: number[]; ok: number; other: string }
export interface Figures {
  store: Store
  size: number
  fillS: number | undefined
  note: string
  /** the 1-minute load average when the gateway started */
  load: number
  startMs: number
  /** of the start: node and the gateway's modules loaded, then the gateway's own start (the ledger opened, the upkeep started, listening) */
  bootMs: number
  gatewayMs: number
  campaignList: number[]
  unresolvedList: number[]
  byId: number[]
  reconcile: number[]
  reconcileStatuses: string
  serial: Phase
  concurrent: Phase
  bytes: number
  exportS: number | undefined
  exportRssKb: number | undefined
  exportNote: string
}

export async function scale (): Promise<void> {
  const t0 = performance.now()
  // empty: the retention pass alone
  const sizes = (process.env.BENCH_SCALE_SIZES ?? '10000,1000000,10000000').split(',').filter((s) => s.trim() !== '').map((s) => Number(s.trim().replace(/_/g, '')))
  if (sizes.some((n) => !Number.isInteger(n) || n < 100)) throw new Error('BENCH_SCALE_SIZES: comma-separated record counts, each at least 100')
  const pgBase = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL
  const stores: Store[] = ['sqlite']
  if (pgBase !== undefined) stores.push('postgres')
  else console.log('scale on PostgreSQL skipped: set BENCH_POSTGRES_URL (or TEST_POSTGRES_URL)')
  buildChildren()
  const all: Figures[] = []
  for (const size of sizes) {
    for (const store of stores) {
      const f = await inOwnDir(async (dir, runId) => await measure({ store, size, pruned: true, use: useFor(store, size), pgBase, runId }, dir))
      all.push(f)
      console.log(`${store} ${size}: ${f.fillS === undefined ? 'kept ledger' : `filled in ${f.fillS.toFixed(1)} s`}${f.note === '' ? '' : ` (${f.note})`}; start ${f.startMs.toFixed(0)} ms, export ${f.exportS?.toFixed(1) ?? f.exportNote}`)
    }
  }
  const retention: RetentionFigures[] = []
  if (process.env.BENCH_SCALE_RETENTION !== '0') {
    for (const store of stores) {
      const r = await inOwnDir(async (dir, runId) => await retentionPass(store, pgBase, runId, dir))
      retention.push(r)
      console.log(`${store} retention: ${r.pass.pruned} pruned in ${(r.pass.ms / 1000).toFixed(1)} s${r.pass.error === undefined ? '' : ` (failed: ${r.pass.error})`}${r.fillS === undefined ? '' : ` (ledger filled in ${r.fillS.toFixed(1)} s)`}${r.note === '' ? '' : ` (${r.note})`}`)
    }
  }
  report(all, retention, sizes, (performance.now() - t0) / 1000)
}

const useFor = (store: Store, size: number): Use => size >= REUSE_FROM ? 'reuse' : store === 'sqlite' ? 'copy' : 'fresh'

async function inOwnDir<T> (fn: (dir: string, runId: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-scale-'))
  try {
    return await fn(dir, randomBytes(4).toString('hex'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function measure (spec: Parameters<typeof scaleLedger>[0], dir: string): Promise<Figures> {
  const ledger = await scaleLedger(spec, dir)
  try {
    return await measureOn(ledger, spec.store, spec.size, spec.runId)
  } finally {
    await ledger.drop()
  }
}

async function measureOn (ledger: ScaleLedger, store: Store, size: number, runId: string): Promise<Figures> {
  const plan = scalePlan(size)
  const seed = parseInt(runId, 16)
  const free = await freeCampaigns(ledger.url, plan, seed)
  const targets = await ambiguousTargets(ledger.url, plan, seed, RECONCILES)
  const load = loadavg()[0]!
  const gw = await startScaleGateway(ledger.url)
  let m: Pick<Figures, 'campaignList' | 'unresolvedList' | 'byId' | 'serial' | 'concurrent' | 'reconcile' | 'reconcileStatuses'>
  try {
    const reads = await measureReads(gw, plan)
    await claimAll(gw, free, runId)
    m = { ...reads, ...await measureMutations(gw, free, runId), ...await measureReconcile(gw, targets) }
  } finally {
    await gw.close()
  }
  const exp = await ledgerExport(ledger.url, size)
  return { store, size, fillS: ledger.fillS, note: ledger.note, load, startMs: gw.startMs, bootMs: gw.bootMs, gatewayMs: gw.gatewayMs, ...m, bytes: await ledgerBytes(ledger.url), ...exp }
}

/** up to `n` ambiguous records in the store now, from a campaign of the run's own on */
async function ambiguousTargets (url: string, plan: ScalePlan, seed: number, n: number): Promise<Array<{ requestId: string; campaignId: string }>> {
  const from = scaleCampaignId(Math.floor(prng(seed + 1)() * plan.campaigns))
  const sql = (op: string): string => `SELECT request_id, campaign_id FROM mutation_records WHERE state = 'ambiguous' AND campaign_id ${op} $1 ORDER BY campaign_id LIMIT $2`
  const rows = await ledgerRows<{ request_id: string; campaign_id: string }>(url, sql('>='), [from, n])
  if (rows.length < n) rows.push(...await ledgerRows<{ request_id: string; campaign_id: string }>(url, sql('<'), [from, n - rows.length]))
  return rows.map((r) => ({ requestId: r.request_id, campaignId: r.campaign_id }))
}

/** each call's time, failing on an answer other than 200 */
async function timed (n: number, next: () => Promise<Answer>, what: string): Promise<number[]> {
  const out: number[] = []
  for (let k = 0; k < n; k++) {
    const r = await next()
    if (r.status !== 200) throw new Error(`${what} answered ${r.status}: ${r.text.slice(0, 300)}`)
    out.push(r.ms)
  }
  return out
}

async function measureReads (gw: ScaleGateway, plan: ScalePlan): Promise<Pick<Figures, 'campaignList' | 'unresolvedList' | 'byId'>> {
  const samples = Number(process.env.BENCH_SCALE_SAMPLES ?? 1000)
  const rnd = prng(SEED + 2)
  const campaign = async (): Promise<Answer> => await gw.call('GET', `/v1/campaigns/${scaleCampaignId(Math.floor(rnd() * plan.campaigns))}/requests`)
  // warm-up: the JIT and the store's caches, a little of each
  await timed(50, campaign, 'campaign listing')
  const campaignList = await timed(samples, campaign, 'campaign listing')
  let cursor: string | null = null
  const unresolvedList = await timed(samples, async () => {
    const r = await gw.call('GET', `/v1/requests${cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`}`)
    if (r.status === 200) cursor = (JSON.parse(r.text) as { nextCursor: string | null }).nextCursor
    return r
  }, 'unresolved listing')
  const byId = await timed(samples, async () => {
    const i = Math.floor(rnd() * plan.size)
    return await gw.call('GET', `/v1/campaigns/${scaleCampaignId(plan.campaignOf[i]!)}/requests/${scaleRequestId(i)}`)
  }, 'record by id')
  return { campaignList, unresolvedList, byId }
}

/** interventions on the claimed campaigns: 32 in flight, then one */
async function measureMutations (gw: ScaleGateway, free: number[], runId: string): Promise<Pick<Figures, 'serial' | 'concurrent'>> {
  let seq = 0
  const phase = async (concurrency: number, seconds: number): Promise<Phase> => {
    const latencies: number[] = []
    const other = new Map<number, number>()
    let ok = 0
    const t = performance.now()
    const end = t + seconds * 1000
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const n = seq++
        const r = await intervene(gw, free[n % free.length]!, runId, 'iv', n)
        latencies.push(r.ms)
        if (r.status === 200) ok++
        else other.set(r.status, (other.get(r.status) ?? 0) + 1)
      }
    }))
    return { rate: ok / ((performance.now() - t) / 1000), latencies, ok, other: [...other].map(([s, k]) => `${s}:${k}`).join(' ') }
  }
  const seconds = Number(process.env.BENCH_SECONDS ?? 4)
  await phase(32, 1)
  const concurrent = await phase(32, seconds)
  const serial = await phase(1, Math.min(2, seconds))
  return { serial, concurrent }
}

/** reconcile of ambiguous records: each owner's wait since the start must pass first (at most 35 s with the timeouts set) */
async function measureReconcile (gw: ScaleGateway, targets: Array<{ requestId: string; campaignId: string }>): Promise<Pick<Figures, 'reconcile' | 'reconcileStatuses'>> {
  const waitLeft = 36_000 - (performance.now() - gw.startedAt)
  if (waitLeft > 0) await sleep(waitLeft)
  const statuses = new Map<number, number>()
  const reconcile: number[] = []
  for (const t of targets) {
    const r = await gw.call('POST', `/v1/campaigns/${t.campaignId}/requests/${t.requestId}/reconcile`, {})
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    reconcile.push(r.ms)
  }
  return { reconcile, reconcileStatuses: [...statuses].map(([s, k]) => `${s}:${k}`).join(' ') }
}

/** the ledger on disk, as the gateway left it: the file and its WAL, or the table with its indexes and TOAST */
async function ledgerBytes (url: string): Promise<number> {
  if (url.startsWith('sqlite:')) {
    const size = (p: string): number => { try { return statSync(p).size } catch { return 0 } }
    const path = url.slice('sqlite:'.length)
    return size(path) + size(`${path}-wal`)
  }
  return Number((await ledgerRows<{ n: string }>(url, "SELECT pg_total_relation_size('mutation_records') AS n"))[0]!.n)
}

/**
 * `ledger export` as an operator runs it (the compiled bin), its output discarded, under
 * /usr/bin/time; stopped after BENCH_SCALE_EXPORT_TIMEOUT_S (default 120), its rate then read
 * from its last progress line and the whole ledger's time extrapolated
 */
async function ledgerExport (ledgerUrl: string, size: number): Promise<Pick<Figures, 'exportS' | 'exportRssKb' | 'exportNote'>> {
  const limitS = Number(process.env.BENCH_SCALE_EXPORT_TIMEOUT_S ?? 120)
  const proc = spawn('/usr/bin/time', ['-f', 'TIME %e %M', process.execPath, join(BUILD, 'src', 'cli', 'index.js'), 'ledger', 'export'], {
    env: { ...process.env, GATEWAY_LEDGER_URL: ledgerUrl }, stdio: ['ignore', 'ignore', 'pipe'], detached: true
  })
  let err = ''
  proc.stderr.on('data', (d: Buffer) => { err += d.toString() })
  let killed = false
  const t0 = performance.now()
  const timer = setTimeout(() => { killed = true; try { process.kill(-proc.pid!, 'SIGKILL') } catch {} }, limitS * 1000)
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve))
  clearTimeout(timer)
  if (killed) {
    const done = [...err.matchAll(/exported (\d+) records…/g)].at(-1)
    const n = done === undefined ? 0 : Number(done[1])
    const rate = n / ((performance.now() - t0) / 1000)
    return { exportS: undefined, exportRssKb: undefined, exportNote: n === 0 ? `stopped after ${limitS} s, nothing exported` : `stopped after ${limitS} s at ${n} records: ${rate.toFixed(0)}/s, ~${(size / rate).toFixed(0)} s for all` }
  }
  const m = /TIME ([\d.]+) (\d+)/.exec(err)
  const n = /exported (\d+) records\n/.exec(err) // the last line; the progress lines end in '…'
  const note = code !== 0 ? `exit ${String(code)}: ${err.slice(0, 200)}` : n === null ? 'no count' : Number(n[1]) >= size ? '' : `only ${n[1]} records`
  return { exportS: m === null ? undefined : Number(m[1]), exportRssKb: m === null ? undefined : Number(m[2]), exportNote: note }
}
