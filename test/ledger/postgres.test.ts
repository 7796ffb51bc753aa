// The PostgreSQL ledger (docs/design.md#ledger): the shared contract on a schema of its own per
// test, its clock the server's shifted onto the test's, then what only PostgreSQL has —
// migrations under an advisory lock (two starting at once; an older database's extra pending
// records turned ambiguous by migration 3, its records' owners by migration 6), a database newer
// than the gateway refused, the server's clock, two replicas racing to insert on one campaign (the
// store serialises them), a campaign lock whose session is killed (the next insert on a ticket
// read under it is moved), the campaign lock across pools (replicas), and a pool that loses every
// connection (pg_terminate_backend) and recovers by itself.
// Skipped, saying so, without TEST_POSTGRES_URL (.ci/run sets it).
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLedger } from '../../src/ledger/index.js'
import { migrate, migrations } from '../../src/ledger/postgres/migrations.js'
import { createPostgresLedger } from '../../src/ledger/postgres/postgres-ledger.js'
import type { InsertResult, Ledger } from '../../src/ledger/types.js'
import { ledgerContract } from './contract.js'
import { freshSchema } from '../helpers/postgres.js'
import { appliedOutcome, insert, pendingRecord } from './records.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'

/** one statement on a connection of its own: behind the ledger's back */
async function sql<R extends pg.QueryResultRow = pg.QueryResultRow> (url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<R>(text, values)).rows
  } finally {
    await c.end()
  }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

const BASE = process.env.TEST_POSTGRES_URL
if (BASE === undefined) console.warn('SKIP the PostgreSQL ledger tests: TEST_POSTGRES_URL is not set')

