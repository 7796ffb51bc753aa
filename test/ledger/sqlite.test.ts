// The SQLite ledger (docs/design.md#ledger): the shared contract on a temp file and in memory,
// then what only SQLite has — the pragmas, migrations (an older file's extra pending records
// turned ambiguous by migration 3, its records' owners by migration 6), durability across reopen
// and a killed process, one owner per file across two processes, and the size of a large file.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { LedgerLockedError, createLedger, createSqliteLedger, sqliteCommitStatsOf, sqliteDatabaseOf } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { migrate, migrations } from '../../src/ledger/sqlite/migrations.js'
import { ledgerContract, type LedgerHarness } from './contract.js'
import { appliedOutcome, insert, pendingRecord } from './records.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'
import { priorUse } from '../../src/control/pipeline.js'
import { requestView } from '../../src/control/views.js'
import type { Caller } from '../../schemas/callers.js'

const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })
const tempPath = (): string => join(dir, `${randomBytes(6).toString('hex')}.db`)
const lockedMessage = (path: string): string => `ledger file ${path} is in use by another gateway process (SQLite allows one owner)`

/** SQL behind the ledger's back goes straight to its database */
const harness = (ledger: Ledger): LedgerHarness => ({ ledger, exec: async (sql) => { sqliteDatabaseOf(ledger)!.exec(sql) } })
// one process owns the file, so the ledger's clock is the one it is given: exact
ledgerContract('sqlite file', async (now) => harness(createSqliteLedger({ ambiguousAnswer, path: tempPath(), now })), { clockSlackMs: 0 })
ledgerContract('sqlite in memory', async (now) => harness(createSqliteLedger({ ambiguousAnswer, path: ':memory:', now })), { clockSlackMs: 0 })
ledgerContract('sqlite in memory (createLedger)', async (now) => harness(await createLedger('sqlite::memory:', { ambiguousAnswer, now })), { clockSlackMs: 0 })

describe('createLedger', () => {
  it('opens sqlite:<path>, creating the directory', async () => {
    const path = join(dir, 'nested', 'deeper', 'ledger.db')
    const ledger = await createLedger(`sqlite:${path}`, { ambiguousAnswer })
    expect(ledger.kind).toBe('sqlite')
    // one process owns the file: the control plane may expire every pending record at start
    expect(ledger.singleWriter).toBe(true)
    expect(await ledger.ping()).toBe(true)
    await ledger.close()
    expect(existsSync(path)).toBe(true)
  })

  it('writes the ambiguous answer it is handed, never one of its own: the control plane renders it', async () => {
    const handed = (campaignId: string, requestId: string) => ({ httpStatus: 599, body: { handed: [campaignId, requestId] } })
    let time = 1_000
    const ledger = await createLedger('sqlite::memory:', { ambiguousAnswer: handed, now: () => time })
    const r = pendingRecord({ campaignId: 'camp-h', waitMs: 10 })
    expect(await insert(ledger, r)).toBe('inserted')
    time = 2_000
    expect(await ledger.expirePending(2_000)).toEqual([r.requestId])
    expect((await ledger.get(r.requestId))?.answer).toEqual({ httpStatus: 599, body: { handed: ['camp-h', r.requestId] } })
    await ledger.close()
  })

  it('refuses an unknown scheme, and an unreachable PostgreSQL, without echoing the password', async () => {
    const pgErr = await createLedger('postgres://u:secret-pw@127.0.0.1:1/ledger', { ambiguousAnswer }).then(() => undefined, (e: unknown) => e as Error)
    expect(pgErr?.message).toMatch(/the PostgreSQL ledger at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/ledger could not be opened/)
    expect(pgErr?.message).not.toContain('secret-pw')
    const err = await createLedger('mysql://u:secret-pw@db/x', { ambiguousAnswer }).then(() => undefined, (e: unknown) => e as Error)
    expect(err?.message).toMatch(/unsupported ledger URL scheme "mysql"/)
    expect(err?.message).not.toContain('secret-pw')
  })
})

