// `openoperator-gateway requests | reconcile | acknowledge` (docs/runbooks/ambiguous-write.md):
// an operator's way from the ambiguous-write alert to the fix, through a running gateway's REST
// API — the SQLite ledger file is locked by the gateway that owns it, and several replicas share
// one PostgreSQL ledger, so the API is the one place that always answers. `requests` lists the
// unresolved records of every campaign (GET /v1/requests, admin), `reconcile` asks the remote
// with request_status (POST …/reconcile, control), `acknowledge` records an admin's decision
// (POST …/acknowledge, admin). None of them ever re-sends a mutation.
//
// The gateway URL comes from --url or GATEWAY_URL, the token from GATEWAY_TOKEN only: a token in
// the arguments would show in `ps` and the shell's history. Exit 0 on a 2xx answer, 1 on an
// error answer (its contract error code printed) or a failed connection, 2 on a usage error.
// The token is never printed; a URL is printed with its password redacted. The token goes over
// https, or plain http to loopback only (./gateway-transport.ts), and what an answer holds is
// printed through ./printable.ts: a caller name or a message can hold no terminal escape.
import { request } from 'undici'
import { redactUrl } from '../core/redact-url.js'
import { gatewayUrlProblem, targetProblem } from './gateway-transport.js'
import { printable, printableJson } from './printable.js'

export interface RequestsIo { out: (line: string) => void; err: (line: string) => void }
type Env = Record<string, string | undefined>

export const OPERATOR_COMMANDS = ['requests', 'reconcile', 'acknowledge'] as const
export type OperatorCommand = typeof OPERATOR_COMMANDS[number]

export const DEFAULT_URL = 'http://127.0.0.1:8080'
/** reconcile is bounded by the gateway's read timeout (15 s by default); this only stops a hang */
const TIMEOUT_MS = 60_000

export const USAGE = `usage: openoperator-gateway <command>   (against a running gateway, over its REST API)
  requests [--state ambiguous|pending] [--limit N] [--cursor C] [--json]
        the unresolved mutation records of every campaign, oldest first (GET /v1/requests;
        an admin token). --limit: records per page, 1-500 (default 100); --cursor: the next
        page, as the previous one printed it
  reconcile <campaignId> <requestId> [--json]
        ask the remote whether an ambiguous request was applied (request_status), once; never
        re-sends it (POST /v1/campaigns/<campaignId>/requests/<requestId>/reconcile; a token
        with the control scope)
  acknowledge <campaignId> <requestId> --resolution assume_applied|assume_not_applied --note <text> [--json]
        an admin's decision, where reconcile cannot settle it (POST …/acknowledge; an admin token)
options and environment:
  --url <url> | GATEWAY_URL   the gateway's API (default ${DEFAULT_URL}): https://, or http://
                              to loopback only (127.0.0.0/8, ::1, localhost). A private CA:
                              NODE_EXTRA_CA_CERTS=<PEM file>
  GATEWAY_TOKEN               the bearer token. From the environment only, never an argument:
                              arguments show in \`ps\` and the shell's history
exit status: 0 answered, 1 an error answer (its error code printed) or no answer, 2 usage
runbook: docs/runbooks/ambiguous-write.md`

class UsageError extends Error {}

interface Parsed { positional: string[]; flags: Map<string, string>; bools: Set<string> }

const VALUE_FLAGS = new Set(['--url', '--state', '--limit', '--cursor', '--resolution', '--note'])
const BOOL_FLAGS = new Set(['--json', '--help'])

function parse (args: string[]): Parsed {
  const out: Parsed = { positional: [], flags: new Map(), bools: new Set() }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '-h') { out.bools.add('--help'); continue }
    if (!a.startsWith('--')) { out.positional.push(a); continue }
    const eq = a.indexOf('=')
    const name = eq < 0 ? a : a.slice(0, eq)
    if (/^--(token|gateway-token|bearer|auth)/.test(name)) {
      throw new UsageError(`${name} is not accepted: set GATEWAY_TOKEN in the environment (arguments show in \`ps\`)`)
    }
    if (BOOL_FLAGS.has(name)) {
      if (eq >= 0) throw new UsageError(`${name} takes no value`)
      out.bools.add(name)
      continue
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown option ${name}`)
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i]
    if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`${name} needs a value`)
    out.flags.set(name, value)
  }
  return out
}

function only (p: Parsed, allowed: string[], positional: number): void {
  for (const f of [...p.flags.keys(), ...p.bools]) {
    if (!allowed.includes(f) && f !== '--url' && f !== '--json' && f !== '--help') throw new UsageError(`${f} does not apply here`)
  }
  if (p.positional.length !== positional) throw new UsageError(positional === 0 ? `unexpected argument ${p.positional[0] ?? ''}` : 'needs <campaignId> <requestId>')
}

export interface Answer { status: number; retryAfter: string | undefined; body: unknown }

/** the error of a contract error body: `{error: {code, message, retryable, requestId?}}` */
export function errorOf (body: unknown): { code: string; message: string; retryable?: boolean; requestId?: string } | undefined {
  const e = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined
  if (e === undefined || e === null || typeof e.code !== 'string') return undefined
  return { code: e.code, message: typeof e.message === 'string' ? e.message : '', retryable: e.retryable === true, requestId: typeof e.requestId === 'string' ? e.requestId : undefined }
}

export async function call (base: string, token: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`)
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  // checked by the command first, with its usage; here too, so that no caller of this sends a token in clear
  if (gatewayUrlProblem(url) !== undefined) throw Object.assign(new Error('plain http to a host that is not loopback'), { code: 'PLAIN_HTTP_REFUSED' })
  const res = await request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS })
  const text = await res.body.text()
  let json: unknown
  try { json = JSON.parse(text) } catch { json = undefined }
  const ra = res.headers['retry-after']
  return { status: res.statusCode, retryAfter: Array.isArray(ra) ? ra[0] : ra, body: json }
}