describe.skipIf(BASE === undefined)('the PostgreSQL ledger', () => {
  const drops: Array<() => Promise<void>> = []
  afterAll(async () => { for (const d of drops) await d() })
  const fresh = async (): Promise<string> => {
    const s = await freshSchema(BASE!)
    drops.push(s.drop)
    return s.url
  }

  // the server's clock, shifted so that it reads the test's: a round trip of slack
  ledgerContract('postgres', async (clock) => {
    const url = await fresh()
    const ledger = await createPostgresLedger({ ambiguousAnswer, url, clockShiftMs: () => clock() - Date.now() })
    return { ledger, exec: async (text) => { await sql(url, text) } }
  }, { clockSlackMs: 1_000 })

  describe('what only PostgreSQL has', () => {
    let url: string
    beforeAll(async () => { url = await fresh() })

    it('createLedger picks it for postgres:// and postgresql://', async () => {
      for (const u of [url, url.replace(/^postgres:/, 'postgresql:')]) {
        const l = await createLedger(u, { ambiguousAnswer })
        expect(l.kind).toBe('postgres')
        // replicas share it: a pending record may be another's, expired only past its deadline
        expect(l.singleWriter).toBe(false)
        expect(await l.ping()).toBe(true)
        await l.close()
      }
    })

    it('two replicas starting together migrate once; a newer database is refused', async () => {
      const u = await fresh()
      const both = await Promise.all([createPostgresLedger({ ambiguousAnswer, url: u }), createPostgresLedger({ ambiguousAnswer, url: u })])
      const r = pendingRecord()
      expect(await insert(both[0], r)).toBe('inserted')
      expect(await insert(both[1], r)).toBe('exists')
      for (const l of both) await l.close()
      const c = new pg.Client({ connectionString: u })
      await c.connect()
      expect((await c.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: migrations.length }])
      await c.query('UPDATE ledger_schema SET version = 99')
      await c.end()
      await expect(createPostgresLedger({ ambiguousAnswer, url: u })).rejects.toThrow(`ledger schema version 99 is newer than this gateway knows (${migrations.length})`)
    })

    it('a database at version 1 gains the unresolved index of version 2, its records kept and listed through it', async () => {
      const u = await fresh()
      const pool = new pg.Pool({ connectionString: u })
      try {
        // a database an older gateway migrated, with an ambiguous record in it
        expect(await migrate(pool, ambiguousAnswer, migrations.slice(0, 1))).toEqual({ from: 0, to: 1 })
        const r = pendingRecord()
        await pool.query(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
          VALUES ($1, 'camp-1', 'alice', 'intervene', $2, '{}', 3, 'x', 1, 1000, 'ambiguous', 1000)`, [r.requestId, 'a'.repeat(64)])
        const l = await createPostgresLedger({ ambiguousAnswer, url: u })
        try {
          expect((await pool.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: migrations.length }])
          expect((await pool.query("SELECT indexdef FROM pg_indexes WHERE indexname = 'mutation_records_unresolved_all'")).rows[0]?.indexdef)
            .toMatch(/\(created_at, request_id COLLATE "C"\) WHERE \(state = ANY/)
          expect((await l.listUnresolved({ limit: 10 })).map((x) => x.requestId)).toEqual([r.requestId])
          // the listing reads the partial index, whichever state it filters on
          await pool.query('SET enable_seqscan = off')
          for (const state of [null, 'ambiguous']) {
            const plan = (await pool.query(`EXPLAIN SELECT request_id FROM mutation_records WHERE state IN ('pending', 'ambiguous') AND ($1::text IS NULL OR state = $1)
              AND (created_at > $2 OR (created_at = $2 AND request_id COLLATE "C" > $3)) ORDER BY created_at, request_id COLLATE "C" LIMIT 10`, [state, -1, ''])).rows.map((x) => x['QUERY PLAN']).join('\n')
            expect(plan, String(state)).toContain('mutation_records_unresolved_all')
          }
        } finally {
          await l.close()
        }
      } finally {
        await pool.end()
      }
    })

    it('a database at version 2 holding two pending records of a campaign: migration 3 keeps the older pending, turns the newer ambiguous, keeps the rest and its order', async () => {
      const u = await fresh()
      const pool = new pg.Pool({ connectionString: u })
      try {
        expect(await migrate(pool, ambiguousAnswer, migrations.slice(0, 2))).toEqual({ from: 0, to: 2 })
        // what a gateway before migration 3 could leave: two pending records of camp-m
        const row = async (id: string, campaign: string, op: string, state: string, at: number, o: { answer?: string; code?: string; task?: string } = {}): Promise<void> => {
          await pool.query(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
            deadline, created_at, state, updated_at, answer, outcome_code, task_id)
            VALUES ($1, $2, 'alice', $3, $4, '{"a":1}', 3, 'gw-old', 99000, $5, $6, $5, $7, $8, $9)`,
          [id, campaign, op, 'c'.repeat(64), at, state, o.answer ?? null, o.code ?? null, o.task ?? null])
        }
        const ambiguousJson = JSON.stringify(ambiguousAnswer('camp-m', 'mig-ambiguous'))
        await row('mig-applied', 'camp-m', 'submit', 'applied', 1_000, { answer: '{"httpStatus":202,"body":{"taskId":"task-m"}}', task: 'task-m' })
        await row('mig-pending-old', 'camp-m', 'intervene', 'pending', 2_000)
        await row('mig-ambiguous', 'camp-m', 'intervene', 'ambiguous', 3_000, { answer: ambiguousJson, code: 'ambiguous_write' })
        await row('mig-pending-new', 'camp-m', 'renew', 'pending', 4_000)
        await row('mig-other', 'camp-o', 'claim', 'pending', 500)
        await pool.query("INSERT INTO bound_tasks (campaign_id, task_id, request_id, bound_at) VALUES ('camp-m', 'task-m', 'mig-applied', 1500)")
        const order = (await pool.query('SELECT request_id, seq FROM mutation_records ORDER BY seq')).rows

        const l = await createPostgresLedger({ ambiguousAnswer, url: u })
        let after
        try {
          expect((await pool.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: migrations.length }])
          expect(await l.get('mig-pending-old')).toMatchObject({ state: 'pending', answer: null, outcomeCode: null, updatedAt: 2_000, prunedAt: null })
          expect(await l.get('mig-pending-new')).toMatchObject({
            state: 'ambiguous', outcomeCode: 'ambiguous_write', answer: ambiguousAnswer('camp-m', 'mig-pending-new'), params: { a: 1 }, owner: 'gw-old', createdAt: 4_000, deadline: 99_000
          })
          expect(await l.get('mig-ambiguous')).toMatchObject({ state: 'ambiguous', answer: JSON.parse(ambiguousJson) })
          expect((await l.get('mig-other'))?.state).toBe('pending')
          // the bound task still resolves to its record, and the reference is still enforced
          expect(await l.getBoundTask('camp-m')).toEqual({ campaignId: 'camp-m', taskId: 'task-m', requestId: 'mig-applied', boundAt: 1_500 })
          expect(await l.get('mig-applied')).toMatchObject({ state: 'applied', taskId: 'task-m' })
          await expect(l.setBoundTask({ campaignId: 'camp-x', taskId: 't', requestId: 'no-such-request', boundAt: 1 })).rejects.toThrow()
          expect((await pool.query('SELECT request_id, seq FROM mutation_records ORDER BY seq')).rows).toEqual(order)
          // generations seeded from the records; the oldest unresolved record blocks, the index holds
          expect(await l.ticket('camp-m')).toEqual({ campaignId: 'camp-m', generation: 4, blocker: await l.get('mig-pending-old') })
          expect((await l.ticket('camp-o')).generation).toBe(1)
          expect(await insert(l, pendingRecord({ campaignId: 'camp-m' }))).toBe('blocked')
          await expect(pool.query(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, owner, deadline, created_at, state, updated_at)
            VALUES ('sneaked', 'camp-m', 'x', 'claim', 'h', '{}', 'x', 1, 1, 'pending', 1)`)).rejects.toMatchObject({ code: '23505', constraint: 'mutation_records_one_pending' })
          // the altered CHECK takes the new operation
          expect(await insert(l, pendingRecord({ campaignId: 'camp-f', operation: 'fence', controllerEpoch: null }))).toBe('inserted')
          after = await l.exportRecords({ limit: 100 })
          // migrating again changes nothing, in place or at the next open
          expect(await migrate(pool, ambiguousAnswer)).toEqual({ from: migrations.length, to: migrations.length })
        } finally {
          await l.close()
        }
        const again = await createPostgresLedger({ ambiguousAnswer, url: u })
        try {
          expect(await again.exportRecords({ limit: 100 })).toEqual(after)
          expect((await again.ticket('camp-m')).generation).toBe(4)
        } finally {
          await again.close()
        }
      } finally {
        await pool.end()
      }
    })

    it('a database at version 5: migration 6 gives a static caller\'s records their owner, a JWT caller\'s none (docs/design.md#request-records)', async () => {
      const u = await fresh()
      const pool = new pg.Pool({ connectionString: u })
      try {
        expect(await migrate(pool, ambiguousAnswer, migrations.slice(0, 5))).toEqual({ from: 0, to: 5 })
        const row = async (id: string, caller: string, state: string, at: number): Promise<void> => {
          await pool.query(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
            deadline, created_at, state, updated_at, answer) VALUES ($1, 'camp-i', $2, 'intervene', $3, '{"a":1}', 3, 'gw-old', 99000, $4, $5, $4, $6)`,
          [id, caller, 'h'.repeat(64), at, state, state === 'ambiguous' ? JSON.stringify(ambiguousAnswer('camp-i', id)) : '{"httpStatus":200,"body":{"accepted":true}}'])
        }
        await row('own-applied', 'alice', 'applied', 1_000)
        await row('own-ambiguous', 'alice', 'ambiguous', 2_000)
        await row('jwt-applied', 'jwt:ml-portal', 'applied', 3_000)
        await row('jwt-upper', 'JWT:ml-portal', 'applied', 4_000)
        const l = await createPostgresLedger({ ambiguousAnswer, url: u })
        try {
          expect((await pool.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: migrations.length }])
          expect(await l.get('own-applied')).toMatchObject({ caller: 'alice', identity: 'static:alice', state: 'applied', params: { a: 1 } })
          expect((await l.get('own-ambiguous'))?.identity).toBe('static:alice')
          expect(await l.get('jwt-applied')).toMatchObject({ caller: 'jwt:ml-portal', identity: null })
          expect((await l.get('jwt-upper'))?.identity).toBeNull()
          // new records carry their writer's identity from then on
          const r = pendingRecord({ campaignId: 'camp-j', caller: 'jwt:ml-portal', identity: 'jwt:https://idp.test#u-1' })
          expect(await insert(l, r)).toBe('inserted')
          expect((await l.get(r.requestId))?.identity).toBe('jwt:https://idp.test#u-1')
        } finally {
          await l.close()
        }
      } finally {
        await pool.end()
      }
    })

    it('the ledger\'s clock is the server\'s: a replica\'s own clock never enters a deadline or an expiry; the test hook shifts it', async () => {
      const plain = await createPostgresLedger({ ambiguousAnswer, url })
      const ahead = await createPostgresLedger({ ambiguousAnswer, url, clockShiftMs: () => 3_600_000 })
      try {
        const t0 = Date.now()
        const server = await plain.now()
        expect(server).toBeGreaterThanOrEqual(t0 - 100)
        expect(server).toBeLessThanOrEqual(Date.now() + 100)
        expect(Math.abs(await ahead.now() - (Date.now() + 3_600_000))).toBeLessThan(1_000)
        // written by the plain replica with the server's clock, whatever createdAt it carries
        const r = pendingRecord({ campaignId: 'camp-clock', waitMs: 1_800_000, createdAt: 5 })
        expect(await insert(plain, r)).toBe('inserted')
        expect(Math.abs((await plain.get(r.requestId))!.deadline - (Date.now() + 1_800_000))).toBeLessThan(1_000)
        // a replica whose own clock runs an hour ahead sweeps: its `at` decides nothing
        expect(await plain.expirePending(Date.now() + 3_600_000)).toEqual([])
        // only the ledger's clock past the deadline expires it (here moved by the hook)
        expect(await ahead.expirePending(1)).toEqual([r.requestId])
        expect(await plain.get(r.requestId)).toMatchObject({ state: 'ambiguous', updatedAt: 1 })
      } finally {
        await plain.close()
        await ahead.close()
      }
    })

    it('two replicas racing on one campaign: exactly one insert per generation, never two pending records', { timeout: 60_000 }, async () => {
      const u = await fresh()
      const replicas = [await createPostgresLedger({ ambiguousAnswer, url: u }), await createPostgresLedger({ ambiguousAnswer, url: u })]
      const watcher = new pg.Client({ connectionString: u })
      await watcher.connect()
      try {
        // sixteen mutations that all read the same ticket, then insert at once from both replicas
        const tickets = await Promise.all(Array.from({ length: 16 }, async (_, i) => await replicas[i % 2]!.ticket('camp-race')))
        expect(new Set(tickets.map((t) => t.generation))).toEqual(new Set([0]))
        const first = await Promise.all(tickets.map(async (t, i) => await replicas[i % 2]!.insertPending(pendingRecord({ campaignId: 'camp-race' }), t)))
        expect(first.filter((x) => x === 'inserted')).toHaveLength(1)
        // every other one found the generation moved on: none could see the ticket's generation again
        expect(first.filter((x) => x === 'moved')).toHaveLength(15)
        const winner = (await replicas[0]!.listByCampaign('camp-race', { state: 'pending' }))
        expect(winner).toHaveLength(1)
        await replicas[0]!.recordOutcome(winner[0]!.requestId, appliedOutcome())

        // then eight workers a replica, each taking a ticket and inserting, the winner finishing at once
        let maxPending = 0
        let watching = true
        const watch = (async () => {
          while (watching) {
            const n = Number((await watcher.query("SELECT count(*) AS n FROM mutation_records WHERE campaign_id = 'camp-race' AND state = 'pending'")).rows[0].n)
            maxPending = Math.max(maxPending, n)
          }
        })()
        const won: Array<{ generation: number; requestId: string }> = [{ generation: 0, requestId: winner[0]!.requestId }]
        const counts: Record<InsertResult, number> = { inserted: 0, exists: 0, moved: 0, blocked: 0 }
        await Promise.all(Array.from({ length: 16 }, async (_, w) => {
          const l = replicas[w % 2]!
          while (won.length < 30) {
            const ticket = await l.ticket('camp-race')
            const r = pendingRecord({ campaignId: 'camp-race' })
            const res = await l.insertPending(r, ticket)
            counts[res]++
            if (res !== 'inserted') continue
            won.push({ generation: ticket.generation, requestId: r.requestId })
            expect(await l.recordOutcome(r.requestId, appliedOutcome())).toBe(true)
          }
        }))
        watching = false
        await watch
        expect(maxPending).toBeLessThanOrEqual(1)
        // each generation was won once, and only winners wrote a record
        expect(won.map((x) => x.generation).sort((a, b) => a - b)).toEqual(won.map((_, i) => i))
        expect((await replicas[1]!.ticket('camp-race')).generation).toBe(won.length)
        const records = await replicas[1]!.listByCampaign('camp-race')
        expect(records.map((r) => r.requestId).sort()).toEqual(won.map((x) => x.requestId).sort())
        expect(records.every((r) => r.state === 'applied')).toBe(true)
        expect(counts.inserted).toBe(won.length - 1)
        expect(counts.moved + counts.blocked).toBeGreaterThan(0)
        expect(counts.exists).toBe(0)
      } finally {
        await watcher.end()
        for (const l of replicas) await l.close()
      }
    })

    it('a campaign lock whose session is killed: the next replica locks, and an insert on a ticket read under the dead lock is moved', async () => {
      const u = await fresh()
      let lost = 0
      const a = await createPostgresLedger({ ambiguousAnswer, url: u, onLockSessionLost: () => { lost++ } })
      const b = await createPostgresLedger({ ambiguousAnswer, url: u })
      try {
        const held = await a.lockCampaign('camp-k', 1000)
        expect(held).toBeDefined()
        expect(await b.lockCampaign('camp-k', 200)).toBeUndefined()
        // replica A read its ticket under the lock and goes on checking its lease...
        const ticketA = await a.ticket('camp-k')
        // ...while the session holding the advisory lock dies (a failover, a pooler, an operator)
        const holders = await sql<{ pid: number }>(BASE!, `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 726011 AND l.objsubid = 2
            AND l.objid::bigint = (hashtext($1)::bigint & 4294967295) AND s.application_name = $2`,
        ['camp-k', new URL(u).searchParams.get('application_name')])
        expect(holders).toHaveLength(1)
        expect(await sql(BASE!, 'SELECT pg_terminate_backend($1) AS ok', [holders[0]!.pid])).toEqual([{ ok: true }])
        // the server released the lock with the session: replica B takes it and inserts
        const taken = await b.lockCampaign('camp-k', 2000)
        expect(taken).toBeDefined()
        const rb = pendingRecord({ campaignId: 'camp-k', owner: 'replica-b' })
        expect(await b.insertPending(rb, await b.ticket('camp-k'))).toBe('inserted')
        // A, unaware, inserts on its ticket: another mutation started since, and the store says so
        const ra = pendingRecord({ campaignId: 'camp-k', owner: 'replica-a' })
        expect(await a.insertPending(ra, ticketA)).toBe('moved')
        await b.recordOutcome(rb.requestId, appliedOutcome())
        expect(await a.insertPending(ra, ticketA)).toBe('moved')
        expect(await a.get(ra.requestId)).toBeUndefined()
        expect((await a.listByCampaign('camp-k')).map((r) => r.requestId)).toEqual([rb.requestId])
        // the lost session was noticed (a metric), never trusted
        for (let i = 0; i < 50 && lost === 0; i++) await sleep(20)
        expect(lost).toBe(1)
        await held!() // releasing a dead session's lock is harmless
        await taken!()
        const next = await a.lockCampaign('camp-k', 1000)
        expect(next).toBeDefined()
        await next!()
      } finally {
        await a.close()
        await b.close()
      }
    })

    it('the campaign lock holds across replicas: the second waits, then times out; release hands it over', async () => {
      const a = await createPostgresLedger({ ambiguousAnswer, url })
      const b = await createPostgresLedger({ ambiguousAnswer, url })
      try {
        const held = await a.lockCampaign('camp-x', 1000)
        expect(held).toBeDefined()
        const t0 = Date.now()
        expect(await b.lockCampaign('camp-x', 300)).toBeUndefined()
        expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
        // another campaign is not blocked
        const other = await b.lockCampaign('camp-y', 300)
        expect(other).toBeDefined()
        await other!()
        const waiting = b.lockCampaign('camp-x', 2000)
        await new Promise((resolve) => setTimeout(resolve, 100))
        await held!()
        const next = await waiting
        expect(next).toBeDefined()
        await next!()
        await held!() // twice is harmless
      } finally {
        await a.close()
        await b.close()
      }
    })

    it('every connection terminated: calls fail, then the pool reconnects; a lock whose session died is released', async () => {
      const a = await createPostgresLedger({ ambiguousAnswer, url })
      const b = await createPostgresLedger({ ambiguousAnswer, url })
      try {
        const r = pendingRecord()
        expect(await insert(a, r)).toBe('inserted')
        const held = await a.lockCampaign('camp-t', 1000)
        const admin = new pg.Client({ connectionString: BASE })
        await admin.connect()
        // every session of this run's pools (the admin's own has another name)
        const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [new URL(url).searchParams.get('application_name')])
        await admin.end()
        expect(killed.rowCount).toBeGreaterThan(0)
        // the lock died with its session: the other replica gets it
        const taken = await b.lockCampaign('camp-t', 2000)
        expect(taken).toBeDefined()
        await taken!()
        await held!() // releasing a dead session's lock is harmless
        // the pool connects anew
        let ok = false
        for (let i = 0; i < 20 && !ok; i++) {
          ok = await a.recordOutcome(r.requestId, appliedOutcome()).then(() => true, () => false)
          if (!ok) await new Promise((resolve) => setTimeout(resolve, 100))
        }
        expect(ok).toBe(true)
        expect((await b.get(r.requestId))?.state).toBe('applied')
      } finally {
        await a.close()
        await b.close()
      }
    })

    it('keeps JSON as written: key order, a NUL escape and large numbers survive', async () => {
      const l: Ledger = await createPostgresLedger({ ambiguousAnswer, url })
      try {
        const params = { z: 1, a: 'x\u0000y', n: 2 ** 52, nested: { b: [1, { c: null }] } }
        const r = pendingRecord({ params })
        expect(await insert(l, r)).toBe('inserted')
        const got = await l.get(r.requestId)
        expect(JSON.stringify(got?.params)).toBe(JSON.stringify(params))
        expect(got?.createdAt).toBe(r.createdAt)
      } finally {
        await l.close()
      }
    })
  })
})