describe('sqlite file', () => {
  it('runs in WAL mode with synchronous=FULL, foreign keys and an exclusive lock', async () => {
    const path = tempPath()
    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const db = sqliteDatabaseOf(ledger)!
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('synchronous', { simple: true })).toBe(2) // FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(db.pragma('locking_mode', { simple: true })).toBe('exclusive')
    await ledger.close()
    const ro = new Database(path, { readonly: true })
    expect(ro.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(ro.pragma('user_version', { simple: true })).toBe(migrations.length)
    ro.close()
  })

  it('migrates a file at user_version 0, and only once', async () => {
    const path = tempPath()
    const raw = new Database(path)
    expect(raw.pragma('user_version', { simple: true })).toBe(0)
    raw.close()
    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const db = sqliteDatabaseOf(ledger)!
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length)
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()
    expect(tables).toEqual(['bound_tasks', 'campaign_generations', 'campaign_leases', 'controller_bindings', 'front_sends', 'mutation_records', 'remote_clock'])
    expect(migrate(db, ambiguousAnswer)).toEqual({ from: migrations.length, to: migrations.length })
    await ledger.close()
  })

  it('a file at version 1 gains the unresolved index of version 2, its records kept and listed through it', async () => {
    const path = tempPath()
    const old = new Database(path)
    // a file an older gateway migrated, with an ambiguous record in it
    expect(migrate(old, ambiguousAnswer, migrations.slice(0, 1))).toEqual({ from: 0, to: 1 })
    const r = pendingRecord()
    old.prepare(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner, deadline, created_at, state, updated_at)
      VALUES (?, 'camp-1', 'alice', 'intervene', ?, '{}', 3, 'x', 1, 1000, 'ambiguous', 1000)`).run(r.requestId, 'a'.repeat(64))
    old.close()
    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const db = sqliteDatabaseOf(ledger)!
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length)
    expect((await ledger.listUnresolved({ limit: 10 })).map((x) => x.requestId)).toEqual([r.requestId])
    // the listing reads the partial index, whichever state it filters on
    for (const state of [null, 'ambiguous']) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT request_id FROM mutation_records
        WHERE state IN ('pending', 'ambiguous') AND (@state IS NULL OR state = @state)
          AND (created_at, request_id) > (@afterAt, @afterId)
        ORDER BY created_at, request_id LIMIT 10`).all({ state, afterAt: -1, afterId: '' }) as Array<{ detail: string }>
      expect(plan.map((p) => p.detail).join('\n'), String(state)).toMatch(/USING (COVERING )?INDEX mutation_records_unresolved_all/)
    }
    await ledger.close()
  })

  it('a file at version 2 holding two pending records of a campaign: migration 3 keeps the older pending, turns the newer ambiguous, keeps the rest and its order', async () => {
    const path = tempPath()
    const old = new Database(path)
    expect(migrate(old, ambiguousAnswer, migrations.slice(0, 2))).toEqual({ from: 0, to: 2 })
    // what a gateway before migration 3 could leave: two pending records of camp-m
    const put = old.prepare(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
      deadline, created_at, state, updated_at, answer, outcome_code, task_id)
      VALUES (@id, @campaign, 'alice', @op, @hash, '{"a":1}', 3, 'gw-old', 99000, @at, @state, @at, @answer, @code, @task)`)
    const row = (id: string, campaign: string, op: string, state: string, at: number, o: { answer?: string; code?: string; task?: string } = {}): void => {
      put.run({ id, campaign, op, state, at, hash: 'c'.repeat(64), answer: o.answer ?? null, code: o.code ?? null, task: o.task ?? null })
    }
    const ambiguousJson = JSON.stringify(ambiguousAnswer('camp-m', 'mig-ambiguous'))
    row('mig-applied', 'camp-m', 'submit', 'applied', 1_000, { answer: '{"httpStatus":202,"body":{"taskId":"task-m"}}', task: 'task-m' })
    row('mig-pending-old', 'camp-m', 'intervene', 'pending', 2_000)
    row('mig-ambiguous', 'camp-m', 'intervene', 'ambiguous', 3_000, { answer: ambiguousJson, code: 'ambiguous_write' })
    row('mig-pending-new', 'camp-m', 'renew', 'pending', 4_000)
    row('mig-other', 'camp-o', 'claim', 'pending', 500)
    old.prepare("INSERT INTO bound_tasks (campaign_id, task_id, request_id, bound_at) VALUES ('camp-m', 'task-m', 'mig-applied', 1500)").run()
    const order = old.prepare('SELECT request_id FROM mutation_records ORDER BY rowid').pluck().all()
    old.close()

    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const db = sqliteDatabaseOf(ledger)!
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length)
    expect(await ledger.get('mig-pending-old')).toMatchObject({ state: 'pending', answer: null, outcomeCode: null, updatedAt: 2_000, prunedAt: null })
    expect(await ledger.get('mig-pending-new')).toMatchObject({
      state: 'ambiguous', outcomeCode: 'ambiguous_write', answer: ambiguousAnswer('camp-m', 'mig-pending-new'), params: { a: 1 }, owner: 'gw-old', createdAt: 4_000, deadline: 99_000
    })
    expect(await ledger.get('mig-ambiguous')).toMatchObject({ state: 'ambiguous', answer: JSON.parse(ambiguousJson) })
    // the only pending record of its campaign stays pending
    expect((await ledger.get('mig-other'))?.state).toBe('pending')
    // the bound task still resolves to its record, and the reference is still enforced
    expect(await ledger.getBoundTask('camp-m')).toEqual({ campaignId: 'camp-m', taskId: 'task-m', requestId: 'mig-applied', boundAt: 1_500 })
    expect(await ledger.get('mig-applied')).toMatchObject({ state: 'applied', taskId: 'task-m' })
    await expect(ledger.setBoundTask({ campaignId: 'camp-x', taskId: 't', requestId: 'no-such-request', boundAt: 1 })).rejects.toThrow()
    expect(db.prepare('SELECT request_id FROM mutation_records ORDER BY rowid').pluck().all()).toEqual(order)
    // generations seeded from the records; the oldest unresolved record blocks, the index holds
    expect(await ledger.ticket('camp-m')).toEqual({ campaignId: 'camp-m', generation: 4, blocker: await ledger.get('mig-pending-old') })
    expect((await ledger.ticket('camp-o')).generation).toBe(1)
    expect(await insert(ledger, pendingRecord({ campaignId: 'camp-m' }))).toBe('blocked')
    expect(() => db.prepare(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, owner, deadline, created_at, state, updated_at)
      VALUES ('sneaked', 'camp-m', 'x', 'claim', 'h', '{}', 'x', 1, 1, 'pending', 1)`).run()).toThrow(/UNIQUE/)
    // the rebuilt table takes the new operation
    expect(await insert(ledger, pendingRecord({ campaignId: 'camp-f', operation: 'fence', controllerEpoch: null }))).toBe('inserted')
    const after = await ledger.exportRecords({ limit: 100 })

    // migrating again changes nothing, in place or at the next open
    expect(migrate(db, ambiguousAnswer)).toEqual({ from: migrations.length, to: migrations.length })
    await ledger.close()
    const again = createSqliteLedger({ ambiguousAnswer, path })
    expect(await again.exportRecords({ limit: 100 })).toEqual(after)
    expect((await again.ticket('camp-m')).generation).toBe(4)
    await again.close()
  })

  it('a file at version 5: migration 6 gives a static caller\'s records their owner, a JWT caller\'s none (docs/design.md#request-records)', async () => {
    const path = tempPath()
    const old = new Database(path)
    expect(migrate(old, ambiguousAnswer, migrations.slice(0, 5))).toEqual({ from: 0, to: 5 })
    const put = old.prepare(`INSERT INTO mutation_records (request_id, campaign_id, caller, operation, params_hash, params, controller_epoch, owner,
      deadline, created_at, state, updated_at, answer)
      VALUES (@id, 'camp-i', @caller, 'intervene', @hash, '{"a":1}', 3, 'gw-old', 99000, @at, @state, @at, @answer)`)
    const answer = '{"httpStatus":200,"body":{"accepted":true}}'
    put.run({ id: 'own-applied', caller: 'alice', hash: 'h'.repeat(64), at: 1_000, state: 'applied', answer })
    put.run({ id: 'own-ambiguous', caller: 'alice', hash: 'h'.repeat(64), at: 2_000, state: 'ambiguous', answer: JSON.stringify(ambiguousAnswer('camp-i', 'own-ambiguous')) })
    put.run({ id: 'jwt-applied', caller: 'jwt:ml-portal', hash: 'h'.repeat(64), at: 3_000, state: 'applied', answer })
    put.run({ id: 'jwt-upper', caller: 'JWT:ml-portal', hash: 'h'.repeat(64), at: 4_000, state: 'applied', answer })
    old.close()

    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    expect(sqliteDatabaseOf(ledger)!.pragma('user_version', { simple: true })).toBe(migrations.length)
    expect(await ledger.get('own-applied')).toMatchObject({ caller: 'alice', identity: 'static:alice', state: 'applied', params: { a: 1 } })
    expect((await ledger.get('own-ambiguous'))?.identity).toBe('static:alice')
    expect(await ledger.get('jwt-applied')).toMatchObject({ caller: 'jwt:ml-portal', identity: null })
    expect((await ledger.get('jwt-upper'))?.identity).toBeNull()
    // what that means to the control plane: alice's record is still hers to replay and see whole;
    // the JWT caller's has no owner any caller can be (docs/design.md#request-records)
    const alice: Caller = { name: 'alice', tokenSha256: 'a'.repeat(64), scopes: ['read', 'control'], controllerId: 'ctl-a' }
    const portal: Caller = { name: 'jwt:ml-portal', identity: 'jwt:https://idp.test#u-1', tokenSha256: 'b'.repeat(64), scopes: ['read', 'control'], controllerId: 'ctl-p' }
    expect(priorUse(await ledger.get('own-applied'), alice, 'h'.repeat(64))).toEqual({ httpStatus: 200, body: { accepted: true }, replayed: true })
    expect(requestView((await ledger.get('own-applied'))!, alice).params).toEqual({ a: 1 })
    const unowned = await ledger.get('jwt-applied')
    expect(() => priorUse(unowned, portal, 'h'.repeat(64))).toThrow(expect.objectContaining({ code: 'idempotency_key_conflict' }))
    expect(requestView(unowned!, portal).params).toBeUndefined()
    await ledger.close()
  })

  it('the ledger\'s clock is this process\'s unless given', async () => {
    const ledger = createSqliteLedger({ ambiguousAnswer, path: ':memory:' })
    const t0 = Date.now()
    const now = await ledger.now()
    expect(now).toBeGreaterThanOrEqual(t0)
    expect(now).toBeLessThanOrEqual(Date.now())
    await ledger.close()
  })

  it('applies each migration in its own transaction and refuses a newer file', () => {
    const db = new Database(':memory:')
    expect(migrate(db, ambiguousAnswer, ['CREATE TABLE a (x INTEGER)'])).toEqual({ from: 0, to: 1 })
    expect(() => migrate(db, ambiguousAnswer, ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (x INTEGER); SELECT nonsense FROM nowhere'])).toThrow()
    expect(db.pragma('user_version', { simple: true })).toBe(1)
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'b'").pluck().get()).toBe(0)
    expect(() => migrate(db, ambiguousAnswer, [])).toThrow('ledger schema version 1 is newer than this gateway knows (0)')
    db.close()
  })

  it('keeps records, leases and bound tasks across close and reopen', async () => {
    const path = tempPath()
    const r = pendingRecord({ operation: 'submit' })
    const first = createSqliteLedger({ ambiguousAnswer, path })
    expect(await insert(first, r)).toBe('inserted')
    await first.recordOutcome(r.requestId, appliedOutcome(2_000, 'task-1'))
    await first.putLease('camp-1', { controllerId: 'alice', epoch: 3, expiresAt: 99 }, 5)
    await first.setBoundTask({ campaignId: 'camp-1', taskId: 'task-1', requestId: r.requestId, boundAt: 6 })
    const before = await first.get(r.requestId)
    await first.close()

    const second = createSqliteLedger({ ambiguousAnswer, path })
    expect(await second.get(r.requestId)).toEqual(before)
    expect(await second.getLease('camp-1')).toMatchObject({ known: true, maxEpochSeen: 3 })
    expect(await second.getBoundTask('camp-1')).toMatchObject({ taskId: 'task-1' })
    await second.close()
  })

  it('writes of different campaigns in flight at once share one durable commit; those of one campaign still serialise on the ticket', async () => {
    const ledger = createSqliteLedger({ ambiguousAnswer, path: tempPath() })
    const records = Array.from({ length: 16 }, (_, i) => pendingRecord({ campaignId: `camp-g${i}` }))
    const before = sqliteCommitStatsOf(ledger)!
    expect(await Promise.all(records.map(async (r) => await insert(ledger, r)))).toEqual(Array(16).fill('inserted'))
    const after = sqliteCommitStatsOf(ledger)!
    expect({ batches: after.batches - before.batches, writes: after.writes - before.writes }).toEqual({ batches: 1, writes: 16 })
    // two inserts on one ticket of one campaign queued in the same batch: the second is moved
    const ticket = await ledger.ticket('camp-same')
    const [a, b] = [pendingRecord({ campaignId: 'camp-same' }), pendingRecord({ campaignId: 'camp-same' })]
    expect(await Promise.all([ledger.insertPending(a, ticket), ledger.insertPending(b, ticket)])).toEqual(['inserted', 'moved'])
    expect((await ledger.listByCampaign('camp-same')).map((r) => r.requestId)).toEqual([a.requestId])
    await ledger.close()
  })

  it('a second handle in the same process fails fast with LedgerLockedError', async () => {
    const path = tempPath()
    const owner = createSqliteLedger({ ambiguousAnswer, path })
    const t0 = Date.now()
    expect(() => createSqliteLedger({ ambiguousAnswer, path })).toThrow(LedgerLockedError)
    expect(() => createSqliteLedger({ ambiguousAnswer, path })).toThrow(lockedMessage(path))
    expect(Date.now() - t0).toBeLessThan(1_000)
    await owner.close()
    const next = createSqliteLedger({ ambiguousAnswer, path })
    await next.close()
  })
})

