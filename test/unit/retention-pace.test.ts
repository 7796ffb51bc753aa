// Retention's pace (docs/design.md#request-ids-are-forever; src/control/plane-upkeep.ts): each
// pruning batch holds the store — on SQLite the event loop itself — so after each one retention
// pauses at least PRUNE_SHARE times as long as the batch took, holding the store at most a fifth
// of the time however slow it is. On a real SQLite ledger made slow — each batch held 30 ms
// before the store runs it, as a large ledger or a loaded host makes it — every pause is measured
// against the batch before it; and the run still prunes every record past the window, in batches
// of PRUNE_BATCH. (A fixed 20 ms pause after 500-record batches let a read's p99 reach 2.6× idle
// while a million records were pruned: issue 47's scale bench.)
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'
import { openPlane } from '../../src/control/plane-state.js'
import { PRUNE_BATCH, PRUNE_SHARE, prune } from '../../src/control/plane-upkeep.js'
import { createDiscovery } from '../../src/discovery/discovery.js'
import { createLedger } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { createFakeUpstream } from '../helpers/fake-upstream.js'
import { appliedOutcome, insert, pendingRecord } from '../ledger/records.js'

const DAY = 86_400_000
const HELD_MS = 30
const logger = pino({ level: 'silent' })
const ledgers: Ledger[] = []
afterEach(async () => { for (const l of ledgers.splice(0)) await l.close() })

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('retention\'s pace', () => {
  it('pauses after each batch at least PRUNE_SHARE times as long as the batch held the store, and still prunes every record past the window', async () => {
    const now = Date.now()
    const ledger = await createLedger('sqlite::memory:', { ambiguousAnswer, now: () => now })
    ledgers.push(ledger)
    const records = Math.round(3.5 * PRUNE_BATCH)
    for (let i = 0; i < records; i++) {
      const r = pendingRecord({ campaignId: `camp-${i}`, createdAt: now - 40 * DAY })
      expect(await insert(ledger, r)).toBe('inserted')
      await ledger.recordOutcome(r.requestId, appliedOutcome(now - 40 * DAY))
    }
    // a slow store: every batch holds it HELD_MS before it runs
    const batches: Array<{ start: number; end: number; limit: number }> = []
    const pruneBatch = ledger.pruneResolvedBefore
    ledger.pruneResolvedBefore = async (before, limit, at) => {
      const start = performance.now()
      await sleep(HELD_MS)
      const n = await pruneBatch(before, limit, at)
      batches.push({ start, end: performance.now(), limit })
      return n
    }
    const fake = createFakeUpstream()
    const discovery = createDiscovery({ client: fake, origin: 'https://remote.test', basePath: '/a2a', cardMaxBytes: 1 << 20, controlEnabled: true, intervalMs: 60_000, logger })
    const s = openPlane({ ledger, client: fake, discovery, leaseSafetyMs: 2_000, connectTimeoutMs: 5_000, mutationTimeoutMs: 10_000, readTimeoutMs: 1_000, maxTaskResponseBytes: 1 << 20, instanceId: 'gw-1', logger, now: () => now, retentionMs: 30 * DAY })

    expect(await prune(s)).toBe(records)
    expect(batches.map((b) => b.limit)).toEqual(Array(Math.ceil(records / PRUNE_BATCH)).fill(PRUNE_BATCH))
    for (let i = 1; i < batches.length; i++) {
      const held = batches[i - 1]!.end - batches[i - 1]!.start
      const pause = batches[i]!.start - batches[i - 1]!.end
      // a timer fires no earlier than asked, give or take the clock's rounding
      expect(pause, `the pause after batch ${i} (it held the store ${held.toFixed(1)} ms)`).toBeGreaterThanOrEqual(PRUNE_SHARE * held - 2)
    }
  })
})