/** an error answer, in the contract's words: the code, the status, the gateway's message, Retry-After */
/**
 * an error answer for the operator, every command alike: its code, status and message (printable:
 * the message may carry a remote's or a caller's text), its Retry-After, and the command's hint
 * for the code; 1, the exit code
 */
export function reportGatewayError (io: RequestsIo, what: string, a: Answer, hints: Readonly<Record<string, string>>): number {
  const e = errorOf(a.body)
  if (e === undefined) {
    io.err(printable(`${what}: HTTP ${a.status}, not a gateway error body (a proxy in between?)`))
    return 1
  }
  io.err(printable(`${what}: ${e.code} (HTTP ${a.status}): ${e.message}`))
  if (a.retryAfter !== undefined) io.err(printable(`retry after ${a.retryAfter} s (Retry-After)${e.retryable === true ? '; the same command may be run again then' : ''}`))
  const hint = hints[e.code]
  if (hint !== undefined) io.err(hint)
  return 1
}

const reportError = (io: RequestsIo, what: string, a: Answer): number => reportGatewayError(io, what, a, HINTS)

/** what an error answer means for the operator (docs/runbooks/ambiguous-write.md) */
const HINTS: Record<string, string> = {
  unauthorized: 'GATEWAY_TOKEN is not a token this gateway knows',
  forbidden: 'the token lacks the scope: requests and acknowledge need admin, reconcile needs control',
  reconcile_too_early: 'the remote says not applied, but may still apply a late arrival: wait, then reconcile again; do not acknowledge',
  request_in_flight: 'the record is still pending: its sender may still be waiting; it turns ambiguous at its deadline',
  capability_unavailable: 'the remote does not advertise request_status (or control is unavailable): acknowledge with an admin token and a note',
  acknowledge_unsafe: 'not safe yet: reconcile first (acknowledge needs a failed reconcile where request_status exists); assume_not_applied needs a higher epoch on the remote',
  not_found: 'no such request for this campaign: check both ids (openoperator-gateway requests)',
  upstream_invalid_response: 'reconcile failed (counted in reconcileFailures): try again, or acknowledge',
  upstream_unavailable: 'reconcile failed, the remote did not answer: try again, or acknowledge',
  upstream_timeout: 'reconcile failed, the remote did not answer in time: try again, or acknowledge',
  upstream_rejected: 'reconcile failed, the remote refused request_status: try again, or acknowledge'
}

interface RequestRow {
  requestId: string
  campaignId?: string
  operation: string
  state: string
  caller: string
  createdAt: string
  updatedAt: string
  controllerEpoch?: number | null
  taskId?: string | null
  outcomeCode?: string | null
  reconcileFailures?: number
  resolution?: { kind: string; by: string; at: string; note: string | null; resolution: string | null } | null
}

function table (rows: RequestRow[]): string[] {
  const head = ['CAMPAIGN', 'REQUEST', 'OPERATION', 'STATE', 'CALLER', 'CREATED', 'EPOCH', 'RECONCILE FAILURES']
  const cells = rows.map((r) => [r.campaignId ?? '-', r.requestId, r.operation, r.state, r.caller, r.createdAt, r.controllerEpoch === null || r.controllerEpoch === undefined ? '-' : String(r.controllerEpoch), String(r.reconcileFailures ?? '-')].map((v) => printable(String(v))))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]): string => c.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(head), ...cells.map(line)]
}

function describeRecord (r: RequestRow): string[] {
  const lines = [
    `request ${r.requestId} (${r.operation}) of campaign ${r.campaignId ?? '?'}: ${r.state}`,
    `  caller ${r.caller}, created ${r.createdAt}, updated ${r.updatedAt}, epoch ${r.controllerEpoch ?? '-'}, task ${r.taskId ?? '-'}, reconcile failures ${r.reconcileFailures ?? 0}`
  ]
  const res = r.resolution
  if (res !== null && res !== undefined) lines.push(`  resolved by ${res.kind}${res.resolution !== null ? ` (${res.resolution})` : ''}, by ${res.by} at ${res.at}${res.note !== null ? `: ${res.note}` : ''}`)
  return lines.map(printable)
}

