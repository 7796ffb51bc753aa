// Ledger retention (docs/design.md#operating-the-ledger, docs/design.md#request-ids-are-forever):
// resolved records past GATEWAY_LEDGER_RETENTION_DAYS lose their params, answers and notes in
// small batches off the request path, on both ledgers; the records stay. Over sockets, against the
// simulator: a pruned id replays its final state (`Idempotent-Replayed: true`, `pruned: true`),
// other params under it are 422 and another caller's use 409, and it never reaches the remote
// again — an applied one, an acknowledged one, a refused one with a live lease at a newer epoch —
// while a pruned id that was never sent runs as new, once. Then the ledger's size before and after
// pruning, printed per 100,000 records: RETENTION_RECORDS sets how many are written (default
// 3,000; the design's figures use 100,000). PostgreSQL runs only with TEST_POSTGRES_URL (skipped,
// saying so, without it).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteDatabaseOf } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { startSimulator } from '../../src/simulator/index.js'
import { CONTROL_ENV, CONTROL_SIM, controlPairOf, expectEachRequestOnce, rid } from '../helpers/control.js'
import { startForwarder } from '../helpers/forwarder.js'
import { startGateway } from '../helpers/gateway.js'
import { freshSchema } from '../helpers/postgres.js'
import { appliedOutcome, insert, pendingRecord } from '../ledger/records.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'

const N = Number(process.env.RETENTION_RECORDS ?? 3000)
const DAY = 86_400_000
const MIB = 1_048_576
const dir = mkdtempSync(join(tmpdir(), 'oogw-retention-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })
const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP ledger retention on PostgreSQL: TEST_POSTGRES_URL is not set')

type Kind = 'sqlite' | 'postgres'

/** a fresh ledger URL of the kind: a file of its own, or a schema of its own */
async function ledgerOf (kind: Kind): Promise<{ url: string; file: string; drop?: () => Promise<void> }> {
  const file = join(dir, `${kind}-${randomBytes(6).toString('hex')}.db`)
  if (kind === 'sqlite') return { url: `sqlite:${file}`, file }
  const { url, drop } = await freshSchema(PG!)
  return { url, file, drop }
}

/** the gateway's, the ledger's and the remote's clock alike: retention is a matter of weeks */
function movableClock (): { now: () => number; advance: (ms: number) => void } {
  let offset = 0
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms } }
}

/** n resolved records, last changed at `at`, a few hundred campaigns at a time (one pending record each at most) */
async function fill (ledger: Ledger, n: number, at: number): Promise<void> {
  const db = sqliteDatabaseOf(ledger)
  const put = async (i: number): Promise<void> => {
    const r = pendingRecord({ campaignId: `camp-fill-${i % 500}`, createdAt: at })
    expect(await insert(ledger, r)).toBe('inserted')
    await ledger.recordOutcome(r.requestId, appliedOutcome(at))
  }
  for (let i = 0; i < n; i += 500) {
    const batch = Math.min(500, n - i)
    if (db !== undefined) {
      db.exec('BEGIN') // one commit per batch: the size, not the fsync rate, is measured here
      for (let k = 0; k < batch; k++) await put(i + k)
      db.exec('COMMIT')
    } else {
      await Promise.all(Array.from({ length: batch }, async (_, k) => { await put(i + k) }))
    }
  }
}

/**
 * the ledger's size: SQLite's pages in use (page_count - freelist_count, times the page size) and
 * the file; PostgreSQL's records table with its indexes and TOAST after a VACUUM (what autovacuum
 * does on its own schedule: dead rows' space becomes reusable)
 */
async function sizeOf (ledger: Ledger, url: string, file: string): Promise<{ bytes: number; file?: number }> {
  const db = sqliteDatabaseOf(ledger)
  if (db !== undefined) {
    db.pragma('wal_checkpoint(TRUNCATE)')
    const pages = db.pragma('page_count', { simple: true }) as number
    const free = db.pragma('freelist_count', { simple: true }) as number
    return { bytes: (pages - free) * (db.pragma('page_size', { simple: true }) as number), file: statSync(file).size }
  }
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query('VACUUM mutation_records')
    return { bytes: Number((await c.query("SELECT pg_total_relation_size('mutation_records') AS n")).rows[0].n) }
  } finally {
    await c.end()
  }
}

