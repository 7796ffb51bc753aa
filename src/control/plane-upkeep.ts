// The control plane's upkeep (docs/design.md#campaign-control): at start, what nobody can still be
// waiting for turns ambiguous; then a periodic sweep turns overdue `pending` records ambiguous, and
// retention prunes resolved records past their window (docs/design.md#request-ids-are-forever).
// Deadlines are judged on the ledger's clock, and never before this process's own monotonic clock
// says every owner's wait has passed (docs/design.md#one-clock).
import type { PlaneState } from './plane-state.js'

const PRUNE_BATCH = 500
const PRUNE_BATCHES_PER_RUN = 200
const PRUNE_PAUSE_MS = 20

function logExpired (s: PlaneState, ids: string[], why: string): void {
  for (const requestId of ids) s.o.logger.warn({ event: 'mutation', requestId, outcome: 'ambiguous', why }, 'pending mutation turned ambiguous')
}

/** one pruning pass, batch after batch with a pause between them, bounded per run: answers how many */
async function inBatches (batch: () => Promise<number>): Promise<number> {
  let total = 0
  for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
    const n = await batch()
    total += n
    if (n < PRUNE_BATCH) break
    await new Promise((resolve) => setTimeout(resolve, PRUNE_PAUSE_MS))
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
