// `openoperator-gateway ledger …` (docs/design.md#operating-the-ledger): run the migrations alone
// (a Kubernetes Job or init container), export the audit trail as JSON lines, and back up an
// SQLite ledger. It reads only GATEWAY_LEDGER_URL (default sqlite:./data/ledger.db) and, for a
// backup through a running gateway, GATEWAY_URL and GATEWAY_TOKEN (an admin's), the names every
// other command reads; GATEWAY_ADMIN_TOKEN, this command's name before, is still accepted with a
// warning. Never prints a password or a token.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { request } from 'undici'
import { createLedger } from '../ledger/index.js'
import { ambiguousAnswer } from '../control/ambiguous-answer.js'
import type { ExportStore, MutationRecord } from '../ledger/types.js'
import { redactUrl } from '../core/redact-url.js'

export interface LedgerIo { out: (chunk: string) => boolean | Promise<void>; err: (line: string) => void; drain?: () => Promise<void> }

export const USAGE = `usage: openoperator-gateway ledger <command>
  migrate                          apply the ledger's migrations and exit (GATEWAY_LEDGER_URL)
  export [--since <ISO time>] [--campaign <id>] [--with-params]
                                   the audit trail as JSON lines on stdout, oldest first
  backup <file>                    SQLite: a consistent copy of the ledger file; through a running
                                   gateway when GATEWAY_URL is set, with an admin's token in
                                   GATEWAY_TOKEN (the file is locked by it), else from the file
                                   itself
PostgreSQL: back up with pg_dump; export works while the gateway runs.`

const PAGE = 1000
const PROGRESS_EVERY = 10_000

/** one audit line: who, what, where, the outcome and its resolution; params only when asked */
export function auditLine (r: MutationRecord, withParams: boolean): Record<string, unknown> {
  return {
    requestId: r.requestId,
    campaignId: r.campaignId,
    caller: r.caller,
    // the owner (null: unknown, docs/design.md#request-records): two callers may share the name
    identity: r.identity,
    operation: r.operation,
    state: r.state,
    controllerEpoch: r.controllerEpoch,
    taskId: r.taskId,
    outcomeCode: r.outcomeCode,
    createdAt: new Date(r.createdAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
    resolution: r.resolution === null ? null : { ...r.resolution, at: new Date(r.resolution.at).toISOString() },
    ...(withParams ? { params: r.params } : {})
  }
}

function flag (args: string[], name: string): string | undefined {
  const i = args.indexOf(name)
  if (i < 0) return undefined
  const v = args[i + 1]
  if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value`)
  return v
}

export async function runLedgerCommand (args: string[], env: Record<string, string | undefined>, io: LedgerIo): Promise<number> {
  const sub = args[0]
  const url = env.GATEWAY_LEDGER_URL ?? 'sqlite:./data/ledger.db'
  if (sub === undefined || sub === 'help' || sub === '--help') {
    io.err(USAGE)
    return sub === undefined ? 2 : 0
  }
  try {
    if (sub === 'migrate') {
      const ledger = await createLedger(url, { ambiguousAnswer })
      await ledger.close()
      io.err(`ledger ${redactUrl(url)}: migrations applied`)
      return 0
    }
    if (sub === 'export') {
      const sinceArg = flag(args, '--since')
      const since = sinceArg === undefined ? undefined : Date.parse(sinceArg)
      if (since !== undefined && Number.isNaN(since)) throw new Error('--since takes an ISO 8601 time, e.g. 2026-11-01T00:00:00Z')
      const ledger = await createLedger(url, { ambiguousAnswer })
      try {
        const n = await exportAll(ledger, { since, campaignId: flag(args, '--campaign'), withParams: args.includes('--with-params') }, io)
        io.err(`exported ${n} records`)
      } finally {
        await ledger.close()
      }
      return 0
    }
    if (sub === 'backup') {
      const file = args[1]
      if (file === undefined) throw new Error('backup needs a file to write')
      if (!url.startsWith('sqlite:')) throw new Error('a PostgreSQL ledger is backed up with pg_dump (or your provider\'s snapshots)')
      if (env.GATEWAY_URL !== undefined) {
        await backupThroughGateway(env.GATEWAY_URL, backupToken(env, io), file)
      } else {
        const ledger = await createLedger(url, { ambiguousAnswer })
        try {
          await ledger.backupTo!(file)
        } finally {
          await ledger.close()
        }
      }
      io.err(`ledger backed up to ${file}`)
      return 0
    }
  } catch (err) {
    io.err(`ledger ${sub}: ${err instanceof Error ? err.message : String(err)}`)
    return 1
  }
  io.err(`unknown ledger command "${sub}"\n${USAGE}`)
  return 2
}

async function exportAll (ledger: ExportStore, o: { since?: number | undefined; campaignId?: string | undefined; withParams: boolean }, io: LedgerIo): Promise<number> {
  let after: { createdAt: number; requestId: string } | undefined
  let n = 0
  for (;;) {
    const page = await ledger.exportRecords({ since: o.since, campaignId: o.campaignId, after, limit: PAGE })
    if (page.length === 0) return n
    let text = ''
    for (const r of page) text += `${JSON.stringify(auditLine(r, o.withParams))}\n`
    // backpressure: a slow reader of stdout holds the next page back
    if (await io.out(text) === false) await io.drain?.()
    n += page.length
    if (Math.floor(n / PROGRESS_EVERY) > Math.floor((n - page.length) / PROGRESS_EVERY)) io.err(`exported ${n} records…`)
    const last = page[page.length - 1]!
    after = { createdAt: last.createdAt, requestId: last.requestId }
  }
}

/**
 * The admin's token for a backup through the gateway: GATEWAY_TOKEN, as every other command and
 * the runbook name it. GATEWAY_ADMIN_TOKEN, what this command read before, still works alone, with
 * a warning; both set to different tokens is refused rather than one of them picked.
 */
function backupToken (env: Record<string, string | undefined>, io: LedgerIo): string {
  const token = env.GATEWAY_TOKEN === '' ? undefined : env.GATEWAY_TOKEN
  const old = env.GATEWAY_ADMIN_TOKEN === '' ? undefined : env.GATEWAY_ADMIN_TOKEN
  if (old !== undefined) {
    if (token !== undefined && token !== old) throw new Error('GATEWAY_TOKEN and GATEWAY_ADMIN_TOKEN are both set, to different tokens: set GATEWAY_TOKEN alone (an admin\'s token)')
    io.err('warning: GATEWAY_ADMIN_TOKEN is deprecated; set GATEWAY_TOKEN instead (an admin\'s token), as every other command reads it')
    return old
  }
  if (token === undefined) throw new Error('GATEWAY_TOKEN (an admin\'s token) is needed to back up through a running gateway (GATEWAY_URL is set)')
  return token
}

async function backupThroughGateway (base: string, token: string, file: string): Promise<void> {
  const res = await request(new URL('/v1/admin/ledger/backup', base), { headers: { authorization: `Bearer ${token}` } })
  if (res.statusCode !== 200) {
    const body = await res.body.text()
    let code = `HTTP ${res.statusCode}`
    try { code = String((JSON.parse(body) as { error?: { code?: string } }).error?.code ?? code) } catch { /* not JSON: the status says enough */ }
    throw new Error(`the gateway refused the backup (${code})`)
  }
  const out = createWriteStream(file)
  for await (const chunk of res.body) {
    if (!out.write(chunk)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}