const per100k = (bytes: number): string => `${(bytes / MIB * 100_000 / N).toFixed(1)} MiB`

for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(kind === 'postgres' && PG === undefined)(`retention on ${kind}`, () => {
    it('a pruned id replays its final state, refuses other params and another caller, and is never sent again; a pruned unsent one runs once', async () => {
      const { url, drop } = await ledgerOf(kind)
      const clock = movableClock()
      const sim = await startSimulator({ ...CONTROL_SIM, campaignControl: { now: clock.now } })
      // the remote behind a forwarder that can refuse connections: a request that never left
      const fwd = await startForwarder(sim.url)
      try {
        const gw = await startGateway({
          upstreamUrl: fwd.url,
          clock: clock.now,
          ledgerClock: clock.now,
          env: { ...CONTROL_ENV, SPYNEL_AGENT_ZERO_API_KEY: sim.secret, GATEWAY_LEDGER_URL: url, GATEWAY_LEDGER_RETENTION_DAYS: '30' }
        })
        const p = controlPairOf(sim, gw)
        const t = gw.tokens.controller
        const C = 'camp-r'
        const path = { claim: 'control/claim', intervene: 'interventions', submit: 'submissions' } as const
        type Sent = { op: keyof typeof path; body: Record<string, unknown> & { requestId: string } }
        const send = async (s: Sent, token = t, body: Record<string, unknown> = s.body) => await p.post(token, `/v1/campaigns/${C}/${path[s.op]}`, body)
        const claim: Sent = { op: 'claim', body: { requestId: rid('claim'), ttlSeconds: 600 } }
        const applied: Sent = { op: 'intervene', body: { requestId: rid('iv'), intervention: { step: 1 } } }
        const submission: Sent = { op: 'submit', body: { requestId: rid('sub'), parts: [{ kind: 'text', text: 'train' }] } }
        const unsent: Sent = { op: 'intervene', body: { requestId: rid('unsent'), intervention: { step: 2 } } }
        const refused: Sent = { op: 'intervene', body: { requestId: rid('refused'), intervention: { step: 3 } } }
        const reclaim: Sent = { op: 'claim', body: { requestId: rid('claim'), ttlSeconds: 600 } }
        const acknowledged: Sent = { op: 'intervene', body: { requestId: rid('ack'), intervention: { step: 4 } } }
        const reconciled: Sent = { op: 'intervene', body: { requestId: rid('rec'), intervention: { step: 5 } } }

        expect((await send(claim)).status).toBe(200)
        expect((await send(applied)).status).toBe(200)
        const sub = await send(submission)
        expect(sub.status).toBe(202)
        // nothing leaves while the remote refuses connections: a record that is no use of its id
        await fwd.shut()
        const down = await send(unsent)
        expect(down.status).toBe(503)
        expect(down.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true })
        await fwd.reopen()
        // another controller takes over; the gateway still holds the lease it knew, sends, and the remote refuses
        p.sim.control.setLease(C, { controller_id: 'ctl-other', epoch: 5, expires_at: Math.floor(clock.now() / 1000) + 600 })
        const refusal = await send(refused)
        expect(refusal.status, JSON.stringify(refusal.body)).toBe(409)
        p.sim.control.setLease(C, null)
        expect((await send(reclaim)).status).toBe(200)
        // applied at the remote, its answer lost; reconcile fails; an admin acknowledges it
        p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
        expect((await send(acknowledged)).status).toBe(504)
        p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
        expect((await p.post(t, `/v1/campaigns/${C}/requests/${acknowledged.body.requestId}/reconcile`)).status).toBe(503)
        const ack = await p.post(gw.tokens.admin, `/v1/campaigns/${C}/requests/${acknowledged.body.requestId}/acknowledge`, { resolution: 'assume_applied', note: 'seen applied in the remote\'s console' })
        expect(ack.status, JSON.stringify(ack.body)).toBe(200)
        // applied at the remote, its answer lost; reconcile finds it applied
        p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
        expect((await send(reconciled)).status).toBe(504)
        expect((await p.post(t, `/v1/campaigns/${C}/requests/${reconciled.body.requestId}/reconcile`)).body).toMatchObject({ state: 'applied' })

        const all = [claim, applied, submission, unsent, refused, reclaim, acknowledged, reconciled]
        // inside the window nothing goes; forty days on, past it, every one of them is pruned
        expect(await gw.app.control.prune()).toBe(0)
        clock.advance(40 * DAY)
        expect(await gw.app.control.prune()).toBe(all.length)
        for (const s of all) {
          expect(await gw.app.ledger.get(s.body.requestId), s.body.requestId).toMatchObject({ params: null, answer: null, prunedAt: expect.any(Number) })
        }
        expect((await gw.app.ledger.get(acknowledged.body.requestId))?.resolution).toMatchObject({ kind: 'acknowledge', note: null })

        // the caller holds the campaign again, at a newer epoch: every pruned id would pass the lease checks now
        expect((await send({ op: 'claim', body: { requestId: rid('claim'), ttlSeconds: 600 } })).status).toBe(200)
        const calls = p.sim.rpcCalls().length

        // (a) each replays its final state, nothing sent
        const replay = async (s: Sent, status: number): Promise<Record<string, unknown>> => {
          const r = await send(s)
          expect(r.status, `${s.body.requestId}: ${r.text}`).toBe(status)
          expect(r.headers['idempotent-replayed'], s.body.requestId).toBe('true')
          return r.body as Record<string, unknown>
        }
        for (const s of [claim, reclaim, applied]) {
          expect(await replay(s, 200)).toMatchObject({ requestId: s.body.requestId, campaignId: C, operation: s.op, state: 'applied', pruned: true })
        }
        expect(await replay(submission, 202)).toMatchObject({ requestId: submission.body.requestId, taskId: sub.body.taskId, pruned: true })
        expect(await replay(refused, 409)).toEqual(refusal.body)
        expect(await replay(acknowledged, 200)).toMatchObject({
          requestId: acknowledged.body.requestId, state: 'applied', resolution: { kind: 'acknowledge', by: 'admin', note: null, resolution: 'assume_applied' }, pruned: true
        })
        expect(await replay(reconciled, 200)).toMatchObject({ requestId: reconciled.body.requestId, state: 'applied', resolution: { kind: 'reconcile', by: 'controller', note: null }, pruned: true })

        // (b) the same id with other params is a mismatch; (c) another caller's use of it a conflict
        const others: Array<[Sent, Record<string, unknown>]> = [
          [claim, { ...claim.body, ttlSeconds: 900 }],
          [applied, { ...applied.body, intervention: { step: 99 } }],
          [submission, { ...submission.body, parts: [{ kind: 'text', text: 'other' }] }],
          [refused, { ...refused.body, intervention: { step: 99 } }],
          [acknowledged, { ...acknowledged.body, intervention: { step: 99 } }],
          [unsent, { ...unsent.body, intervention: { step: 99 } }]
        ]
        for (const [s, body] of others) {
          const mismatch = await send(s, t, body)
          expect(mismatch.status, s.body.requestId).toBe(422)
          expect(mismatch.body.error.code).toBe('idempotency_key_mismatch')
          const conflict = await send(s, gw.tokens.all)
          expect(conflict.status, s.body.requestId).toBe(409)
          expect(conflict.body.error.code).toBe('idempotency_key_conflict')
          expect(conflict.text).not.toContain('step')
        }

        // (d) nothing of it reached the remote, not even a read: a pruned id is never sent again
        expect(p.sim.rpcCalls().length).toBe(calls)
        const counts = p.sim.control.requestCounts()
        for (const s of all.filter((x) => x !== unsent)) expect(counts.get(s.body.requestId), s.body.requestId).toBe(1)
        expect(p.sim.control.interventions(C).map((i) => i.requestId)).not.toContain(refused.body.requestId)

        // the unsent one never left: it runs as new, once, with its params back
        const retried = await send(unsent)
        expect(retried.status, retried.text).toBe(200)
        expect(retried.headers['idempotent-replayed']).toBeUndefined()
        expect(p.sim.control.requestCounts().get(unsent.body.requestId)).toBe(1)
        expect((await p.get(t, `/v1/campaigns/${C}/requests/${unsent.body.requestId}`)).body).toMatchObject({ state: 'applied', params: { intervention: { step: 2 } } })
        expect((await send(unsent)).headers['idempotent-replayed']).toBe('true')
        await gw.close()
      } finally {
        await fwd.close()
        await sim.close()
        await drop?.()
      }
      expectEachRequestOnce(sim)
    })

    it(`${N} old records pruned to what stays of them: every record kept, the size before and after`, async () => {
      const { url, file, drop } = await ledgerOf(kind)
      const clock = movableClock()
      const gw = await startGateway({ clock: clock.now, ledgerClock: clock.now, env: { GATEWAY_LEDGER_URL: url, GATEWAY_LEDGER_RETENTION_DAYS: '30' } })
      try {
        const ledger = gw.app.ledger
        const old = Date.now() - 10 * DAY
        // what stays whole, however old: an ambiguous record and a pending one
        const ambiguous = pendingRecord({ campaignId: 'camp-ambiguous', createdAt: old })
        expect(await insert(ledger, ambiguous)).toBe('inserted')
        await ledger.recordOutcome(ambiguous.requestId, { state: 'ambiguous', answer: ambiguousAnswer(ambiguous.campaignId, ambiguous.requestId), outcomeCode: 'ambiguous_write', taskId: null, at: old })
        const pending = pendingRecord({ campaignId: 'camp-pending', createdAt: old, waitMs: 100 * DAY })
        expect(await insert(ledger, pending)).toBe('inserted')
        // a bound task's record is pruned like any other, and the task still resolves to it
        const bound = pendingRecord({ campaignId: 'camp-bound', operation: 'submit', createdAt: old })
        expect(await insert(ledger, bound)).toBe('inserted')
        await ledger.recordOutcome(bound.requestId, appliedOutcome(old, 'task-kept'))
        await ledger.setBoundTask({ campaignId: bound.campaignId, taskId: 'task-kept', requestId: bound.requestId, boundAt: old })

        const t0 = Date.now()
        await fill(ledger, N, old)
        const fillMs = Date.now() - t0
        const full = await sizeOf(ledger, url, file)
        expect(await ledger.countRecords()).toBe(N + 3)
        // inside the window: nothing goes
        expect(await gw.app.control.prune()).toBe(0)
        // 40 days on, past the 30-day window
        clock.advance(40 * DAY)
        const p0 = Date.now()
        let pruned = 0
        for (let n = -1; n !== 0;) { n = await gw.app.control.prune(); pruned += n }
        const pruneMs = Date.now() - p0
        expect(pruned).toBe(N + 1)
        // every record stays
        expect(await ledger.countRecords()).toBe(N + 3)
        for (const r of [ambiguous, pending]) expect(await ledger.get(r.requestId)).toMatchObject({ prunedAt: null, params: r.params })
        expect(await ledger.get(bound.requestId)).toMatchObject({ state: 'applied', taskId: 'task-kept', params: null, answer: null })
        expect(await ledger.getBoundTask(bound.campaignId)).toMatchObject({ taskId: 'task-kept', requestId: bound.requestId })
        const afterPrune = await sizeOf(ledger, url, file)
        let line = `retention ${kind}: ${N} records filled in ${fillMs} ms, pruned in ${pruneMs} ms; per 100,000 records: ${per100k(full.bytes)} before pruning, ${per100k(afterPrune.bytes)} after`
        if (kind === 'sqlite') {
          // what an operator's VACUUM, with the gateway stopped, gives back
          sqliteDatabaseOf(ledger)!.exec('VACUUM')
          const vacuumed = await sizeOf(ledger, url, file)
          line += ` (pages in use; the file ${per100k(full.file!)} before, ${per100k(afterPrune.file!)} after, ${per100k(vacuumed.file!)} after VACUUM)`
          // pruning shrinks rows in place: the pages in use never grow
          expect(afterPrune.bytes).toBeLessThanOrEqual(full.bytes)
          expect(vacuumed.file!).toBeLessThan(full.file!)
        } else {
          // what an operator's VACUUM FULL (it locks the table) gives back: the rows as they now are
          const c = new pg.Client({ connectionString: url })
          await c.connect()
          await c.query('VACUUM FULL mutation_records')
          const compact = Number((await c.query("SELECT pg_total_relation_size('mutation_records') AS n")).rows[0].n)
          await c.end()
          line += ` (table, indexes and TOAST after VACUUM: an update leaves the old row versions' space free for reuse, not returned; ${per100k(compact)} after VACUUM FULL)`
          expect(compact).toBeLessThan(full.bytes)
        }
        console.log(line)
      } finally {
        await gw.close()
        await drop?.()
      }
      // PostgreSQL writes about 250 records a second here (a ticket, a serialised insert, an outcome each)
    }, Math.max(600_000, N * 10))
  })
}
