// The scale bench's ledger (issue 47; bench/scale.ts): which campaign each record belongs to, and
// every record as the gateway writes it — callers' bodies, the real params hash, stored answers
// built by the control plane's own renderers, deadlines, and retention's pruning of records older
// than 90 days, or none of it (a ledger retention has not reached yet, for its pass). Pure and
// deterministic: the records are a function of their index, so a ledger pruned and one not hold
// the same ids, campaigns and states.
import { ambiguousAnswer } from '../src/control/ambiguous-answer.js'
import { paramsHash } from '../src/control/rules.js'
import { requestView } from '../src/control/views.js'
import { GatewayError, type ErrorCode } from '../src/core/errors.js'
import { toRecord, type RecordRow } from '../src/ledger/rows.js'
import type { MutationOperation, Resolution } from '../src/ledger/types.js'

/** bump when the rows generated change: the cached ledgers are keyed by it */
export const GENERATOR_VERSION = 2
export const DAY = 86_400_000
/** the retention the gateway prunes at by default (docs/design.md#operating-the-ledger) */
export const RETENTION_DAYS = 90
/** the records span this many days before the fill */
export const SPAN_DAYS = 180
export const CALLERS = 1000
const MAX_CAMPAIGNS = 100_000
/** a campaign's share whose last record is ambiguous (it blocks the campaign until resolved) */
const AMBIGUOUS_SHARE = 0.1
export const SEED = 47

/** a deterministic 32-bit hash of (i, k): the request ids are a function of the record's index */
function mix (i: number, k: number): number {
  let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(k + 0x27d4eb2f, 0xc2b2ae35)
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b)
  return (h ^ (h >>> 16)) >>> 0
}
const hex8 = (n: number): string => n.toString(16).padStart(8, '0')

