// `openoperator-gateway ledger …` as an operator runs it (docs/design.md#operating-the-ledger):
// migrate alone (SQLite and PostgreSQL), export the audit trail as JSON lines (params only when
// asked), and back up an SQLite ledger online through the gateway that owns the file — while
// the file itself stays locked to any other process.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { createLedger } from '../../src/ledger/index.js'
import { migrations as pgMigrations } from '../../src/ledger/postgres/migrations.js'
import { migrations as sqliteMigrations } from '../../src/ledger/sqlite/migrations.js'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator } from '../../src/simulator/index.js'
import { appliedOutcome, insert, pendingRecord } from '../ledger/records.js'
import { listenUrlOf, startGatewayChild } from '../helpers/child.js'
import { freshSchema } from '../helpers/postgres.js'
import { call } from '../helpers/http.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'oogw-ledger-cli-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })
const PG = process.env.TEST_POSTGRES_URL

async function ledgerCli (args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'ledger', ...args], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { code, out, err }
}

describe('the ledger command', () => {
  it('migrate: creates an SQLite ledger at the latest schema, and refuses an unknown command', async () => {
    const file = join(dir, 'migrated.db')
    const r = await ledgerCli(['migrate'], { GATEWAY_LEDGER_URL: `sqlite:${file}` })
    expect(r.code, r.err).toBe(0)
    expect(r.err).toContain('migrations applied')
    const db = new Database(file, { readonly: true })
    expect(db.pragma('user_version', { simple: true })).toBe(sqliteMigrations.length)
    db.close()
    expect((await ledgerCli(['frobnicate'], {})).code).toBe(2)
  }, 30_000)

  it.skipIf(PG === undefined)('migrate: brings a PostgreSQL database to the latest schema, password never printed', async () => {
    const { url, drop } = await freshSchema(PG!)
    try {
      const r = await ledgerCli(['migrate'], { GATEWAY_LEDGER_URL: url })
      expect(r.code, r.err).toBe(0)
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      expect((await c.query('SELECT version FROM ledger_schema')).rows).toEqual([{ version: pgMigrations.length }])
      await c.end()
      const bad = await ledgerCli(['migrate'], { GATEWAY_LEDGER_URL: 'postgres://ops:hunter2-secret@127.0.0.1:1/x' })
      expect(bad.code).toBe(1)
      expect(bad.err).toContain('postgres://ops:***@127.0.0.1:1/x')
      expect(bad.err + bad.out).not.toContain('hunter2-secret')
    } finally {
      await drop()
    }
  }, 30_000)

  it('export: every record as a JSON line, oldest first, by campaign and time; params only with --with-params', async () => {
    const file = join(dir, 'export.db')
    const ledger = await createLedger(`sqlite:${file}`, { ambiguousAnswer })
    const ids: string[] = []
    for (let i = 0; i < 25; i++) {
      const r = pendingRecord({ campaignId: i % 5 === 0 ? 'camp-x' : 'camp-y', createdAt: Date.parse('2026-11-01T00:00:00Z') + i * 60_000 })
      // each finished before the next: a campaign holds one pending record at most
      expect(await insert(ledger, r)).toBe('inserted')
      await ledger.recordOutcome(r.requestId, appliedOutcome(r.createdAt + 1))
      ids.push(r.requestId)
    }
    await ledger.close()
    const env = { GATEWAY_LEDGER_URL: `sqlite:${file}` }
    const all = await ledgerCli(['export'], env)
    expect(all.code, all.err).toBe(0)
    const lines = all.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.map((l) => l.requestId)).toEqual(ids)
    expect(lines[0]).toMatchObject({ campaignId: 'camp-x', caller: 'alice', operation: 'intervene', state: 'applied', createdAt: '2026-11-01T00:00:00.000Z' })
    expect(lines[0]).not.toHaveProperty('params')
    expect(all.err).toContain('exported 25 records')
    const some = await ledgerCli(['export', '--campaign', 'camp-x', '--since', '2026-11-01T00:06:00Z', '--with-params'], env)
    const picked = some.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(picked.map((l) => l.requestId)).toEqual([ids[10], ids[15], ids[20]])
    expect(picked[0]!.params).toEqual(pendingRecord().params)
    expect((await ledgerCli(['export', '--since', 'yesterday'], env)).code).toBe(1)
  }, 30_000)

  it('backup: online through the running gateway that owns the file; the file itself stays locked', async () => {
    const secret = `sim-${randomBytes(12).toString('hex')}`
    const sim = await startSimulator({ profile: 'campaign-control', secret })
    try {
      const file = join(dir, 'live.db')
      const admin = `tok-${randomBytes(12).toString('hex')}`
      const gwChild = startGatewayChild({
        OPENOPERATOR_URL: sim.url,
        SPYNEL_AGENT_ZERO_API_KEY: secret,
        GATEWAY_CALLERS: JSON.stringify([{ name: 'ops', tokenSha256: sha256Hex(admin), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-ops' }]),
        GATEWAY_CONTROL_ENABLED: 'true',
        GATEWAY_LEDGER_URL: `sqlite:${file}`,
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0'
      })
      const url = await listenUrlOf(gwChild)
      expect((await call(`${url}/v1/campaigns/camp-b/control/claim`, { method: 'POST', token: admin, body: { requestId: 'claim-backup-1', ttlSeconds: 600 } })).status).toBe(200)
      const out = join(dir, 'copy.db')
      const direct = await ledgerCli(['backup', out], { GATEWAY_LEDGER_URL: `sqlite:${file}` })
      expect(direct.code).toBe(1)
      expect(direct.err).toContain('in use by another gateway process')
      // the admin's token in GATEWAY_TOKEN, as for every other command (GATEWAY_ADMIN_TOKEN: test/unit/ledger-backup-token.test.ts)
      const live = await ledgerCli(['backup', out], { GATEWAY_LEDGER_URL: `sqlite:${file}`, GATEWAY_URL: url, GATEWAY_TOKEN: admin })
      expect(live.code, live.err).toBe(0)
      expect(live.err).not.toContain('warning')
      expect(existsSync(out)).toBe(true)
      const copy = new Database(out, { readonly: true })
      expect(copy.prepare('SELECT request_id, state FROM mutation_records').all()).toEqual([{ request_id: 'claim-backup-1', state: 'applied' }])
      copy.close()
      const refused = await ledgerCli(['backup', join(dir, 'nope.db')], { GATEWAY_LEDGER_URL: `sqlite:${file}`, GATEWAY_URL: url, GATEWAY_TOKEN: 'wrong' })
      expect(refused.code).toBe(1)
      expect(refused.err).toContain('unauthorized')
      gwChild.child.kill('SIGTERM')
      expect(await gwChild.exited).toBe(0)
    } finally {
      await sim.close()
    }
  }, 60_000)
})