const CHILD = fileURLToPath(new URL('./fixtures/ledger-child.ts', import.meta.url))

function child (...args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: 'pipe' })
}

/** resolves once stdout shows `text`; listens without consuming, so the child can still write */
async function untilOutput (p: ChildProcessWithoutNullStreams, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let out = ''
    const onData = (chunk: Buffer): void => {
      out += String(chunk)
      if (!out.includes(text)) return
      p.stdout.off('data', onData)
      p.off('exit', onExit)
      resolve()
    }
    const onExit = (): void => { reject(new Error(`child ended without printing ${text}: ${out}`)) }
    p.stdout.on('data', onData)
    p.once('exit', onExit)
  })
}

async function finished (p: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  p.stdout.on('data', c => { stdout += String(c) })
  p.stderr.on('data', c => { stderr += String(c) })
  const [code] = await once(p, 'exit') as [number | null]
  return { code, stdout, stderr }
}

describe('sqlite file across processes', { tags: ['slow'] }, () => {
  it('one process owns the file: a second fails with a clear error until the first closes', async () => {
    const path = tempPath()
    // an existing, migrated file: the holder writes nothing, so the lock comes from the open alone
    await createSqliteLedger({ ambiguousAnswer, path }).close()
    const holder = child('hold', path)
    await untilOutput(holder, 'ready')

    const other = await finished(child('open', path))
    expect(other.code).toBe(3)
    expect(other.stderr).toContain(`locked: ${lockedMessage(path)}`)
    expect(() => createSqliteLedger({ ambiguousAnswer, path })).toThrow(lockedMessage(path))

    const done = finished(holder)
    holder.stdin.end('close\n')
    expect(await done).toMatchObject({ code: 0, stdout: expect.stringContaining('closed') })

    const after = await finished(child('open', path))
    expect(after.code).toBe(0)
    expect(after.stdout).toContain('opened')
    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    await ledger.close()
  })

  it('what a killed process wrote before its method resolved is there after restart', async () => {
    const path = tempPath()
    const writer = child('write', path, '50')
    await untilOutput(writer, 'written')
    writer.kill('SIGKILL')
    await once(writer, 'exit')

    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const records = await ledger.exportRecords({ limit: 100 })
    expect(records).toHaveLength(50)
    expect(records.filter(r => r.state === 'applied')).toHaveLength(25)
    expect(await ledger.expireAllPending(1)).toHaveLength(25)
    await ledger.close()
  })
})