function meaning (state: string): string {
  switch (state) {
    case 'applied': return 'resolved: the remote applied it; the campaign accepts mutations again (never send it again)'
    case 'not_applied': return 'resolved: the remote never applied it; the campaign accepts mutations again (to do it after all, send a new request with a new request id)'
    case 'ambiguous': return 'still ambiguous: the campaign stays blocked'
    default: return printable(`the record is ${state}: nothing to resolve`)
  }
}

export async function runRequestsCommand (command: OperatorCommand, args: string[], env: Env, io: RequestsIo): Promise<number> {
  let p: Parsed
  try {
    p = parse(args)
  } catch (err) {
    io.err(`${command}: ${(err as Error).message}\n${USAGE}`)
    return 2
  }
  if (p.bools.has('--help')) {
    io.out(USAGE)
    return 0
  }
  const base = p.flags.get('--url') ?? env.GATEWAY_URL ?? DEFAULT_URL
  const json = p.bools.has('--json')
  try {
    const problem = targetProblem(base, env.GATEWAY_TOKEN)
    if (problem !== undefined) throw new UsageError(problem)
    const token = env.GATEWAY_TOKEN!

    return command === 'requests' ? await listRequests(p, base, token, json, io) : await resolveRequest(command, p, base, token, json, io)
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${command}: ${err.message}\n${USAGE}`)
      return 2
    }
    // a transport failure: its code and the gateway's address, never the token (headers are not in it)
    const code = (err as { code?: string }).code
    io.err(`${command}: no answer from ${redactUrl(base)}${code !== undefined ? ` (${code})` : ''}`)
    return 1
  }
}

/** `requests`: the unresolved records across campaigns, oldest first, a page at a time */
async function listRequests (p: Parsed, base: string, token: string, json: boolean, io: RequestsIo): Promise<number> {
  only(p, ['--state', '--limit', '--cursor'], 0)
  const q = new URLSearchParams()
  const state = p.flags.get('--state')
  if (state !== undefined) {
    if (state !== 'ambiguous' && state !== 'pending') throw new UsageError('--state is ambiguous or pending')
    q.set('state', state)
  }
  const limit = p.flags.get('--limit')
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 500) throw new UsageError('--limit is a whole number, 1-500')
    q.set('limit', limit)
  }
  const cursor = p.flags.get('--cursor')
  if (cursor !== undefined) q.set('cursor', cursor)
  const a = await call(base, token, 'GET', `v1/requests${q.size > 0 ? `?${q.toString()}` : ''}`)
  if (a.status !== 200) return reportError(io, 'requests', a)
  const body = a.body as { requests: RequestRow[]; nextCursor: string | null }
  if (json) {
    io.out(printableJson(body))
    return 0
  }
  const what = state === undefined ? 'unresolved (ambiguous or pending)' : state
  if (body.requests.length === 0) io.out(`no ${what} requests`)
  else {
    for (const line of table(body.requests)) io.out(line)
    io.out(`${body.requests.length} ${what} request(s), oldest first; resolve each with: openoperator-gateway reconcile <campaignId> <requestId>`)
  }
  if (body.nextCursor !== null) {
    const again = ['openoperator-gateway requests', ...(state !== undefined ? [`--state ${state}`] : []), ...(limit !== undefined ? [`--limit ${limit}`] : []), `--cursor ${body.nextCursor}`]
    io.out(printable(`more: ${again.join(' ')}`))
  }
  return 0
}

/** `reconcile` and `acknowledge`: one record resolved, and what its state now means */
async function resolveRequest (command: OperatorCommand, p: Parsed, base: string, token: string, json: boolean, io: RequestsIo): Promise<number> {
  const [campaignId, requestId] = p.positional
  const path = (c: string, r: string, op: string): string => `v1/campaigns/${encodeURIComponent(c)}/requests/${encodeURIComponent(r)}/${op}`
  if (command === 'reconcile') {
    only(p, [], 2)
    const a = await call(base, token, 'POST', path(campaignId!, requestId!, 'reconcile'))
    if (a.status !== 200) return reportError(io, `reconcile ${campaignId!} ${requestId!}`, a)
    const r = a.body as RequestRow
    if (json) io.out(printableJson(r))
    else for (const line of [...describeRecord(r), meaning(r.state)]) io.out(line)
    return 0
  }

  only(p, ['--resolution', '--note'], 2)
  const resolution = p.flags.get('--resolution')
  if (resolution !== 'assume_applied' && resolution !== 'assume_not_applied') throw new UsageError('--resolution is assume_applied or assume_not_applied')
  const note = p.flags.get('--note')
  if (note === undefined || note.length === 0 || note.length > 2000) throw new UsageError('--note is needed: 1-2000 characters saying why (kept in the ledger)')
  const a = await call(base, token, 'POST', path(campaignId!, requestId!, 'acknowledge'), { resolution, note })
  if (a.status !== 200) return reportError(io, `acknowledge ${campaignId!} ${requestId!}`, a)
  const r = a.body as RequestRow
  if (json) io.out(printableJson(r))
  else for (const line of [...describeRecord(r), meaning(r.state)]) io.out(line)
  return 0
}