/** a UUID-shaped request id, as clients send (version 4's layout) */
export function scaleRequestId (i: number): string {
  const a = hex8(mix(i, 1)); const b = hex8(mix(i, 2)); const c = hex8(mix(i, 3)); const d = hex8(mix(i, 4))
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${(8 + (mix(i, 5) & 3)).toString(16)}${c.slice(1, 4)}-${c.slice(4)}${d}`
}
export const scaleCampaignId = (c: number): string => `scale-c${String(c).padStart(6, '0')}`
export const callerName = (n: number): string => `caller-${String(n).padStart(4, '0')}`
export const controllerName = (n: number): string => `ctl-${String(n).padStart(4, '0')}`

/** mulberry32 */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** which campaign each record belongs to, and what each campaign's last record is */
export interface ScalePlan {
  size: number
  campaigns: number
  campaignOf: Uint32Array
  /** per campaign: the index of its last record (-1: none) */
  lastOf: Int32Array
  /** per campaign: how many records (its generation: each was inserted pending once) */
  countOf: Uint32Array
  /** campaigns whose last record is ambiguous, and the few whose last is pending */
  ambiguous: Set<number>
  pending: Set<number>
}

export function scalePlan (size: number): ScalePlan {
  const campaigns = Math.max(1, Math.min(MAX_CAMPAIGNS, Math.ceil(size / 10)))
  const rnd = prng(SEED)
  const campaignOf = new Uint32Array(size)
  const lastOf = new Int32Array(campaigns).fill(-1)
  const countOf = new Uint32Array(campaigns)
  for (let i = 0; i < size; i++) {
    // skewed: a few campaigns are busy, most see a few mutations
    const u = rnd()
    const c = u < 0.2 ? Math.floor(rnd() * Math.max(1, campaigns / 100)) : Math.floor(rnd() * campaigns)
    campaignOf[i] = c
    lastOf[c] = i
    countOf[c]!++
  }
  const ambiguous = new Set<number>()
  const pending = new Set<number>()
  const pendingWanted = Math.max(1, Math.round(campaigns / 1000))
  for (let c = 0; c < campaigns; c++) {
    if (lastOf[c] === -1) continue
    const u = rnd()
    if (pending.size < pendingWanted && u < 0.002) pending.add(c)
    else if (u < AMBIGUOUS_SHARE) ambiguous.add(c)
  }
  return { size, campaigns, campaignOf, lastOf, countOf, ambiguous, pending }
}

/**
 * one mutation_records row, every column the stores write: the row the stores read
 * (src/ledger/rows.ts) with what the generator always fills in, and the reconcile failure's time
 */
export type ScaleRow = RecordRow & { identity: string; operation: MutationOperation; last_reconcile_failure_at: number | null }

/** JSON text as PostgreSQL's jsonb prints an object of scalars: keys by length then bytes, ", " and ": " */
function jsonbText (o: Record<string, unknown>): string {
  const keys = Object.keys(o).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(o[k])}`).join(', ')}}`
}

const REJECTIONS: ErrorCode[] = ['stale_epoch', 'lease_held_by_other', 'lease_expired', 'policy_rejected', 'upstream_unavailable']
const ID_MARK = '\u0000'
/** each rejection's stored answer, rendered once with a mark where the request id goes (an error's stack is costly) */
const REJECTED = new Map(REJECTIONS.map((code) => {
  const e = new GatewayError(code, { requestId: ID_MARK })
  return [code, JSON.stringify({ httpStatus: e.statusCode, body: e.toBody() })]
}))

export interface RowOptions {
  store: 'sqlite' | 'postgres'
  /** records older than the retention window pruned as the gateway prunes them (default), or left whole */
  pruned: boolean
}

interface Gen extends RowOptions { plan: ScalePlan; rnd: () => number; start: number; step: number; now: number; pruneBefore: number; owners: string[] }

/**
 * The rows of a ledger of `plan.size` records ending at `now`, oldest first, in batches. `store`
 * decides only how a pruned resolution's text reads (SQLite's json_set keeps the text compact,
 * PostgreSQL's jsonb concatenation prints it its own way), as each store's prune writes it.
 */
export function * scaleRows (plan: ScalePlan, now: number, store: 'sqlite' | 'postgres', batch = 5000, pruned = true): Generator<ScaleRow[]> {
  const g: Gen = {
    plan,
    store,
    pruned,
    now,
    rnd: prng(SEED + 1),
    start: now - SPAN_DAYS * DAY,
    step: (SPAN_DAYS * DAY - 3_600_000) / Math.max(1, plan.size),
    pruneBefore: now - RETENTION_DAYS * DAY,
    owners: Array.from({ length: 8 }, (_, k) => `gw-${hex8(mix(k, 99))}${hex8(mix(k, 98))}`)
  }
  let rows: ScaleRow[] = []
  for (let i = 0; i < plan.size; i++) {
    rows.push(scaleRow(g, i))
    if (rows.length === batch) { yield rows; rows = [] }
  }
  if (rows.length > 0) yield rows
}

/** what a record's caller sent: its operation and body, drawn from the stream in a fixed order */
function sent (g: Gen, i: number, requestId: string): { operation: MutationOperation; epoch: number; body: Record<string, unknown> } {
  const u = g.rnd()
  const operation: MutationOperation = u < 0.75 ? 'intervene' : u < 0.83 ? 'claim' : u < 0.91 ? 'renew' : u < 0.95 ? 'release' : 'submit'
  const epoch = 1 + Math.floor(g.rnd() * 20)
  const body: Record<string, unknown> = { requestId }
  if (operation === 'intervene') body.intervention = { action: 'adjust', knob: 'lr_scale', value: Math.round(g.rnd() * 100) / 100, seq: i }
  else if (operation === 'claim' || operation === 'renew') body.ttlSeconds = 300
  else if (operation === 'submit') body.parts = [{ kind: 'text', text: `resume from checkpoint ${i % 97}` }]
  return { operation, epoch, body }
}

function scaleRow (g: Gen, i: number): ScaleRow {
  const { plan } = g
  const c = plan.campaignOf[i]!
  const campaignId = scaleCampaignId(c)
  const requestId = scaleRequestId(i)
  const who = g.rnd() < 0.9 ? c % CALLERS : Math.floor(g.rnd() * CALLERS)
  const caller = callerName(who)
  const last = plan.lastOf[c] === i
  let createdAt = Math.round(g.start + i * g.step)
  if (last && plan.pending.has(c)) createdAt = g.now - 2000 - Math.floor(g.rnd() * 8000)
  const { operation, epoch, body } = sent(g, i, requestId)
  const row: ScaleRow = {
    request_id: requestId,
    campaign_id: campaignId,
    caller,
    identity: `static:${caller}`,
    operation,
    params_hash: paramsHash(operation, campaignId, body),
    params: 'null',
    controller_epoch: operation === 'claim' ? null : epoch,
    owner: g.owners[Math.min(g.owners.length - 1, Math.floor((i / plan.size) * g.owners.length))]!,
    deadline: createdAt + 45_000 + (operation === 'renew' ? 15_000 : 0),
    created_at: createdAt,
    state: 'applied',
    updated_at: createdAt + 20 + Math.floor(g.rnd() * 400),
    answer: null,
    outcome_code: null,
    task_id: null,
    reconcile_failures: 0,
    last_reconcile_failure_at: null,
    resolution: null,
    pruned_at: null
  }
  const answer = settle(g, row, i, who, epoch, last ? c : -1)
  // retention (docs/design.md#request-ids-are-forever): the record stays, what was sent and answered goes
  if (g.pruned && row.updated_at < g.pruneBefore && (row.state === 'applied' || row.state === 'rejected' || row.state === 'not_applied')) {
    row.pruned_at = row.updated_at + RETENTION_DAYS * DAY + (mix(i, 11) % 3_600_000)
    if (row.resolution !== null) {
      const r = { ...(JSON.parse(row.resolution) as Record<string, unknown>), note: null }
      row.resolution = g.store === 'sqlite' ? JSON.stringify(r) : jsonbText(r)
    }
  } else {
    // built only for a record that keeps them: half of a large ledger is pruned
    row.params = JSON.stringify(body)
    row.answer = answer?.() ?? null
  }
  return row
}

/** the record's outcome: its state and times, and how its stored answer reads (built only if kept) */
function settle (g: Gen, row: ScaleRow, i: number, who: number, epoch: number, lastOfCampaign: number): (() => string) | null {
  const { rnd } = g
  const { request_id: requestId, campaign_id: campaignId, created_at: createdAt } = row
  if (lastOfCampaign >= 0 && g.plan.pending.has(lastOfCampaign)) {
    row.state = 'pending'
    row.updated_at = createdAt
    return null
  }
  if (lastOfCampaign >= 0 && g.plan.ambiguous.has(lastOfCampaign)) {
    row.state = 'ambiguous'
    row.outcome_code = 'ambiguous_write'
    row.updated_at = createdAt + 12_000
    if (rnd() < 0.1) { row.reconcile_failures = 1; row.last_reconcile_failure_at = createdAt + 600_000 }
    return () => JSON.stringify(ambiguousAnswer(campaignId, requestId))
  }
  const v = rnd()
  if (v < 0.06) {
    const code = REJECTIONS[Math.floor(rnd() * REJECTIONS.length)]!
    row.state = 'rejected'
    row.outcome_code = code
    return () => REJECTED.get(code)!.replace(JSON.stringify(ID_MARK), JSON.stringify(requestId))
  }
  if (v < 0.12) return resolved(g, row, i)
  if (row.operation === 'submit') {
    row.task_id = `task-${hex8(mix(i, 7))}`
    const taskId = row.task_id
    return () => JSON.stringify({ httpStatus: 202, body: { requestId, taskId, state: 'submitted' } })
  }
  const lease = { controllerId: controllerName(who), epoch, expiresAt: Math.floor((createdAt + 300_000) / 1000) }
  const out = row.operation === 'intervene' ? { accepted: true } : row.operation === 'release' ? { released: true } : { lease }
  return () => JSON.stringify({ httpStatus: 200, body: { requestId, campaignId, ...out } })
}

/** an ambiguous record resolved later, by reconcile or an admin's acknowledgement */
function resolved (g: Gen, row: ScaleRow, i: number): () => string {
  const { rnd } = g
  const to = rnd() < 0.67 ? 'applied' : 'not_applied'
  const at = row.created_at + 60_000 + Math.floor(rnd() * 3_600_000)
  const ack = rnd() < 0.2
  const res: Resolution = { kind: ack ? 'acknowledge' : 'reconcile', by: ack ? 'admin-ops' : row.caller, at, note: ack ? 'checked with the trainer' : null, resolution: ack ? (to === 'applied' ? 'assume_applied' : 'assume_not_applied') : null }
  row.state = to
  row.outcome_code = 'ambiguous_write'
  row.updated_at = at
  row.task_id = to === 'applied' && row.operation === 'submit' ? `task-${hex8(mix(i, 7))}` : null
  if (ack) { row.reconcile_failures = 1; row.last_reconcile_failure_at = at - 30_000 }
  row.resolution = JSON.stringify(res)
  return () => JSON.stringify({ httpStatus: 200, body: requestView(toRecord(row), null) })
}
