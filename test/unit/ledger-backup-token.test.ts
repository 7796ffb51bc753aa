// `openoperator-gateway ledger backup <file>` through a running gateway reads its token where every
// other command and the runbook do, GATEWAY_TOKEN; GATEWAY_ADMIN_TOKEN, its name before, still
// works alone, with a warning on stderr, and is refused beside a different GATEWAY_TOKEN. A
// loopback server stands in for the gateway's GET /v1/admin/ledger/backup and records the bearer
// token each request carried (test/process/ledger-cli.test.ts runs the command against a real one).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLedgerCommand } from '../../src/cli/ledger-command.js'

const COPY = 'SQLite format 3\u0000 the copy'
const ADMIN = 'tok-admin-0123456789'
const OLD = 'tok-old-name-0123456789'
let server: Server
let url: string
const seen: string[] = []
const dir = mkdtempSync(join(tmpdir(), 'oogw-backup-token-'))

beforeAll(async () => {
  server = createServer((req, res) => {
    const auth = req.headers.authorization ?? ''
    seen.push(auth)
    if (req.url !== '/v1/admin/ledger/backup' || ![`Bearer ${ADMIN}`, `Bearer ${OLD}`].includes(auth)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"unauthorized","message":"no","retryable":false}}')
      return
    }
    res.writeHead(200, { 'content-type': 'application/vnd.sqlite3' }).end(COPY)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

let n = 0
/** the command as the bin runs it, its stderr lines kept; the file it was asked to write */
async function backup (env: Record<string, string>): Promise<{ code: number, err: string[], file: string, sent: string[] }> {
  const file = join(dir, `copy-${++n}.db`)
  const err: string[] = []
  const before = seen.length
  const code = await runLedgerCommand(['backup', file], { GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}`, GATEWAY_URL: url, ...env }, { out: () => true, err: (l) => { err.push(l) } })
  return { code, err, file, sent: seen.slice(before) }
}

describe('ledger backup through a running gateway: the token', () => {
  it('is GATEWAY_TOKEN, as for every other command: sent as the bearer token, no warning', async () => {
    const r = await backup({ GATEWAY_TOKEN: ADMIN })
    expect(r).toMatchObject({ code: 0, err: [`ledger backed up to ${r.file}`], sent: [`Bearer ${ADMIN}`] })
    expect(readFileSync(r.file, 'utf8')).toBe(COPY)
  })

  it('GATEWAY_ADMIN_TOKEN alone still works, with a warning on stderr naming GATEWAY_TOKEN', async () => {
    const r = await backup({ GATEWAY_ADMIN_TOKEN: OLD })
    expect(r.code).toBe(0)
    expect(r.sent).toEqual([`Bearer ${OLD}`])
    expect(r.err).toEqual(['warning: GATEWAY_ADMIN_TOKEN is deprecated; set GATEWAY_TOKEN instead (an admin\'s token), as every other command reads it', `ledger backed up to ${r.file}`])
    expect(readFileSync(r.file, 'utf8')).toBe(COPY)
    // the same token under both names: the warning, and that token
    const both = await backup({ GATEWAY_TOKEN: ADMIN, GATEWAY_ADMIN_TOKEN: ADMIN })
    expect(both).toMatchObject({ code: 0, sent: [`Bearer ${ADMIN}`] })
    expect(both.err[0]).toMatch(/^warning: GATEWAY_ADMIN_TOKEN is deprecated/)
  })

  it('two different tokens under the two names are refused before anything is sent; neither set is refused naming GATEWAY_TOKEN', async () => {
    const r = await backup({ GATEWAY_TOKEN: ADMIN, GATEWAY_ADMIN_TOKEN: OLD })
    expect(r).toMatchObject({ code: 1, sent: [] })
    expect(r.err).toEqual(['ledger backup: GATEWAY_TOKEN and GATEWAY_ADMIN_TOKEN are both set, to different tokens: set GATEWAY_TOKEN alone (an admin\'s token)'])
    const printed = [...r.err]
    for (const env of [{}, { GATEWAY_TOKEN: '' }, { GATEWAY_ADMIN_TOKEN: '' }] as Array<Record<string, string>>) {
      const none = await backup(env)
      expect(none, JSON.stringify(env)).toMatchObject({ code: 1, sent: [] })
      expect(none.err).toEqual(['ledger backup: GATEWAY_TOKEN (an admin\'s token) is needed to back up through a running gateway (GATEWAY_URL is set)'])
      printed.push(...none.err)
    }
    // and no token ever reaches stderr
    for (const line of printed) for (const t of [ADMIN, OLD]) expect(line).not.toContain(t)
  })

  it('the usage names GATEWAY_TOKEN, not the old name', async () => {
    const err: string[] = []
    expect(await runLedgerCommand(['help'], {}, { out: () => true, err: (l) => { err.push(l) } })).toBe(0)
    expect(err.join('\n')).toContain('GATEWAY_TOKEN')
    expect(err.join('\n')).not.toContain('GATEWAY_ADMIN_TOKEN')
  })
})
