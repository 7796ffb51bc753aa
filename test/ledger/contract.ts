// The ledger contract (docs/design.md#ledger): one suite every Ledger implementation must
// pass, so SQLite and PostgreSQL keep the same rules — ids unique across the whole ledger,
// compare-and-set outcome writes, the ambiguity block's ordering, leases whose highest epoch
// never goes down, one bound task per campaign, and the per-campaign lock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Ledger, NewMutationRecord, Outcome, Resolution, StoredAnswer } from '../../src/ledger/types.js'
import { appliedOutcome, pendingRecord } from './records.js'

const resolution = (o: Partial<Resolution> = {}): Resolution =>
  ({ kind: 'reconcile', by: 'alice', at: 5_000, note: null, resolution: null, ...o })

const resolvedAnswer: StoredAnswer = { httpStatus: 200, body: { accepted: true, resolved: 'reconcile' } }

export function ledgerContract (name: string, make: () => Promise<Ledger>): void {
  describe(`ledger contract: ${name}`, () => {
    let ledger: Ledger
    beforeEach(async () => { ledger = await make() })
    afterEach(async () => { await ledger.close() })

    /** a pending record, then turned ambiguous by expiry */
    async function ambiguous (o: Partial<NewMutationRecord> = {}): Promise<string> {
      const r = pendingRecord({ deadline: 1, ...o })
      await ledger.insertPending(r)
      expect(await ledger.expirePending(r.deadline + 1)).toContain(r.requestId)
      return r.requestId
    }

    describe('records', () => {
      it('stores a pending record and reads it back whole, JSON included', async () => {
        const r = pendingRecord({ operation: 'claim', controllerEpoch: null })
        expect(await ledger.insertPending(r)).toBe('inserted')
        expect(await ledger.get(r.requestId)).toEqual({
          ...r, state: 'pending', updatedAt: r.createdAt, answer: null, outcomeCode: null, taskId: null, reconcileFailures: 0, resolution: null
        })
        expect(await ledger.get('no-such-request')).toBeUndefined()
      })

      it('request ids are unique across the whole ledger', async () => {
        const r = pendingRecord()
        expect(await ledger.insertPending(r)).toBe('inserted')
        expect(await ledger.insertPending({ ...r, params: { other: true } })).toBe('exists')
        expect(await ledger.insertPending({ ...r, campaignId: 'camp-2', caller: 'bob' })).toBe('exists')
        expect((await ledger.get(r.requestId))?.params).toEqual(r.params)
        expect(await ledger.listByCampaign('camp-2')).toEqual([])
      })

      it('recordOutcome is compare-and-set from pending', async () => {
        const r = pendingRecord()
        await ledger.insertPending(r)
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
        await ledger.insertPending(r)
        const o: Outcome = { state: 'rejected', answer: { httpStatus: 409, body: { error: { code: 'stale_epoch' } } }, outcomeCode: 'stale_epoch', taskId: null, at: 2_500 }
        expect(await ledger.recordOutcome(r.requestId, o)).toBe(true)
        expect(await ledger.get(r.requestId)).toMatchObject({ state: 'rejected', outcomeCode: 'stale_epoch', answer: o.answer })
        const late = await ambiguous()
        expect(await ledger.recordOutcome(late, appliedOutcome())).toBe(false)
        expect((await ledger.get(late))?.state).toBe('ambiguous')
      })

      it('resolve is compare-and-set from ambiguous, and keeps who resolved it', async () => {
        const pending = pendingRecord()
        await ledger.insertPending(pending)
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

      it('retryUnsent takes back only a record rejected with nothing sent, once', async () => {
        const unsent = pendingRecord()
        await ledger.insertPending(unsent)
        const nothingSent: Outcome = { state: 'rejected', answer: { httpStatus: 503, body: {} }, outcomeCode: 'upstream_unavailable', taskId: null, at: 2_000 }
        await ledger.recordOutcome(unsent.requestId, nothingSent)
        const again = { owner: 'gw-b', deadline: 90_000, controllerEpoch: 7, at: 3_000 }
        expect(await ledger.retryUnsent(unsent.requestId, again)).toBe(true)
        expect(await ledger.retryUnsent(unsent.requestId, again)).toBe(false)
        expect(await ledger.get(unsent.requestId)).toMatchObject({
          state: 'pending', owner: 'gw-b', deadline: 90_000, controllerEpoch: 7, answer: null, outcomeCode: null, updatedAt: 3_000, createdAt: unsent.createdAt
        })
        // a refusal by the remote, or any other outcome, is a use for good
        const refused = pendingRecord()
        await ledger.insertPending(refused)
        await ledger.recordOutcome(refused.requestId, { ...nothingSent, answer: { httpStatus: 409, body: {} }, outcomeCode: 'stale_epoch' })
        expect(await ledger.retryUnsent(refused.requestId, again)).toBe(false)
        const applied = pendingRecord()
        await ledger.insertPending(applied)
        await ledger.recordOutcome(applied.requestId, appliedOutcome())
        expect(await ledger.retryUnsent(applied.requestId, again)).toBe(false)
        expect(await ledger.retryUnsent('no-such-request', again)).toBe(false)
      })

      it('counts reconcile failures', async () => {
        const id = await ambiguous()
        await ledger.noteReconcileFailure(id, 3_000)
        await ledger.noteReconcileFailure(id, 4_000)
        await ledger.noteReconcileFailure('no-such-request', 4_000)
        expect((await ledger.get(id))?.reconcileFailures).toBe(2)
      })

      it('expirePending turns only records past their deadline ambiguous, with a replayable answer', async () => {
        const early = pendingRecord({ campaignId: 'camp-x', deadline: 100 })
        const due = pendingRecord({ deadline: 200 })
        const late = pendingRecord({ deadline: 300 })
        const done = pendingRecord({ deadline: 50 })
        for (const r of [early, due, late, done]) await ledger.insertPending(r)
        await ledger.recordOutcome(done.requestId, appliedOutcome())

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
      })

      it('expireAllPending turns every pending record ambiguous, whatever its deadline', async () => {
        const a = pendingRecord({ deadline: 1e15 })
        const b = pendingRecord({ campaignId: 'camp-2', deadline: 1e15 })
        const c = pendingRecord()
        for (const r of [a, b, c]) await ledger.insertPending(r)
        await ledger.recordOutcome(c.requestId, appliedOutcome())
        expect((await ledger.expireAllPending(5)).sort()).toEqual([a.requestId, b.requestId].sort())
        expect(await ledger.get(b.requestId)).toMatchObject({ state: 'ambiguous', outcomeCode: 'ambiguous_write', updatedAt: 5 })
        expect(await ledger.expireAllPending(6)).toEqual([])
      })

      it('countAmbiguous counts every campaign and drops on resolution', async () => {
        expect(await ledger.countAmbiguous()).toBe(0)
        const a = await ambiguous()
        await ambiguous({ campaignId: 'camp-2' })
        const r = pendingRecord()
        await ledger.insertPending(r)
        await ledger.recordOutcome(r.requestId, { state: 'ambiguous', answer: { httpStatus: 504, body: {} }, outcomeCode: 'ambiguous_write', taskId: null, at: 2 })
        expect(await ledger.countAmbiguous()).toBe(3)
        await ledger.resolve(a, 'not_applied', resolution(), null, resolvedAnswer)
        expect(await ledger.countAmbiguous()).toBe(2)
      })

      it('firstUnresolved is the oldest pending or ambiguous record of the campaign', async () => {
        expect(await ledger.firstUnresolved('camp-1')).toBeUndefined()
        const finished = ['applied', 'rejected', 'not_applied'] as const
        for (const [i, state] of finished.entries()) {
          const r = pendingRecord({ createdAt: 10 + i })
          await ledger.insertPending(r)
          if (state === 'not_applied') {
            await ledger.expireAllPending(20)
            await ledger.resolve(r.requestId, 'not_applied', resolution(), null, resolvedAnswer)
          } else {
            await ledger.recordOutcome(r.requestId, { ...appliedOutcome(), state })
          }
        }
        await ledger.insertPending(pendingRecord({ campaignId: 'camp-2', createdAt: 1 }))
        expect(await ledger.firstUnresolved('camp-1')).toBeUndefined()

        const newer = pendingRecord({ createdAt: 500 })
        const older = pendingRecord({ createdAt: 400, deadline: 1 })
        await ledger.insertPending(newer)
        await ledger.insertPending(older)
        await ledger.expirePending(2)
        expect((await ledger.get(older.requestId))?.state).toBe('ambiguous')
        expect((await ledger.firstUnresolved('camp-1'))?.requestId).toBe(older.requestId)
        await ledger.resolve(older.requestId, 'applied', resolution(), null, resolvedAnswer)
        expect((await ledger.firstUnresolved('camp-1'))?.requestId).toBe(newer.requestId)
      })

      it('listUnresolved: pending and ambiguous records of every campaign, oldest first, by state', async () => {
        expect(await ledger.listUnresolved({ limit: 10 })).toEqual([])
        const a = await ambiguous({ campaignId: 'camp-a', createdAt: 300 })
        const p = pendingRecord({ campaignId: 'camp-b', createdAt: 100, deadline: 1e15 })
        await ledger.insertPending(p)
        const b = await ambiguous({ campaignId: 'camp-c', createdAt: 200 })
        const done = pendingRecord({ createdAt: 50 })
        await ledger.insertPending(done)
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
        for (let i = 0; i < 7; i++) made.push(await ambiguous({ campaignId: `camp-${i % 3}`, createdAt: 1_000 + Math.floor(i / 3) }))
        const seen: string[] = []
        let after: { createdAt: number; requestId: string } | undefined
        for (let page = 0; ; page++) {
          const rows = await ledger.listUnresolved({ after, limit: 3 })
          if (rows.length === 0) break
          seen.push(...rows.map((r) => r.requestId))
          const last = rows.at(-1)!
          after = { createdAt: last.createdAt, requestId: last.requestId }
          // records written while the listing runs sort after what was read: nothing shifts
          if (page === 0) made.push(await ambiguous({ createdAt: 5_000 }))
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
        for (const r of rs) await ledger.insertPending(r)
        await ledger.insertPending(pendingRecord({ campaignId: 'camp-2' }))
        await ledger.recordOutcome(rs[1]!.requestId, appliedOutcome())

        const all = await ledger.listByCampaign('camp-1')
        expect(all.map(r => r.createdAt)).toEqual([300, 200, 100])
        expect(all.every(r => r.campaignId === 'camp-1')).toBe(true)
        expect((await ledger.listByCampaign('camp-1', { state: 'pending' })).map(r => r.createdAt)).toEqual([300, 200])
        expect((await ledger.listByCampaign('camp-1', { state: 'applied' })).map(r => r.requestId)).toEqual([rs[1]!.requestId])
        expect((await ledger.listByCampaign('camp-1', { limit: 2 })).map(r => r.createdAt)).toEqual([300, 200])
        expect(await ledger.listByCampaign('camp-1', { state: 'ambiguous' })).toEqual([])
        expect(await ledger.listByCampaign('camp-none')).toEqual([])
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
          await ledger.insertPending(r)
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

      it('deleteResolvedBefore removes old resolved records in batches, never pending, ambiguous or bound ones', async () => {
        const old = async (state: 'applied' | 'rejected' | 'pending' | 'ambiguous'): Promise<string> => {
          const r = pendingRecord({ deadline: 1, createdAt: 1_000 })
          await ledger.insertPending(r)
          if (state === 'applied') await ledger.recordOutcome(r.requestId, appliedOutcome(2_000))
          if (state === 'rejected') await ledger.recordOutcome(r.requestId, { state: 'rejected', answer: { httpStatus: 409, body: {} }, outcomeCode: 'stale_epoch', taskId: null, at: 2_000 })
          if (state === 'ambiguous') await ledger.expirePending(2_000)
          return r.requestId
        }
        const applied = [await old('applied'), await old('applied'), await old('applied')]
        const rejected = await old('rejected')
        const bound = await old('applied')
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: bound, boundAt: 2_000 })
        const ambiguous = await old('ambiguous')
        const pending = await old('pending')
        const recent = pendingRecord()
        await ledger.insertPending(recent)
        await ledger.recordOutcome(recent.requestId, appliedOutcome(9_000))
        expect(await ledger.countRecords()).toBe(8)
        expect(await ledger.deleteResolvedBefore(5_000, 2)).toBe(2)
        expect(await ledger.deleteResolvedBefore(5_000, 2)).toBe(2)
        expect(await ledger.deleteResolvedBefore(5_000, 2)).toBe(0)
        for (const id of [...applied, rejected]) expect(await ledger.get(id)).toBeUndefined()
        for (const id of [bound, ambiguous, pending, recent.requestId]) expect(await ledger.get(id)).toBeDefined()
        expect(await ledger.countRecords()).toBe(4)
      })
    })

    describe('bound tasks', () => {
      it('one per campaign, overwritten by the next binding', async () => {
        const first = pendingRecord({ operation: 'submit' })
        const second = pendingRecord({ operation: 'submit' })
        await ledger.insertPending(first)
        await ledger.insertPending(second)
        expect(await ledger.getBoundTask('camp-1')).toBeUndefined()
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: first.requestId, boundAt: 10 })
        expect(await ledger.getBoundTask('camp-1')).toEqual({ campaignId: 'camp-1', taskId: 'task-1', requestId: first.requestId, boundAt: 10 })
        await ledger.setBoundTask({ campaignId: 'camp-1', taskId: 'task-2', requestId: second.requestId, boundAt: 20 })
        expect(await ledger.getBoundTask('camp-1')).toEqual({ campaignId: 'camp-1', taskId: 'task-2', requestId: second.requestId, boundAt: 20 })
        expect(await ledger.getBoundTask('camp-2')).toBeUndefined()
      })

      it('clearBoundTask leaves the campaign with none, and others untouched', async () => {
        const r = pendingRecord({ operation: 'submit' })
        await ledger.insertPending(r)
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
