// The PostgreSQL ledger (docs/design.md#ledger): the shared contract on a schema of its own per
// run, then what only PostgreSQL has — migrations under an advisory lock (two starting at once),
// a database newer than the gateway refused, the campaign lock across pools (replicas), and a
// pool that loses every connection (pg_terminate_backend) and recovers by itself.
// Skipped, saying so, without TEST_POSTGRES_URL (.ci/run sets it).
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLedger } from '../../src/ledger/index.js'
import { migrate, migrations } from '../../src/ledger/postgres/migrations.js'
import { createPostgresLedger } from '../../src/ledger/postgres/postgres-ledger.js'
import type { Ledger } from '../../src/ledger/types.js'
import { ledgerContract } from './contract.js'
import { freshSchema } from '../helpers/postgres.js'
import { appliedOutcome, pendingRecord } from './records.js'

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

  ledgerContract('postgres', async () => await createPostgresLedger({ url: await fresh() }))

  describe('what only PostgreSQL has', () => {
    let url: string
    beforeAll(async () => { url = await fresh() })

    it('createLedger picks it for postgres:// and postgresql://', async () => {
      for (const u of [url, url.replace(/^postgres:/, 'postgresql:')]) {
        const l = await createLedger(u)
        expect(l.kind).toBe('postgres')
        expect(await l.ping()).toBe(true)
        await l.close()
      }
    })

    it('two replicas starting together migrate once; a newer database is refused', async () => {
      const u = await fresh()
      const both = await Promise.all([createPostgresLedger({ url: u }), createPostgresLedger({ url: u })])
      const r = pendingRecord()
      expect(await both[0].insertPending(r)).toBe('inserted')
      expect(await both[1].insertPending(r)).toBe('exists')
      for (const l of both) await l.close()
      const c = new pg.Client({ connectionString: u })
      await c.connect()
      expect((await c.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: migrations.length }])
      await c.query('UPDATE ledger_schema SET version = 99')
      await c.end()
      await expect(createPostgresLedger({ url: u })).rejects.toThrow(`ledger schema version 99 is newer than this gateway knows (${migrations.length})`)
    })

    it('a database at version 1 gains the unresolved index of version 2, its records kept and listed through it', async () => {
      const u = await fresh()
      const pool = new pg.Pool({ connectionString: u })
      try {
        // a database an older gateway migrated, with an ambiguous record in it
        expect(await migrate(pool, migrations.slice(0, 1))).toEqual({ from: 0, to: 1 })
        const r = pendingRecord({ deadline: 1 })
        await pool.query(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
          VALUES ($1, 'camp-1', 'alice', 'intervene', $2, '{}', 3, 'x', 1, 1000, 'ambiguous', 1000)`, [r.requestId, 'a'.repeat(64)])
        const l = await createPostgresLedger({ url: u })
        try {
          expect((await pool.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: 2 }])
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

    it('the campaign lock holds across replicas: the second waits, then times out; release hands it over', async () => {
      const a = await createPostgresLedger({ url })
      const b = await createPostgresLedger({ url })
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
      const a = await createPostgresLedger({ url })
      const b = await createPostgresLedger({ url })
      try {
        const r = pendingRecord()
        await a.insertPending(r)
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
      const l: Ledger = await createPostgresLedger({ url })
      try {
        const params = { z: 1, a: 'x\u0000y', n: 2 ** 52, nested: { b: [1, { c: null }] } }
        const r = pendingRecord({ params })
        await l.insertPending(r)
        const got = await l.get(r.requestId)
        expect(JSON.stringify(got?.params)).toBe(JSON.stringify(params))
        expect(got?.createdAt).toBe(r.createdAt)
      } finally {
        await l.close()
      }
    })
  })
})
