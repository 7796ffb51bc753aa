// The ledger contract (docs/design.md#ledger): one suite every Ledger implementation must
// pass, so SQLite and PostgreSQL keep the same rules — ids unique across the whole ledger,
// compare-and-set outcome writes, at most one pending record per campaign and the insert checks
// that serialise a campaign whoever holds which lock (docs/design.md#serialisation), deadlines
// written and judged on the ledger's own clock (docs/design.md#one-clock), retention that keeps
// every record (docs/design.md#request-ids-are-forever), each record's owner identity apart from
// its caller's name (docs/design.md#request-records), controller bindings, front-door sends and
// the task an applied submission's write names for its sender (docs/design.md#front-door), leases
// whose highest epoch never goes down, one bound task per campaign, and the per-campaign lock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { FrontSend, Ledger, MutationRecord, NewMutationRecord, Outcome, Resolution, StoredAnswer } from '../../src/ledger/types.js'
import { appliedOutcome, insert, newId, pendingRecord } from './records.js'

const resolution = (o: Partial<Resolution> = {}): Resolution =>
  ({ kind: 'reconcile', by: 'alice', at: 5_000, note: null, resolution: null, ...o })

const resolvedAnswer: StoredAnswer = { httpStatus: 200, body: { accepted: true, resolved: 'reconcile' } }
const nothingSent: Outcome = { state: 'rejected', answer: { httpStatus: 503, body: { error: { code: 'upstream_unavailable' } } }, outcomeCode: 'upstream_unavailable', taskId: null, at: 2_000 }
const DAY = 86_400_000

export interface LedgerHarness {
  ledger: Ledger
  /** runs SQL on the store behind the ledger's back (literals only, no parameters) */
  exec: (sql: string) => Promise<void>
}

export interface ContractOptions {
  /**
   * how far the ledger's clock may read from the test's: 0 where the ledger reads the test's
   * clock itself (SQLite), about a round trip where the server's clock is shifted onto it
   * (PostgreSQL's clockShiftMs). Boundaries are checked this far on either side.
   */
  clockSlackMs: number
}

/** a raw pending row of `campaignId`, as an older gateway or a hand-made fix could write it */
const rawPending = (requestId: string, campaignId: string, state = 'pending'): string => `INSERT INTO mutation_records
  (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
  VALUES ('${requestId}', '${campaignId}', 'mallory', 'intervene', '${'b'.repeat(64)}', '{}', 3, 'elsewhere', 1, 1, '${state}', 1)`

/**
 * `make` opens a fresh ledger whose clock is the one given (the test moves it); the ledger is
 * closed after each test.
 */