describe('sqlite file size', () => {
  // each record takes its campaign's ticket first, as the pipeline does: about twice the statements of a bare insert
  it('100,000 records of realistic size stay well below 200 MB', { timeout: 120_000, tags: ['slow'] }, async () => {
    const path = tempPath()
    const ledger = createSqliteLedger({ ambiguousAnswer, path })
    const db = sqliteDatabaseOf(ledger)!
    // the random part of every id and hash drawn at once: 200,000 small draws took 2 s of the test
    const random = randomBytes(100_000 * 40)
    const t0 = Date.now()
    for (let batch = 0; batch < 100; batch++) {
      db.exec('BEGIN') // one commit per 1,000 records: the size, not the fsync rate, is measured here
      for (let j = 0; j < 1_000; j++) {
        const i = batch * 1_000 + j
        const r = pendingRecord({
          requestId: `req-${i.toString(36)}-${random.toString('hex', i * 40, i * 40 + 8)}`,
          campaignId: `campaign-${i % 100}`,
          caller: 'controller-team-a',
          paramsHash: random.toString('hex', i * 40 + 8, i * 40 + 40),
          params: { intervention: { kind: 'adjust_learning_rate', value: 0.0003, step: i, reason: `plateau after warmup on shard ${i % 7}; lowering the rate for stability`, tags: ['auto', 'lr'] } },
          owner: 'gateway-7f3c9a2b',
          createdAt: 1_700_000_000_000 + i,
          waitMs: 90_000
        })
        await insert(ledger, r)
        await ledger.recordOutcome(r.requestId, {
          state: 'applied',
          answer: { httpStatus: 200, body: { requestId: r.requestId, campaignId: r.campaignId, accepted: true, lease: { controllerId: 'controller-team-a', epoch: 12, expiresAt: 1_700_000_600 } } },
          outcomeCode: null,
          taskId: null,
          at: r.createdAt + 150
        })
      }
      db.exec('COMMIT')
    }
    const sample = (await ledger.listByCampaign('campaign-3', { limit: 1 }))[0]!
    expect(JSON.stringify(sample.params).length).toBeGreaterThan(150)
    expect(JSON.stringify(sample.answer).length).toBeGreaterThan(150)
    expect(await ledger.listByCampaign('campaign-42')).toHaveLength(1_000)
    await ledger.close()
    const wal = `${path}-wal`
    const size = statSync(path).size + (existsSync(wal) ? statSync(wal).size : 0)
    console.log(`ledger file size after 100000 records: ${size} bytes (${Date.now() - t0} ms to write)`)
    expect(size).toBeLessThan(200 * 1024 * 1024)
  })
})
