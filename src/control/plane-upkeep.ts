// The control plane's upkeep (docs/design.md#campaign-control): at start, what nobody can still be
// waiting for turns ambiguous; then a periodic sweep turns overdue `pending` records ambiguous, and
// retention prunes resolved records past their window (docs/design.md#request-ids-are-forever).
// Deadlines are judged on the ledger's clock, and never before this process's own monotonic clock
// says every owner's wait has passed (docs/design.md#one-clock).
import type { PlaneState } from './plane-state.js'

/**
 * Retention's pace (docs/design.md#request-ids-are-forever): a batch holds the store — on SQLite
 * the event loop itself, so every read waits for it — hence small batches, and after each one a
 * pause of at least PRUNE_SHARE times the batch's own time (real time, whatever the plane's
 * clocks say), never less than PRUNE_PAUSE_MS: retention holds the store at most a fifth of the
 * time, however slow the store is (a large ledger, a loaded host, a WAL checkpoint). With 500 a
 * batch and a fixed 20 ms, a read's p99 went from 2.6× idle while a million records were pruned
 * (issue 47's scale bench) to 1.4× at this pace. A run still prunes up to PRUNE_PER_RUN records.
 */
export const PRUNE_BATCH = 100
const PRUNE_BATCHES_PER_RUN = 1000
export const PRUNE_PER_RUN = PRUNE_BATCH * PRUNE_BATCHES_PER_RUN
const PRUNE_PAUSE_MS = 20
export const PRUNE_SHARE = 4

function logExpired (s: PlaneState, ids: string[], why: string): void {
  for (const requestId of ids) s.o.logger.warn({ event: 'mutation', requestId, outcome: 'ambiguous', why }, 'pending mutation turned ambiguous')
}

/** one pruning pass, batch after batch with a pause between them, bounded per run: answers how many */
async function inBatches (batch: () => Promise<number>): Promise<number> {
  let total = 0
  for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
    const t = performance.now()
    const n = await batch()
    total += n
    if (n < PRUNE_BATCH) break
    const pause = Math.max(PRUNE_PAUSE_MS, PRUNE_SHARE * (performance.now() - t))
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
  return total
}

/**
 * Small batches with a pause between them, so retention never holds the store for long on
 * the request path; bounded per run, the rest waits for the next one. A pruned record keeps
 * its id, hash and final state for ever (docs/design.md#request-ids-are-forever).
 */
export async function prune (s: PlaneState): Promise<number> {
  const { o } = s
  if (o.retentionMs === undefined) return 0
  const before = s.now() - o.retentionMs
  const pruned = await inBatches(async () => await o.ledger.pruneResolvedBefore(before, PRUNE_BATCH, s.now()))
  if (pruned > 0) o.logger.info({ event: 'ledger_retention', pruned, olderThan: new Date(before).toISOString() }, 'resolved records past the retention window pruned: params, answers and notes removed, ids kept')
  // the front door's reads go whole (a repeat is a fresh read); its submissions stay with their ids (docs/api.md#a2a-front-door)
  const reads = await inBatches(async () => await o.ledger.pruneFrontReadsBefore(before, PRUNE_BATCH))
  if (reads > 0) o.logger.info({ event: 'ledger_retention', frontReads: reads, olderThan: new Date(before).toISOString() }, 'front-door reads past the retention window deleted')
  return pruned
}

export async function sweep (s: PlaneState): Promise<string[]> {
  // the sends whose wait is over on the monotonic clock are forgotten
  const t = s.mono()
  for (const [id, until] of s.sentUntil) if (until <= t) s.sentUntil.delete(id)
  // until every owner's wait has passed since the start, on this process's own monotonic clock,
  // no deadline is judged here: the wall clock (SQLite's ledger clock) may have jumped
  if (s.startedAt + s.longestWaitMs > t) return []
  const ids = await s.o.ledger.expirePending(s.now())
  logExpired(s, ids, 'its deadline passed with no outcome written')
  return ids
}

/** retention a minute after start, then every interval, each run scheduled when the last one ended */
function scheduleRetention (s: PlaneState): void {
  const { o } = s
  if (o.retentionMs === undefined || s.pruneTimer !== undefined) return
  const run = (): void => {
    prune(s).catch((err: unknown) => { o.logger.error({ err }, 'ledger retention failed') }).finally(() => {
      if (s.pruneTimer === undefined) return
      s.pruneTimer = setTimeout(run, o.retentionIntervalMs ?? 600_000)
      s.pruneTimer.unref()
    })
  }
  s.pruneTimer = setTimeout(run, Math.min(60_000, o.retentionIntervalMs ?? 600_000))
  s.pruneTimer.unref()
}

export async function start (s: PlaneState): Promise<void> {
  const { o } = s
  s.startedAt = s.mono()
  await s.clocks.start()
  // local lease state is unknown after a restart: the next decision asks read_control
  await o.ledger.forgetAllLeases(s.now())
  // the only writer of its store: nobody else can still be waiting on its pending records
  if (o.ledger.singleWriter) logExpired(s, await o.ledger.expireAllPending(s.now()), 'the gateway restarted before its outcome was written')
  else await sweep(s)
  s.sweepTimer ??= setInterval(() => {
    sweep(s).catch((err: unknown) => { o.logger.error({ err }, 'sweeping pending mutations failed') })
  }, o.sweepIntervalMs ?? 10_000)
  s.sweepTimer.unref()
  scheduleRetention(s)
}

export function stop (s: PlaneState): void {
  s.clocks.stop()
  if (s.sweepTimer !== undefined) clearInterval(s.sweepTimer)
  s.sweepTimer = undefined
  if (s.pruneTimer !== undefined) clearTimeout(s.pruneTimer)
  s.pruneTimer = undefined
}