export function ledgerContract (name: string, make: (clock: () => number) => Promise<LedgerHarness>, o: ContractOptions): void {
  describe(`ledger contract: ${name}`, () => {
    const slack = o.clockSlackMs
    let ledger: Ledger
    let exec: LedgerHarness['exec']
    /** the test's clock, which the ledger's follows: frozen until a test moves it */
    let time: number
    beforeEach(async () => {
      time = 1_700_000_000_000
      ;({ ledger, exec } = await make(() => time))
    })
    afterEach(async () => { await ledger.close() })

    const put = async (r: NewMutationRecord, opts: { fence?: boolean } = {}): Promise<string> => await insert(ledger, r, opts)
    /** the ledger's clock reads `expected`, give or take the slack */
    const expectNear = (actual: number | undefined, expected: number): void => {
      expect(actual).toBeGreaterThanOrEqual(expected - slack)
      expect(actual).toBeLessThanOrEqual(expected + slack)
    }

    /** a pending record, then turned ambiguous by expiry once its deadline passed on the ledger's clock */
    async function ambiguous (r: Partial<NewMutationRecord> = {}, at = 2): Promise<string> {
      const rec = pendingRecord({ waitMs: 1, ...r })
      expect(await put(rec)).toBe('inserted')
      time += slack + 2
      expect(await ledger.expirePending(at)).toContain(rec.requestId)
      return rec.requestId
    }

    describe('records', () => {
      it('stores a pending record and reads it back whole, JSON included; the deadline is the ledger\'s clock plus waitMs', async () => {
        const r = pendingRecord({ operation: 'claim', controllerEpoch: null, waitMs: 45_000 })
        expect(await put(r)).toBe('inserted')
        const got = await ledger.get(r.requestId)
        const { waitMs, ...rest } = r
        expect(got).toEqual({
          ...rest, deadline: got?.deadline, state: 'pending', updatedAt: r.createdAt, answer: null, outcomeCode: null, taskId: null, reconcileFailures: 0, resolution: null, prunedAt: null
        })
        expectNear(got?.deadline, time + waitMs)
        expect(await ledger.get('no-such-request')).toBeUndefined()
      })

      it('request ids are unique across the whole ledger', async () => {
        const r = pendingRecord()
        expect(await put(r)).toBe('inserted')
        expect(await put({ ...r, params: { other: true } })).toBe('exists')
        expect(await put({ ...r, campaignId: 'camp-2', caller: 'bob' })).toBe('exists')
        expect((await ledger.get(r.requestId))?.params).toEqual(r.params)
        expect(await ledger.listByCampaign('camp-2')).toEqual([])
        // the other campaign did not move: an id already used is no mutation of it
        expect((await ledger.ticket('camp-2')).generation).toBe(0)
      })

      it('a record keeps its owner\'s identity apart from its caller\'s name: one name, two identities, two owners; a record written without one has none', async () => {
        const alice = pendingRecord({ caller: 'jwt:ml-portal', identity: 'jwt:https://idp.test#alice-1' })
        const mallory = pendingRecord({ campaignId: 'camp-2', caller: 'jwt:ml-portal', identity: 'jwt:https://idp.test#mallory-6', createdAt: 1_001 })
        expect(await put(alice)).toBe('inserted')
        expect(await put(mallory)).toBe('inserted')
        expect((await ledger.get(alice.requestId))?.identity).toBe('jwt:https://idp.test#alice-1')
        expect((await ledger.get(mallory.requestId))).toMatchObject({ caller: 'jwt:ml-portal', identity: 'jwt:https://idp.test#mallory-6' })
        // every read of a record carries it, and an outcome leaves it
        expect((await ledger.ticket('camp-1', { requestId: alice.requestId })).record?.identity).toBe(alice.identity)
        expect((await ledger.ticket('camp-2')).blocker?.identity).toBe(mallory.identity)
        expect((await ledger.listUnresolved({ limit: 10 })).map((r) => r.identity)).toEqual([alice.identity, mallory.identity])
        expect(await ledger.recordOutcome(alice.requestId, appliedOutcome())).toBe(true)
        expect((await ledger.listByCampaign('camp-1'))[0]?.identity).toBe(alice.identity)
        expect((await ledger.exportRecords({ limit: 10 })).map((r) => r.identity)).toEqual([alice.identity, mallory.identity])
        // written behind the ledger's back without an owner (an older gateway's row): none, not the name
        await exec(rawPending('req-no-owner', 'camp-3'))
        expect(await ledger.get('req-no-owner')).toMatchObject({ caller: 'mallory', identity: null })
      })

      it('recordOutcome is compare-and-set from pending', async () => {
        const r = pendingRecord()
        await put(r)
        expect(await ledger.recordOutcome(r.requestId, appliedOutcome(2_000, 'task-9'))).toBe(true)
        const rejected: Outcome = { state: 'rejected', answer: { httpStatus: 409, body: {} }, outcomeCode: 'stale_epoch', taskId: null, at: 3_000 }
        expect(await ledger.recordOutcome(r.requestId, rejected)).toBe(false)
        expect(await ledger.recordOutcome('no-such-request', rejected)).toBe(false)
        expect(await ledger.get(r.requestId)).toMatchObject({
          state: 'applied', answer: appliedOutcome().answer, outcomeCode: null, taskId: 'task-9', updatedAt: 2_000
        })
      })

      it('recordOutcome stores a refusal with its code, and cannot follow expiry', async () => {
        const r = pendingRecord()
        await put(r)
        const o: Outcome = { state: 'rejected', answer: { httpStatus: 409, body: { error: { code: 'stale_epoch' } } }, outcomeCode: 'stale_epoch', taskId: null, at: 2_500 }
        expect(await ledger.recordOutcome(r.requestId, o)).toBe(true)
        expect(await ledger.get(r.requestId)).toMatchObject({ state: 'rejected', outcomeCode: 'stale_epoch', answer: o.answer })
        const late = await ambiguous()
        expect(await ledger.recordOutcome(late, appliedOutcome())).toBe(false)
        expect((await ledger.get(late))?.state).toBe('ambiguous')
      })

      it('resolve is compare-and-set from ambiguous, and keeps who resolved it', async () => {
        const pending = pendingRecord()
        await put(pending)
        expect(await ledger.resolve(pending.requestId, 'applied', resolution(), null, resolvedAnswer)).toBe(false)
        await ledger.recordOutcome(pending.requestId, appliedOutcome())
        expect(await ledger.resolve(pending.requestId, 'not_applied', resolution(), null, resolvedAnswer)).toBe(false)
        expect((await ledger.get(pending.requestId))?.answer).toEqual(appliedOutcome().answer)
        expect(await ledger.resolve('no-such-request', 'applied', resolution(), null, resolvedAnswer)).toBe(false)

        const id = await ambiguous({ operation: 'submit' })
        const ack = resolution({ kind: 'acknowledge', by: 'admin', at: 7_000, note: 'checked by hand ✓', resolution: 'assume_applied' })
        const applied: StoredAnswer = { httpStatus: 200, body: { taskId: 'task-42', state: 'applied' } }
        expect(await ledger.resolve(id, 'applied', ack, 'task-42', applied)).toBe(true)
        expect(await ledger.resolve(id, 'not_applied', resolution(), null, resolvedAnswer)).toBe(false)
        expect(await ledger.get(id)).toMatchObject({ state: 'applied', resolution: ack, taskId: 'task-42', answer: applied, updatedAt: 7_000 })

        const other = await ambiguous()
        const notApplied: StoredAnswer = { httpStatus: 409, body: { error: { code: 'not_applied' } } }
        expect(await ledger.resolve(other, 'not_applied', resolution(), null, notApplied)).toBe(true)
        expect(await ledger.get(other)).toMatchObject({ state: 'not_applied', resolution: resolution(), taskId: null, answer: notApplied })
      })

      it('counts reconcile failures', async () => {
        const id = await ambiguous()
        await ledger.noteReconcileFailure(id, 3_000)
        await ledger.noteReconcileFailure(id, 4_000)
        await ledger.noteReconcileFailure('no-such-request', 4_000)
        expect((await ledger.get(id))?.reconcileFailures).toBe(2)
      })

      it('expirePending turns only records past their deadline on the ledger\'s clock ambiguous, with a replayable answer', async () => {
        const early = pendingRecord({ campaignId: 'camp-x', waitMs: 10_000 })
        const due = pendingRecord({ campaignId: 'camp-due', waitMs: 20_000 })
        const late = pendingRecord({ campaignId: 'camp-late', waitMs: 30_000 })
        const done = pendingRecord({ campaignId: 'camp-done', waitMs: 5_000 })
        const t0 = time
        for (const r of [early, due, late, done]) expect(await put(r)).toBe('inserted')
        await ledger.recordOutcome(done.requestId, appliedOutcome())

        // at `due`'s deadline (on SQLite exactly; on PostgreSQL a round trip before it): not yet
        time = t0 + 20_000 - slack
        expect(await ledger.expirePending(200)).toEqual([early.requestId])
        expect(await ledger.expirePending(200)).toEqual([])
        expect(await ledger.get(early.requestId)).toMatchObject({
          state: 'ambiguous',
          outcomeCode: 'ambiguous_write',
          updatedAt: 200,
          answer: {
            httpStatus: 504,
            body: {
              error: {
                code: 'ambiguous_write',
                message: 'The outcome of the mutation is unknown; reconcile it.',
                requestId: early.requestId,
                retryable: false,
                reconcile: `/v1/campaigns/camp-x/requests/${early.requestId}/reconcile`
              }
            }
          }
        })
        expect((await ledger.get(due.requestId))?.state).toBe('pending')
        expect((await ledger.get(done.requestId))?.state).toBe('applied')
        time = t0 + 20_000 + slack + 1
        expect(await ledger.expirePending(300)).toEqual([due.requestId])
        expect((await ledger.get(late.requestId))?.state).toBe('pending')
      })

      it('expireAllPending turns every pending record ambiguous, whatever its deadline', async () => {
        const a = pendingRecord({ waitMs: 1e12 })
        const b = pendingRecord({ campaignId: 'camp-2', waitMs: 1e12 })
        const c = pendingRecord({ campaignId: 'camp-3' })
        for (const r of [a, b, c]) expect(await put(r)).toBe('inserted')
        await ledger.recordOutcome(c.requestId, appliedOutcome())
        expect((await ledger.expireAllPending(5)).sort()).toEqual([a.requestId, b.requestId].sort())
        expect(await ledger.get(b.requestId)).toMatchObject({ state: 'ambiguous', outcomeCode: 'ambiguous_write', updatedAt: 5 })
        expect(await ledger.expireAllPending(6)).toEqual([])
      })

      it('countAmbiguous counts every campaign and drops on resolution', async () => {
        expect(await ledger.countAmbiguous()).toBe(0)
        const a = await ambiguous()
        await ambiguous({ campaignId: 'camp-2' })
        const r = pendingRecord({ campaignId: 'camp-3' })
        expect(await put(r)).toBe('inserted')
        await ledger.recordOutcome(r.requestId, { state: 'ambiguous', answer: { httpStatus: 504, body: {} }, outcomeCode: 'ambiguous_write', taskId: null, at: 2 })
        expect(await ledger.countAmbiguous()).toBe(3)
        await ledger.resolve(a, 'not_applied', resolution(), null, resolvedAnswer)
        expect(await ledger.countAmbiguous()).toBe(2)
      })

      it('firstUnresolved (and the ticket\'s blocker) is the oldest pending or ambiguous record of the campaign, by creation time', async () => {
        expect(await ledger.firstUnresolved('camp-1')).toBeUndefined()
        const finished = ['applied', 'rejected', 'not_applied'] as const
        for (const [i, state] of finished.entries()) {
          const r = pendingRecord({ createdAt: 10 + i })
          expect(await put(r)).toBe('inserted')
          if (state === 'not_applied') {
            await ledger.expireAllPending(20)
            await ledger.resolve(r.requestId, 'not_applied', resolution(), null, resolvedAnswer)
          } else {
            await ledger.recordOutcome(r.requestId, { ...appliedOutcome(), state })
          }
        }
        expect(await put(pendingRecord({ campaignId: 'camp-2', createdAt: 1 }))).toBe('inserted')
        expect(await ledger.firstUnresolved('camp-1')).toBeUndefined()
        expect((await ledger.ticket('camp-1')).blocker).toBeUndefined()

        // inserted first but created later (another replica's clock): order is by creation time
        const newer = await ambiguous({ createdAt: 500 })
        const older = pendingRecord({ createdAt: 400 })
        expect(await put(older, { fence: true })).toBe('inserted')
        expect((await ledger.firstUnresolved('camp-1'))?.requestId).toBe(older.requestId)
        expect((await ledger.ticket('camp-1')).blocker).toEqual(await ledger.get(older.requestId))
        await ledger.recordOutcome(older.requestId, appliedOutcome())
        expect((await ledger.firstUnresolved('camp-1'))?.requestId).toBe(newer)
        expect((await ledger.ticket('camp-1')).blocker).toEqual(await ledger.get(newer))
        await ledger.resolve(newer, 'applied', resolution(), null, resolvedAnswer)
        expect(await ledger.firstUnresolved('camp-1')).toBeUndefined()
      })

      it('listUnresolved: pending and ambiguous records of every campaign, oldest first, by state', async () => {
        expect(await ledger.listUnresolved({ limit: 10 })).toEqual([])
        const a = await ambiguous({ campaignId: 'camp-a', createdAt: 300 })
        const p = pendingRecord({ campaignId: 'camp-b', createdAt: 100, waitMs: 1e12 })
        expect(await put(p)).toBe('inserted')
        const b = await ambiguous({ campaignId: 'camp-c', createdAt: 200 })
        const done = pendingRecord({ createdAt: 50 })
        expect(await put(done)).toBe('inserted')
        await ledger.recordOutcome(done.requestId, appliedOutcome())
        const settled = await ambiguous({ createdAt: 60 })
        await ledger.resolve(settled, 'not_applied', resolution(), null, resolvedAnswer)

        const all = await ledger.listUnresolved({ limit: 10 })
        expect(all.map((r) => r.requestId)).toEqual([p.requestId, b, a])
        // the whole record, as get reads it
        expect(all[2]).toEqual(await ledger.get(a))
        expect(all.map((r) => r.campaignId)).toEqual(['camp-b', 'camp-c', 'camp-a'])
        expect((await ledger.listUnresolved({ state: 'ambiguous', limit: 10 })).map((r) => r.requestId)).toEqual([b, a])
        expect((await ledger.listUnresolved({ state: 'pending', limit: 10 })).map((r) => r.requestId)).toEqual([p.requestId])
        expect((await ledger.listUnresolved({ limit: 2 })).map((r) => r.requestId)).toEqual([p.requestId, b])
        await ledger.resolve(b, 'applied', resolution(), null, resolvedAnswer)
        expect((await ledger.listUnresolved({ limit: 10 })).map((r) => r.requestId)).toEqual([p.requestId, a])
      })

      it('listUnresolved pages by position: each record once, ties on the time broken by request id, stable under inserts', async () => {
        const made: string[] = []
        for (let i = 0; i < 7; i++) made.push(await ambiguous({ campaignId: `camp-${i}`, createdAt: 1_000 + Math.floor(i / 3) }))
        const seen: string[] = []
        let after: { createdAt: number; requestId: string } | undefined
        for (let page = 0; ; page++) {
          const rows = await ledger.listUnresolved({ after, limit: 3 })
          if (rows.length === 0) break
          seen.push(...rows.map((r) => r.requestId))
          const last = rows.at(-1)!
          after = { createdAt: last.createdAt, requestId: last.requestId }
          // records written while the listing runs sort after what was read: nothing shifts
          if (page === 0) made.push(await ambiguous({ campaignId: 'camp-late', createdAt: 5_000 }))
        }
        expect(seen).toEqual([...new Set(seen)])
        expect(new Set(seen)).toEqual(new Set(made))
        const keys = await Promise.all(seen.map(async (id) => { const r = (await ledger.get(id))!; return [r.createdAt, r.requestId] as const }))
        expect(keys).toEqual([...keys].sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1)))
        // a resolved record drops out without moving the others
        const first = await ledger.listUnresolved({ limit: 2 })
        await ledger.resolve(first[0]!.requestId, 'applied', resolution(), null, resolvedAnswer)
        const next = await ledger.listUnresolved({ after: { createdAt: first[1]!.createdAt, requestId: first[1]!.requestId }, limit: 1 })
        expect(next[0]!.requestId).toBe(seen[2])
      })

      it('listByCampaign is newest first, filters by state and honours a limit', async () => {
        const rs = [3, 1, 2].map(t => pendingRecord({ createdAt: t * 100 }))
        // one pending record per campaign: each finishes before the next, the last stays pending
        const ends: Array<Outcome | undefined> = [{ ...appliedOutcome(), state: 'rejected', outcomeCode: 'stale_epoch' }, appliedOutcome(), undefined]
        for (const [i, r] of rs.entries()) {
          expect(await put(r)).toBe('inserted')
          if (ends[i] !== undefined) await ledger.recordOutcome(r.requestId, ends[i])
        }
        expect(await put(pendingRecord({ campaignId: 'camp-2' }))).toBe('inserted')

        const all = await ledger.listByCampaign('camp-1')
        expect(all.map(r => r.createdAt)).toEqual([300, 200, 100])
        expect(all.every(r => r.campaignId === 'camp-1')).toBe(true)
        expect((await ledger.listByCampaign('camp-1', { state: 'pending' })).map(r => r.createdAt)).toEqual([200])
        expect((await ledger.listByCampaign('camp-1', { state: 'applied' })).map(r => r.requestId)).toEqual([rs[1]!.requestId])
        expect((await ledger.listByCampaign('camp-1', { state: 'rejected' })).map(r => r.requestId)).toEqual([rs[0]!.requestId])
        expect((await ledger.listByCampaign('camp-1', { limit: 2 })).map(r => r.createdAt)).toEqual([300, 200])
        expect(await ledger.listByCampaign('camp-1', { state: 'ambiguous' })).toEqual([])
        expect(await ledger.listByCampaign('camp-none')).toEqual([])
      })
    })

    describe('one clock (docs/design.md#one-clock)', () => {
      it('now() reads the ledger\'s clock', async () => {
        expectNear(await ledger.now(), time)
        time += 3_600_000
        expectNear(await ledger.now(), time)
      })

      it('a deadline is the ledger\'s clock at the insert plus waitMs, whatever times the record carries', async () => {
        // written by a replica whose own clock is a day behind
        const r = pendingRecord({ waitMs: 45_000, createdAt: time - DAY })
        expect(await put(r)).toBe('inserted')
        expectNear((await ledger.get(r.requestId))?.deadline, time + 45_000)
      })

      it('expiry is judged on the ledger\'s clock: `at` is only the time written, and one far ahead expires nothing', async () => {
        const r = pendingRecord({ waitMs: 45_000 })
        expect(await put(r)).toBe('inserted')
        // a replica whose clock runs a year ahead sweeps: the record's owner may still be waiting
        expect(await ledger.expirePending(time + 365 * DAY)).toEqual([])
        expect(await ledger.get(r.requestId)).toMatchObject({ state: 'pending', updatedAt: r.createdAt })
        time += 45_000 - slack
        expect(await ledger.expirePending(time + 365 * DAY)).toEqual([])
        // past the deadline on the ledger's clock, a replica whose clock is far behind expires it
        time += 2 * slack + 1
        expect(await ledger.expirePending(7)).toEqual([r.requestId])
        expect(await ledger.get(r.requestId)).toMatchObject({ state: 'ambiguous', updatedAt: 7 })
      })
    })

    describe('serialisation (docs/design.md#serialisation)', () => {
      it('a ticket: generation 0 and no blocker for a new campaign; each insert moves the generation by one', async () => {
        expect(await ledger.ticket('camp-new')).toEqual({ campaignId: 'camp-new', generation: 0, blocker: undefined })
        const a = pendingRecord({ campaignId: 'camp-new' })
        expect(await put(a)).toBe('inserted')
        const t1 = await ledger.ticket('camp-new')
        expect(t1).toEqual({ campaignId: 'camp-new', generation: 1, blocker: await ledger.get(a.requestId) })
        await ledger.recordOutcome(a.requestId, appliedOutcome())
        expect(await ledger.ticket('camp-new')).toEqual({ campaignId: 'camp-new', generation: 1, blocker: undefined })
        expect(await put(pendingRecord({ campaignId: 'camp-new' }))).toBe('inserted')
        expect((await ledger.ticket('camp-new')).generation).toBe(2)
        // campaigns are counted apart
        expect((await ledger.ticket('camp-other')).generation).toBe(0)
      })

      it('a ticket asked for an id and the lease reads them as get and getLease do, as of its moment; unasked, it carries neither', async () => {
        const none = await ledger.ticket('camp-t', { requestId: 'req-none', lease: true })
        expect(none).toEqual({ campaignId: 'camp-t', generation: 0, blocker: undefined, record: undefined, lease: null })
        const a = pendingRecord({ campaignId: 'camp-t', params: { nested: { z: 1, a: [true, null, 'x\u0000y'] } } })
        expect(await put(a)).toBe('inserted')
        await ledger.recordOutcome(a.requestId, appliedOutcome(2_000, 'task-9'))
        await ledger.putLease('camp-t', { controllerId: 'alice', epoch: 3, expiresAt: 1_700_000_000 }, 5)
        const t = await ledger.ticket('camp-t', { requestId: a.requestId, lease: true })
        expect(t.record).toEqual(await ledger.get(a.requestId))
        expect(t.lease).toEqual(await ledger.getLease('camp-t'))
        expect(t.lease).toMatchObject({ known: true, lease: { controllerId: 'alice', epoch: 3, expiresAt: 1_700_000_000 } })
        await ledger.markLeaseUnknown('camp-t', 6)
        expect((await ledger.ticket('camp-t', { lease: true })).lease).toEqual(await ledger.getLease('camp-t'))
        expect(await ledger.ticket('camp-t')).toEqual({ campaignId: 'camp-t', generation: 1, blocker: undefined })
      })

      it('at most one pending record per campaign: a second insert is blocked and writes nothing', async () => {
        const first = pendingRecord()
        expect(await put(first)).toBe('inserted')
        const ticket = await ledger.ticket('camp-1')
        const second = pendingRecord()
        expect(await ledger.insertPending(second, ticket)).toBe('blocked')
        // a pending record blocks a fence too: its owner is still waiting for its outcome
        expect(await ledger.insertPending(pendingRecord({ operation: 'fence', controllerEpoch: null }), ticket, { fence: true })).toBe('blocked')
        expect(await ledger.get(second.requestId)).toBeUndefined()
        expect(await ledger.ticket('camp-1')).toEqual(ticket)
        expect(await ledger.countRecords()).toBe(1)
        // another campaign is not blocked
        expect(await put(pendingRecord({ campaignId: 'camp-2' }))).toBe('inserted')
        // once the first has its outcome, the campaign takes the next
        await ledger.recordOutcome(first.requestId, appliedOutcome())
        expect(await put(second)).toBe('inserted')
      })

      it('an ambiguous record blocks every insert but a fence', async () => {
        const blocker = await ambiguous()
        const ticket = await ledger.ticket('camp-1')
        expect(ticket.blocker?.requestId).toBe(blocker)
        const r = pendingRecord()
        expect(await ledger.insertPending(r, ticket)).toBe('blocked')
        expect(await ledger.insertPending(r, ticket, { fence: false })).toBe('blocked')
        expect(await ledger.get(r.requestId)).toBeUndefined()
        const fence = pendingRecord({ operation: 'fence', controllerEpoch: null })
        expect(await ledger.insertPending(fence, ticket, { fence: true })).toBe('inserted')
        expect((await ledger.get(fence.requestId))?.state).toBe('pending')
        expect((await ledger.ticket('camp-1')).generation).toBe(ticket.generation + 1)
        // the fence now pending blocks a second fence
        expect(await put(pendingRecord({ operation: 'fence', controllerEpoch: null }), { fence: true })).toBe('blocked')
        await ledger.recordOutcome(fence.requestId, appliedOutcome())
        // the ambiguous record still blocks everything but a fence until it is resolved
        expect(await put(r)).toBe('blocked')
        await ledger.resolve(blocker, 'not_applied', resolution(), null, resolvedAnswer)
        expect(await put(r)).toBe('inserted')
      })

      it('an insert on a stale ticket is moved, even when nothing blocks the campaign, and writes nothing', async () => {
        const stale = await ledger.ticket('camp-1')
        const a = pendingRecord()
        expect(await ledger.insertPending(a, stale)).toBe('inserted')
        await ledger.recordOutcome(a.requestId, appliedOutcome())
        // another mutation started (and finished) since the ticket was read
        const b = pendingRecord()
        expect(await ledger.insertPending(b, stale)).toBe('moved')
        expect(await ledger.insertPending(b, stale, { fence: true })).toBe('moved')
        expect(await ledger.get(b.requestId)).toBeUndefined()
        expect((await ledger.ticket('camp-1')).generation).toBe(stale.generation + 1)
        // the generation is checked before the blocker: a stale ticket is moved while one is pending too
        const c = pendingRecord()
        expect(await put(c)).toBe('inserted')
        expect(await ledger.insertPending(pendingRecord(), stale)).toBe('moved')
        await ledger.recordOutcome(c.requestId, appliedOutcome())
        expect(await put(b)).toBe('inserted')
      })

      it('a used id is exists, whatever the ticket, and moves nothing', async () => {
        const r = pendingRecord()
        const fresh = await ledger.ticket('camp-1')
        expect(await ledger.insertPending(r, fresh)).toBe('inserted')
        await ledger.recordOutcome(r.requestId, appliedOutcome())
        const now = await ledger.ticket('camp-1')
        expect(await ledger.insertPending(r, now)).toBe('exists')
        expect(await ledger.insertPending({ ...r, campaignId: 'camp-2' }, await ledger.ticket('camp-2'))).toBe('exists')
        expect(await ledger.ticket('camp-1')).toEqual(now)
        expect((await ledger.ticket('camp-2')).generation).toBe(0)
        expect(await ledger.get(r.requestId)).toMatchObject({ state: 'applied', campaignId: 'camp-1' })
      })

      it('the store itself holds one pending record per campaign: a second written behind the ledger\'s back is refused', async () => {
        const r = pendingRecord()
        expect(await put(r)).toBe('inserted')
        const sneaked = newId('raw')
        await expect(exec(rawPending(sneaked, 'camp-1'))).rejects.toThrow()
        expect(await ledger.get(sneaked)).toBeUndefined()
        // nor can a finished record be turned pending again beside it
        await exec(rawPending(newId('raw'), 'camp-1', 'applied'))
        await expect(exec('UPDATE mutation_records SET state = \'pending\' WHERE campaign_id = \'camp-1\' AND state = \'applied\'')).rejects.toThrow()
        expect((await ledger.listByCampaign('camp-1', { state: 'pending' })).map((x) => x.requestId)).toEqual([r.requestId])
        // the index is per campaign and on pending alone
        await exec(rawPending(newId('raw'), 'camp-2'))
        await ledger.recordOutcome(r.requestId, appliedOutcome())
        await exec(rawPending(sneaked, 'camp-1'))
        // and what got in that way blocks the ledger's own inserts like any pending record
        expect(await put(pendingRecord())).toBe('blocked')
      })
    })

    describe('retryUnsent (docs/design.md#request-ids)', () => {
      it('takes back a record rejected with nothing sent, under the same checks as an insert, once', async () => {
        const unsent = pendingRecord()
        expect(await put(unsent)).toBe('inserted')
        await ledger.recordOutcome(unsent.requestId, nothingSent)
        const again = { owner: 'gw-b', waitMs: 90_000, controllerEpoch: 7, params: { intervention: { kind: 'pause', again: true } }, at: 3_000 }
        const ticket = await ledger.ticket('camp-1')
        expect(await ledger.retryUnsent(unsent.requestId, again, ticket)).toBe('inserted')
        const got = await ledger.get(unsent.requestId)
        expect(got).toMatchObject({
          state: 'pending', owner: 'gw-b', controllerEpoch: 7, params: again.params, answer: null, outcomeCode: null, updatedAt: 3_000, createdAt: unsent.createdAt, prunedAt: null
        })
        expectNear(got?.deadline, time + 90_000)
        expect((await ledger.ticket('camp-1')).generation).toBe(ticket.generation + 1)
        // pending again: a second retry is refused, on the same ticket (moved) or a fresh one (blocked)
        expect(await ledger.retryUnsent(unsent.requestId, again, ticket)).toBe('moved')
        expect(await ledger.retryUnsent(unsent.requestId, again, await ledger.ticket('camp-1'))).toBe('blocked')
        await ledger.recordOutcome(unsent.requestId, appliedOutcome(4_000))
        // once sent, it is a use for good
        expect(await ledger.retryUnsent(unsent.requestId, again, await ledger.ticket('camp-1'))).toBe('exists')
        expect((await ledger.get(unsent.requestId))?.state).toBe('applied')

        // a refusal by the remote, or any other outcome, is a use for good
        const refused = pendingRecord()
        await put(refused)
        await ledger.recordOutcome(refused.requestId, { ...nothingSent, answer: { httpStatus: 409, body: {} }, outcomeCode: 'stale_epoch' })
        expect(await ledger.retryUnsent(refused.requestId, again, await ledger.ticket('camp-1'))).toBe('exists')
        const applied = pendingRecord()
        await put(applied)
        await ledger.recordOutcome(applied.requestId, appliedOutcome())
        const before = await ledger.ticket('camp-1')
        expect(await ledger.retryUnsent(applied.requestId, again, before)).toBe('exists')
        expect(await ledger.retryUnsent('no-such-request', again, before)).toBe('exists')
        expect(await ledger.ticket('camp-1')).toEqual(before)
      })

      it('is blocked by another pending or an ambiguous record of the campaign, and moved on a stale ticket', async () => {
        const unsent = pendingRecord()
        const stale = await ledger.ticket('camp-1')
        expect(await put(unsent)).toBe('inserted')
        await ledger.recordOutcome(unsent.requestId, nothingSent)
        const again = { owner: 'gw-b', waitMs: 90_000, controllerEpoch: 7, params: unsent.params, at: 3_000 }
        expect(await ledger.retryUnsent(unsent.requestId, again, stale)).toBe('moved')
        const other = pendingRecord()
        expect(await put(other)).toBe('inserted')
        expect(await ledger.retryUnsent(unsent.requestId, again, await ledger.ticket('camp-1'))).toBe('blocked')
        await ledger.recordOutcome(other.requestId, appliedOutcome())
        await ambiguous()
        expect(await ledger.retryUnsent(unsent.requestId, again, await ledger.ticket('camp-1'))).toBe('blocked')
        expect(await ledger.get(unsent.requestId)).toMatchObject({ state: 'rejected', outcomeCode: 'upstream_unavailable', owner: unsent.owner })
      })

      it('restores the params of an unsent record retention pruned: it was never sent, so it may run', async () => {
        const unsent = pendingRecord()
        expect(await put(unsent)).toBe('inserted')
        await ledger.recordOutcome(unsent.requestId, nothingSent)
        expect(await ledger.pruneResolvedBefore(10_000, 10, 9_000)).toBe(1)
        expect(await ledger.get(unsent.requestId)).toMatchObject({ state: 'rejected', params: null, answer: null, prunedAt: 9_000 })
        const again = { owner: 'gw-b', waitMs: 90_000, controllerEpoch: 7, params: unsent.params, at: 10_000 }
        expect(await ledger.retryUnsent(unsent.requestId, again, await ledger.ticket('camp-1'))).toBe('inserted')
        expect(await ledger.get(unsent.requestId)).toMatchObject({ state: 'pending', params: unsent.params, paramsHash: unsent.paramsHash, prunedAt: null, updatedAt: 10_000 })
      })
    })

    describe('leases', () => {
      it('is unknown until seen; putLease marks it known and raises maxEpochSeen', async () => {
        expect(await ledger.getLease('camp-1')).toBeUndefined()
        await ledger.putLease('camp-1', { controllerId: 'alice', epoch: 4, expiresAt: 1_700_000_000 }, 1_000)
        expect(await ledger.getLease('camp-1')).toEqual({
          campaignId: 'camp-1', known: true, lease: { controllerId: 'alice', epoch: 4, expiresAt: 1_700_000_000 }, maxEpochSeen: 4, updatedAt: 1_000
        })
        expect(await ledger.getLease('camp-2')).toBeUndefined()
      })

      it('maxEpochSeen never goes down, whatever is put', async () => {
        await ledger.putLease('camp-1', { controllerId: 'alice', epoch: 7, expiresAt: 100 }, 1)
        await ledger.putLease('camp-1', { controllerId: 'bob', epoch: 5, expiresAt: 200 }, 2)
        expect(await ledger.getLease('camp-1')).toMatchObject({ lease: { controllerId: 'bob', epoch: 5, expiresAt: 200 }, maxEpochSeen: 7, updatedAt: 2 })
        await ledger.putLease('camp-1', null, 3)
        expect(await ledger.getLease('camp-1')).toMatchObject({ known: true, lease: null, maxEpochSeen: 7, updatedAt: 3 })
        await ledger.markLeaseUnknown('camp-1', 4)
        expect(await ledger.getLease('camp-1')).toMatchObject({ known: false, maxEpochSeen: 7, updatedAt: 4 })
        await ledger.putLease('camp-1', { controllerId: 'carol', epoch: 9, expiresAt: 300 }, 5)
        expect(await ledger.getLease('camp-1')).toMatchObject({ known: true, maxEpochSeen: 9 })
      })

      it('a campaign first seen without a lease, or first marked unknown, starts at epoch 0', async () => {
        await ledger.putLease('camp-1', null, 10)
        expect(await ledger.getLease('camp-1')).toEqual({ campaignId: 'camp-1', known: true, lease: null, maxEpochSeen: 0, updatedAt: 10 })
        await ledger.markLeaseUnknown('camp-2', 11)
        expect(await ledger.getLease('camp-2')).toEqual({ campaignId: 'camp-2', known: false, lease: null, maxEpochSeen: 0, updatedAt: 11 })
      })

      it('markLeaseUnknown keeps the lease last seen (meaningful only when known)', async () => {
        const lease = { controllerId: 'alice', epoch: 2, expiresAt: 100 }
        await ledger.putLease('camp-1', lease, 1)
        await ledger.markLeaseUnknown('camp-1', 2)
        expect(await ledger.getLease('camp-1')).toEqual({ campaignId: 'camp-1', known: false, lease, maxEpochSeen: 2, updatedAt: 2 })
      })

      it('forgetAllLeases makes every lease unknown and keeps each maxEpochSeen', async () => {
        await ledger.putLease('camp-1', { controllerId: 'alice', epoch: 3, expiresAt: 100 }, 1)
        await ledger.putLease('camp-2', null, 1)
        await ledger.forgetAllLeases(5)
        expect(await ledger.getLease('camp-1')).toMatchObject({ known: false, maxEpochSeen: 3, updatedAt: 5 })
        expect(await ledger.getLease('camp-2')).toMatchObject({ known: false, maxEpochSeen: 0, updatedAt: 5 })
        expect(await ledger.getLease('camp-3')).toBeUndefined()
      })
    })

    describe('operating the ledger', () => {
      it('exportRecords pages through every record in creation order, filtered by time and campaign', async () => {
        const made: string[] = []
        for (let i = 0; i < 7; i++) {
          const r = pendingRecord({ createdAt: 1_000 + Math.floor(i / 2), campaignId: i % 3 === 0 ? 'camp-e' : 'camp-f' })
          expect(await put(r)).toBe('inserted')
          await ledger.recordOutcome(r.requestId, appliedOutcome(r.createdAt + 1))
          made.push(r.requestId)
        }
        const seen: string[] = []
        let after: { createdAt: number; requestId: string } | undefined
        for (;;) {
          const page = await ledger.exportRecords({ after, limit: 3 })
          if (page.length === 0) break
          seen.push(...page.map((r) => r.requestId))
          const last = page.at(-1)!
          after = { createdAt: last.createdAt, requestId: last.requestId }
        }
        expect(seen.length).toBe(7)
        expect(new Set(seen)).toEqual(new Set(made))
        const order = (await Promise.all(seen.map(async (id) => await ledger.get(id)))).map((r) => r!.createdAt)
        expect(order).toEqual([...order].sort((a, b) => a - b))
        expect((await ledger.exportRecords({ campaignId: 'camp-e', limit: 100 })).map((r) => r.campaignId)).toEqual(['camp-e', 'camp-e', 'camp-e'])
        expect(await ledger.exportRecords({ since: 1_003, limit: 100 })).toHaveLength(1)
      })

      it('exportRecords orders ties by request id in byte order, and a cursor before, inside or after the window picks what the window and the cursor both allow', async () => {
        // ids whose byte order differs from a linguistic one (upper case before lower, '-' and '.' before letters)
        const ids = ['b.00000001', 'B-00000001', 'a-00000002', 'A.00000002', 'a-00000001', 'Z-00000003']
        const at = [1_000, 1_001, 1_001, 1_001, 1_002, 1_002]
        for (const [k, requestId] of ids.entries()) {
          const r = pendingRecord({ requestId, createdAt: at[k]!, campaignId: k % 2 === 0 ? 'camp-e' : 'camp-f' })
          expect(await put(r)).toBe('inserted')
          await ledger.recordOutcome(requestId, appliedOutcome(r.createdAt + 1))
        }
        const byte = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
        const expected = ids.map((id, k) => ({ id, at: at[k]! })).sort((x, y) => x.at - y.at || byte(x.id, y.id))
        const all = await ledger.exportRecords({ limit: 100 })
        expect(all.map((r) => r.requestId)).toEqual(expected.map((e) => e.id))
        const page = async (o: Parameters<Ledger['exportRecords']>[0]): Promise<string[]> => (await ledger.exportRecords(o)).map((r) => r.requestId)
        const after = (k: number): { createdAt: number; requestId: string } => ({ createdAt: all[k]!.createdAt, requestId: all[k]!.requestId })
        // a cursor inside a tie: the rest of the tie, then on
        expect(await page({ after: after(1), limit: 100 })).toEqual(expected.slice(2).map((e) => e.id))
        // a cursor before the window: the window from its start; inside it: after the cursor
        expect(await page({ since: 1_001, after: after(0), limit: 100 })).toEqual(expected.slice(1).map((e) => e.id))
        expect(await page({ since: 1_001, after: after(2), limit: 2 })).toEqual(expected.slice(3, 5).map((e) => e.id))
        expect(await page({ since: 1_002, after: after(5), limit: 100 })).toEqual([])
        // a campaign's, in the same order, after a cursor of its own
        const campE = expected.filter((e) => ids.indexOf(e.id) % 2 === 0)
        expect(await page({ campaignId: 'camp-e', limit: 100 })).toEqual(campE.map((e) => e.id))
        const firstE = all.find((r) => r.requestId === campE[0]!.id)!
        expect(await page({ campaignId: 'camp-e', since: 1_000, after: { createdAt: firstE.createdAt, requestId: firstE.requestId }, limit: 1 })).toEqual([campE[1]!.id])
      })

      it('pruneResolvedBefore keeps every record and removes its params, answer and note, in batches; never a pending or ambiguous one (docs/design.md#request-ids-are-forever)', async () => {
        /** a record of camp-1 finished at 2,000 (each before the next: one pending per campaign) */
        const finished = async (o: Outcome, r: Partial<NewMutationRecord> = {}): Promise<string> => {
          const rec = pendingRecord({ createdAt: 1_000, ...r })
          expect(await put(rec)).toBe('inserted')
          expect(await ledger.recordOutcome(rec.requestId, o)).toBe(true)
          return rec.requestId
        }
        const applied = [await finished(appliedOutcome()), await finished(appliedOutcome()), await finished(appliedOutcome())]
        const rejected = await finished({ state: 'rejected', answer: { httpStatus: 409, body: { error: { code: 'stale_epoch' } } }, outcomeCode: 'stale_epoch', taskId: null, at: 2_000 })
        const bound = await finished(appliedOutcome(2_000, 'task-1'), { operation: 'submit' })
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: bound, boundAt: 2_000 })
        const acknowledged = await ambiguous({ campaignId: 'camp-k', createdAt: 1_000 }, 1_500)
        await ledger.noteReconcileFailure(acknowledged, 2_500)
        await ledger.resolve(acknowledged, 'applied', resolution({ kind: 'acknowledge', by: 'admin', at: 3_000, note: 'checked by hand ✓', resolution: 'assume_applied' }), null, resolvedAnswer)
        const notApplied = await ambiguous({ campaignId: 'camp-n', createdAt: 1_000 }, 1_500)
        await ledger.resolve(notApplied, 'not_applied', resolution({ at: 3_500, note: 'the remote said so' }), null, resolvedAnswer)
        // what must stay whole, however old: an ambiguous record, a pending one, a recent one
        const stillAmbiguous = await ambiguous({ campaignId: 'camp-a', createdAt: 1_000 }, 2_000)
        const pending = pendingRecord({ campaignId: 'camp-p', createdAt: 1_000, waitMs: 1e12 })
        expect(await put(pending)).toBe('inserted')
        const recent = await finished(appliedOutcome(9_000))

        const all = [...applied, rejected, bound, acknowledged, notApplied, stillAmbiguous, pending.requestId, recent]
        const before = new Map<string, MutationRecord>()
        for (const id of all) before.set(id, (await ledger.get(id))!)
        expect(await ledger.countRecords()).toBe(10)

        expect(await ledger.pruneResolvedBefore(5_000, 3, 6_000)).toBe(3)
        expect(await ledger.pruneResolvedBefore(5_000, 3, 6_000)).toBe(3)
        expect(await ledger.pruneResolvedBefore(5_000, 3, 6_000)).toBe(1)
        expect(await ledger.pruneResolvedBefore(5_000, 3, 6_000)).toBe(0)
        // nothing is deleted
        expect(await ledger.countRecords()).toBe(10)
        for (const id of [...applied, rejected, bound, acknowledged, notApplied]) {
          const was = before.get(id)!
          // id, campaign, caller, operation, params hash, epoch, state, outcome code, task id, times and who resolved it stay
          expect(await ledger.get(id), id).toEqual({
            ...was,
            params: null,
            answer: null,
            resolution: was.resolution === null ? null : { ...was.resolution, note: null },
            prunedAt: 6_000
          })
        }
        expect((await ledger.get(acknowledged))?.resolution).toEqual({ kind: 'acknowledge', by: 'admin', at: 3_000, note: null, resolution: 'assume_applied' })
        for (const id of [stillAmbiguous, pending.requestId, recent]) expect(await ledger.get(id), id).toEqual(before.get(id))
        // the bound task's record stays, so the task still resolves to it
        expect(await ledger.getBoundTask('camp-1')).toEqual({ campaignId: 'camp-1', taskId: 'task-1', requestId: bound, boundAt: 2_000 })
        // a pruned record is not pruned again; a later window takes the recent one
        expect(await ledger.pruneResolvedBefore(20_000, 100, 7_000)).toBe(1)
        expect((await ledger.get(applied[0]!))?.prunedAt).toBe(6_000)
        expect((await ledger.get(recent))?.prunedAt).toBe(7_000)
        // a pruned id is still used: never inserted again
        expect(await put(pendingRecord({ requestId: applied[0]! }))).toBe('exists')
      })
    })

    describe('controller bindings (docs/design.md#controller-bindings)', () => {
      const binding = (controllerId: string, identity: string, boundAt = 10) => ({ controllerId, identity, caller: identity.split(/[:#]/).at(-1)!, boundAt })

      it('binds an id to the first identity; the same identity again changes nothing; another gets the binding in force', async () => {
        const first = binding('Ctl-Alpha', 'jwt:https://idp.example#alice')
        expect(await ledger.bindController(first)).toEqual(first)
        expect(await ledger.bindController({ ...first, caller: 'alice-renamed', boundAt: 99 })).toEqual(first)
        expect(await ledger.bindController(binding('Ctl-Alpha', 'static:mallory', 50))).toEqual(first)
        // ids that differ only in letter case are one
        expect(await ledger.bindController(binding('ctl-alpha', 'static:mallory', 51))).toEqual(first)
        expect(await ledger.bindController(binding('CTL-ALPHA', 'jwt:https://idp.example#alice', 52))).toEqual(first)
        expect(await ledger.listControllerBindings()).toEqual([first])
      })

      it('lists every binding in controller id order, letter case aside, byte order for the rest; removes one in any case', async () => {
        const ids = ['beta', 'Charlie', 'Alpha', 'ctl-z', 'ctla']
        for (const [i, id] of ids.entries()) await ledger.bindController(binding(id, `static:c${i}`, i))
        expect((await ledger.listControllerBindings()).map((b) => b.controllerId)).toEqual(['Alpha', 'beta', 'Charlie', 'ctl-z', 'ctla'])
        // the binding removed is answered, as it was bound: who held the id, for the audit line
        expect(await ledger.removeControllerBinding('CHARLIE')).toEqual(binding('Charlie', 'static:c1', 1))
        expect(await ledger.removeControllerBinding('charlie')).toBeUndefined()
        expect(await ledger.removeControllerBinding('no-such-controller')).toBeUndefined()
        expect((await ledger.listControllerBindings()).map((b) => b.controllerId)).toEqual(['Alpha', 'beta', 'ctl-z', 'ctla'])
        // once removed, the id is free for whoever presents it next
        const next = binding('charlie', 'static:newcomer', 77)
        expect(await ledger.bindController(next)).toEqual(next)
      })

      it('liveLeasesOf: the campaigns whose lease under the id, letter case aside, outlives now on the ledger\'s clock, known or not', async () => {
        // expiresAt is Unix seconds, now ms
        await ledger.putLease('camp-b', { controllerId: 'Ctl-1', epoch: 2, expiresAt: 2_000 }, 1)
        await ledger.putLease('camp-a', { controllerId: 'ctl-1', epoch: 1, expiresAt: 3_000 }, 1)
        await ledger.putLease('camp-c', { controllerId: 'ctl-1', epoch: 1, expiresAt: 1_000 }, 1)
        await ledger.putLease('camp-d', { controllerId: 'ctl-2', epoch: 1, expiresAt: 3_000 }, 1)
        await ledger.putLease('camp-e', { controllerId: 'ctl-10', epoch: 1, expiresAt: 3_000 }, 1)
        await ledger.putLease('camp-f', { controllerId: 'ctl-1', epoch: 1, expiresAt: 3_000 }, 1)
        await ledger.putLease('camp-f', null, 2)
        // a lease last seen live may still be: a view no longer known counts
        await ledger.markLeaseUnknown('camp-b', 3)
        expect(await ledger.liveLeasesOf('CTL-1', 1_500_000)).toEqual(['camp-a', 'camp-b'])
        // at expiresAt the lease has ended
        expect(await ledger.liveLeasesOf('ctl-1', 1_999_999)).toEqual(['camp-a', 'camp-b'])
        expect(await ledger.liveLeasesOf('ctl-1', 2_000_000)).toEqual(['camp-a'])
        expect(await ledger.liveLeasesOf('ctl-1', 3_000_000)).toEqual([])
        expect(await ledger.liveLeasesOf('ctl-2', 1_500_000.5)).toEqual(['camp-d'])
        expect(await ledger.liveLeasesOf('ctl', 0)).toEqual([])
        await ledger.forgetAllLeases(4)
        expect(await ledger.liveLeasesOf('ctl-1', 1_500_000)).toEqual(['camp-a', 'camp-b'])
      })
    })

    describe('bound tasks', () => {
      it('one per campaign, overwritten by the next binding', async () => {
        const first = pendingRecord({ operation: 'submit' })
        const second = pendingRecord({ operation: 'submit' })
        expect(await put(first)).toBe('inserted')
        await ledger.recordOutcome(first.requestId, appliedOutcome(2_000, 'task-1'))
        expect(await put(second)).toBe('inserted')
        expect(await ledger.getBoundTask('camp-1')).toBeUndefined()
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: first.requestId, boundAt: 10 })
        expect(await ledger.getBoundTask('camp-1')).toEqual({ campaignId: 'camp-1', taskId: 'task-1', requestId: first.requestId, boundAt: 10 })
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-2', requestId: second.requestId, boundAt: 20 })
        expect(await ledger.getBoundTask('camp-1')).toEqual({ campaignId: 'camp-1', taskId: 'task-2', requestId: second.requestId, boundAt: 20 })
        expect(await ledger.getBoundTask('camp-2')).toBeUndefined()
      })

      it('clearBoundTask leaves the campaign with none, and others untouched', async () => {
        const r = pendingRecord({ operation: 'submit' })
        await put(r)
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: r.requestId, boundAt: 10 })
        await ledger.setBoundTask({ campaignId: 'camp-2', taskId: 'task-2', requestId: r.requestId, boundAt: 10 })
        await ledger.clearBoundTask('camp-1')
        await ledger.clearBoundTask('camp-3')
        expect(await ledger.getBoundTask('camp-1')).toBeUndefined()
        expect(await ledger.getBoundTask('camp-2')).toMatchObject({ taskId: 'task-2' })
      })

      it('names a request the ledger holds', async () => {
        await expect(ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: 'no-such-request', boundAt: 1 })).rejects.toThrow()
        expect(await ledger.getBoundTask('camp-1')).toBeUndefined()
      })

      it('campaignsOfTask: the campaigns whose records name the task, once each, whether or not it is still bound (docs/design.md#grants)', async () => {
        expect(await ledger.campaignsOfTask('task-1')).toEqual([])
        const made = pendingRecord({ operation: 'submit', campaignId: 'camp-b' })
        expect(await put(made)).toBe('inserted')
        expect(await ledger.campaignsOfTask('task-1')).toEqual([])
        await ledger.recordOutcome(made.requestId, appliedOutcome(2_000, 'task-1'))
        const canceled = pendingRecord({ operation: 'cancel', campaignId: 'camp-b' })
        expect(await put(canceled)).toBe('inserted')
        await ledger.recordOutcome(canceled.requestId, appliedOutcome(2_001, 'task-1'))
        // a remote that reused a task id across campaigns: both are named
        const other = pendingRecord({ operation: 'submit', campaignId: 'camp-a' })
        expect(await put(other)).toBe('inserted')
        await ledger.recordOutcome(other.requestId, appliedOutcome(2_002, 'task-1'))
        expect(await ledger.campaignsOfTask('task-1')).toEqual(['camp-a', 'camp-b'])
        expect(await ledger.campaignsOfTask('TASK-1')).toEqual([])
      })
    })

    describe('front-door sends (docs/api.md#a2a-front-door)', () => {
      const send = (o: Partial<FrontSend> = {}): FrontSend => ({
        identity: 'static:alice', messageId: 'msg-1', caller: 'alice', contentHash: 'h-1', kind: 'submit', campaignId: 'camp-1', taskId: null, answer: null, createdAt: 1_000, ...o
      })

      it('one per (identity, message id): the first stays in force, a second identity has its own', async () => {
        expect(await ledger.getFrontSend('static:alice', 'msg-1')).toBeUndefined()
        expect(await ledger.putFrontSend(send())).toEqual(send())
        // the same id with other content answers the send in force, unchanged
        expect(await ledger.putFrontSend(send({ contentHash: 'h-2', createdAt: 2_000 }))).toEqual(send())
        expect(await ledger.getFrontSend('static:alice', 'msg-1')).toEqual(send())
        const bob = send({ identity: 'jwt:https://idp#bob', caller: 'jwt:bob', contentHash: 'h-3' })
        expect(await ledger.putFrontSend(bob)).toEqual(bob)
        expect(await ledger.getFrontSend('static:alice', 'msg-2')).toBeUndefined()
      })

      it('a read keeps its first answer; a submission owns its task for its identity alone', async () => {
        const read = send({ messageId: 'msg-r', kind: 'read', campaignId: null })
        await ledger.putFrontSend(read)
        await ledger.settleFrontSend('static:alice', 'msg-r', { answer: { kind: 'message', parts: [{ kind: 'data', data: { ok: 'ü' } }] } })
        expect((await ledger.getFrontSend('static:alice', 'msg-r'))?.answer).toEqual({ kind: 'message', parts: [{ kind: 'data', data: { ok: 'ü' } }] })

        await ledger.putFrontSend(send())
        expect(await ledger.frontTaskOf('static:alice', 'task-9')).toBeUndefined()
        await ledger.settleFrontSend('static:alice', 'msg-1', { taskId: 'task-9' })
        expect(await ledger.frontTaskOf('static:alice', 'task-9')).toEqual(send({ taskId: 'task-9' }))
        // nobody else owns it, and settling again without a task id keeps it
        expect(await ledger.frontTaskOf('static:bob', 'task-9')).toBeUndefined()
        await ledger.settleFrontSend('static:alice', 'msg-1', {})
        expect((await ledger.frontTaskOf('static:alice', 'task-9'))?.taskId).toBe('task-9')
        // settling a send that does not exist writes nothing
        await ledger.settleFrontSend('static:bob', 'msg-1', { taskId: 'task-9' })
        expect(await ledger.frontTaskOf('static:bob', 'task-9')).toBeUndefined()
      })

      it('an applied submission\'s outcome names its task on its sender\'s send of that message id, in the same write: the record\'s identity and campaign, a submission still without a task', async () => {
        const alice = 'jwt:https://idp.test#alice-1'
        const mallory = 'jwt:https://idp.test#mallory-6'
        const r = pendingRecord({ operation: 'submit', caller: 'jwt:ml-portal', identity: alice, campaignId: 'camp-n' })
        await ledger.putFrontSend(send({ identity: alice, messageId: r.requestId, caller: 'jwt:ml-portal', campaignId: 'camp-n' }))
        // the same name, the same message id, another identity: the door records its send before the pipeline refuses it
        await ledger.putFrontSend(send({ identity: mallory, messageId: r.requestId, caller: 'jwt:ml-portal', campaignId: 'camp-n' }))
        expect(await put(r)).toBe('inserted')
        expect(await ledger.recordOutcome(r.requestId, appliedOutcome(2_000, 'task-n'))).toBe(true)
        expect(await ledger.frontTaskOf(alice, 'task-n')).toMatchObject({ messageId: r.requestId, taskId: 'task-n', campaignId: 'camp-n' })
        expect(await ledger.frontTaskOf(mallory, 'task-n')).toBeUndefined()
        expect((await ledger.getFrontSend(mallory, r.requestId))?.taskId).toBeNull()
        // a lost compare-and-set names nothing
        expect(await ledger.recordOutcome(r.requestId, appliedOutcome(3_000, 'task-other'))).toBe(false)
        expect(await ledger.frontTaskOf(alice, 'task-other')).toBeUndefined()

        // what names nothing: a refusal, a cancel's target, a read under the id, another campaign's send, a send already named
        const cases: Array<[Partial<NewMutationRecord>, Partial<FrontSend>, Outcome]> = [
          [{ operation: 'submit', campaignId: 'camp-n1' }, { campaignId: 'camp-n1' }, { ...nothingSent, taskId: null }],
          [{ operation: 'cancel', campaignId: 'camp-n2' }, { campaignId: 'camp-n2' }, appliedOutcome(2_000, 'task-n2')],
          [{ operation: 'submit', campaignId: 'camp-n3' }, { kind: 'read', campaignId: null }, appliedOutcome(2_000, 'task-n3')],
          [{ operation: 'submit', campaignId: 'camp-n4' }, { campaignId: 'camp-elsewhere' }, appliedOutcome(2_000, 'task-n4')],
          [{ operation: 'submit', campaignId: 'camp-n5' }, { campaignId: 'camp-n5', taskId: 'task-first' }, appliedOutcome(2_000, 'task-n5')]
        ]
        for (const [rec, front, outcome] of cases) {
          const x = pendingRecord(rec)
          await ledger.putFrontSend(send({ messageId: x.requestId, ...front }))
          expect(await put(x)).toBe('inserted')
          expect(await ledger.recordOutcome(x.requestId, outcome)).toBe(true)
          expect((await ledger.getFrontSend('static:alice', x.requestId))?.taskId, JSON.stringify(rec)).toBe(front.taskId ?? null)
        }
        // a record of unknown owner (an older gateway's) is no sender's
        await exec(rawPending('req-unowned', 'camp-n6').replace("'intervene'", "'submit'"))
        await ledger.putFrontSend(send({ identity: 'static:mallory', messageId: 'req-unowned', campaignId: 'camp-n6' }))
        expect(await ledger.recordOutcome('req-unowned', appliedOutcome(2_000, 'task-n6'))).toBe(true)
        expect((await ledger.getFrontSend('static:mallory', 'req-unowned'))?.taskId).toBeNull()
      })

      it('a submission resolved applied with a task id names it likewise; resolved not applied, or applied without its task id, names nothing', async () => {
        const settle = async (campaignId: string, to: 'applied' | 'not_applied', taskId: string | null): Promise<string> => {
          const id = await ambiguous({ operation: 'submit', campaignId })
          await ledger.putFrontSend(send({ messageId: id, campaignId }))
          expect((await ledger.getFrontSend('static:alice', id))?.taskId).toBeNull()
          expect(await ledger.resolve(id, to, resolution({ by: 'someone-else' }), taskId, resolvedAnswer)).toBe(true)
          return id
        }
        const named = await settle('camp-r1', 'applied', 'task-r')
        // the record's own sender, whoever reconciled it
        expect(await ledger.frontTaskOf('static:alice', 'task-r')).toMatchObject({ messageId: named, campaignId: 'camp-r1' })
        expect(await ledger.frontTaskOf('static:someone-else', 'task-r')).toBeUndefined()
        const refused = await settle('camp-r2', 'not_applied', null)
        expect((await ledger.getFrontSend('static:alice', refused))?.taskId).toBeNull()
        const unknown = await settle('camp-r3', 'applied', null)
        expect((await ledger.getFrontSend('static:alice', unknown))?.taskId).toBeNull()
      })

      it('pruneFrontReadsBefore deletes old reads with their answers, in batches; never a submission, never a recent read', async () => {
        const answer = { kind: 'message', parts: [{ kind: 'data', data: { ok: true } }] }
        for (let i = 0; i < 5; i++) {
          await ledger.putFrontSend(send({ messageId: `old-read-${i}`, kind: 'read', campaignId: null, createdAt: 1_000 + i }))
          await ledger.settleFrontSend('static:alice', `old-read-${i}`, { answer })
        }
        await ledger.putFrontSend(send({ messageId: 'new-read', kind: 'read', campaignId: null, createdAt: 9_000 }))
        // submissions, however old: their hash and task owner stay as long as the request id
        await ledger.putFrontSend(send({ messageId: 'old-sub', createdAt: 500 }))
        await ledger.settleFrontSend('static:alice', 'old-sub', { taskId: 'task-old' })

        expect(await ledger.pruneFrontReadsBefore(5_000, 2)).toBe(2)
        expect(await ledger.pruneFrontReadsBefore(5_000, 2)).toBe(2)
        expect(await ledger.pruneFrontReadsBefore(5_000, 2)).toBe(1)
        expect(await ledger.pruneFrontReadsBefore(5_000, 2)).toBe(0)
        for (let i = 0; i < 5; i++) expect(await ledger.getFrontSend('static:alice', `old-read-${i}`)).toBeUndefined()
        expect((await ledger.getFrontSend('static:alice', 'new-read'))?.createdAt).toBe(9_000)
        expect(await ledger.getFrontSend('static:alice', 'old-sub')).toEqual(send({ messageId: 'old-sub', createdAt: 500, taskId: 'task-old' }))
        expect((await ledger.frontTaskOf('static:alice', 'task-old'))?.messageId).toBe('old-sub')
        // a pruned read's id is free again: the repeat is a fresh read, recorded anew
        const again = send({ messageId: 'old-read-0', kind: 'read', campaignId: null, contentHash: 'h-9', createdAt: 10_000 })
        expect(await ledger.putFrontSend(again)).toEqual(again)
        expect(await ledger.pruneFrontReadsBefore(20_000, 100)).toBe(2)
        expect(await ledger.getFrontSend('static:alice', 'old-sub')).toBeDefined()
      })
    })

    describe('lockCampaign', () => {
      it('serialises one campaign, first come first served', async () => {
        const events: string[] = []
        const release1 = await ledger.lockCampaign('camp-1', 1_000)
        expect(release1).toBeTypeOf('function')
        const w2 = ledger.lockCampaign('camp-1', 1_000).then(r => { events.push('2'); return r })
        const w3 = ledger.lockCampaign('camp-1', 1_000).then(r => { events.push('3'); return r })
        await new Promise(resolve => setTimeout(resolve, 20))
        expect(events).toEqual([])
        await release1!()
        const release2 = await w2
        expect(events).toEqual(['2'])
        await release2!()
        const release3 = await w3
        expect(events).toEqual(['2', '3'])
        await release3!()
      })

      it('a waiter gives up after waitMs; other campaigns are not blocked', async () => {
        const held = await ledger.lockCampaign('camp-1', 1_000)
        const t0 = Date.now()
        expect(await ledger.lockCampaign('camp-1', 50)).toBeUndefined()
        expect(Date.now() - t0).toBeGreaterThanOrEqual(40)
        expect(Date.now() - t0).toBeLessThan(1_000)
        const other = await ledger.lockCampaign('camp-2', 50)
        expect(other).toBeTypeOf('function')
        await other!()
        await held!()
        // the waiter that gave up holds nothing afterwards
        const again = await ledger.lockCampaign('camp-1', 50)
        expect(again).toBeTypeOf('function')
        await again!()
      })

      it('releasing twice does not release the next holder', async () => {
        const first = await ledger.lockCampaign('camp-1', 1_000)
        const next = ledger.lockCampaign('camp-1', 1_000)
        await first!()
        const second = await next
        await first!()
        expect(await ledger.lockCampaign('camp-1', 30)).toBeUndefined()
        await second!()
      })
    })

    describe('ping and close', () => {
      it('ping is true while open, false after close; close twice is fine', async () => {
        expect(await ledger.ping()).toBe(true)
        await ledger.close()
        expect(await ledger.ping()).toBe(false)
        await ledger.close()
      })
    })
  })
}
