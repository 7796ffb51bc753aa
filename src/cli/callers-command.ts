// `openoperator-gateway callers [--json]` (docs/design.md#grants): an admin's view of who may call
// a running gateway and which campaigns each may reach — names, identity kinds, scopes, controller
// ids, grants, and whether GATEWAY_REQUIRE_GRANTS is on — through its REST API
// (`GET /v1/admin/callers`), as the replica answering last loaded its callers file. Never a token
// or a digest: the gateway does not send them. The URL from --url or GATEWAY_URL, the token from
// GATEWAY_TOKEN only, as for `controllers` (src/cli/controllers-command.ts); everything printed
// from the answer is made printable first. Exit 0 answered, 1 an error answer or no answer, 2 usage.
import { redactUrl } from '../http/redact-url.js'
import { printable, printableJson } from './printable.js'
import { DEFAULT_URL, call, reportGatewayError, type Answer, type RequestsIo } from './requests-command.js'
import { targetProblem } from './gateway-transport.js'

type Env = Record<string, string | undefined>

export const USAGE = `usage: openoperator-gateway callers [--json]   (against a running gateway, over its REST API)
        every static caller — name, kind, scopes, controller id, what it reaches (all, granted,
        none) and its grants — and the grants keyed by a JWT caller's identity
        (GET /v1/admin/callers; an admin token). Never a token or a digest
options and environment:
  --url <url> | GATEWAY_URL   the gateway's API (default ${DEFAULT_URL})
  GATEWAY_TOKEN               the admin's bearer token. From the environment only, never an
                              argument: arguments show in \`ps\` and the shell's history
exit status: 0 answered, 1 an error answer (its error code printed) or no answer, 2 usage`

class UsageError extends Error {}

interface GrantSet { campaigns?: string[]; projects?: string[] }
interface Grants { read?: GrantSet; control?: GrantSet }
interface CallerView { name: string; kind: string; scopes: string[]; controllerId: string | null; reach: string; grants: Grants | null; expiresAt: string | null }
interface CallerList { requireGrants: boolean; jwtClaims: { campaigns?: string; projects?: string } | null; callers: CallerView[]; identities: Array<{ identity: string; kind: string; grants: Grants }> }

const HINTS: Record<string, string> = {
  unauthorized: 'GATEWAY_TOKEN is not a token this gateway knows',
  forbidden: 'the token lacks the admin scope'
}

function parse (args: string[]): { url: string | undefined; json: boolean; help: boolean } {
  const out = { url: undefined as string | undefined, json: false, help: false }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '-h' || a === '--help') { out.help = true; continue }
    if (a === '--json') { out.json = true; continue }
    if (a === '--url' || a.startsWith('--url=')) {
      const value = a === '--url' ? args[++i] : a.slice('--url='.length)
      if (value === undefined || value === '' || value.startsWith('--')) throw new UsageError('--url needs a value')
      out.url = value
      continue
    }
    if (/^--(token|gateway-token|bearer|auth)/.test(a)) throw new UsageError(`${printable(a.split('=')[0]!)} is not accepted: set GATEWAY_TOKEN in the environment (arguments show in \`ps\`)`)
    if (a.startsWith('-')) throw new UsageError(`unknown option ${printable(a.split('=')[0]!).slice(0, 64)}`)
    throw new UsageError(`unexpected argument ${printable(a).slice(0, 64)}`)
  }
  return out
}

/** `control campaigns team-a-*; read projects vision`, or `-` */
function grantsText (g: Grants | null): string {
  if (g === null) return '-'
  const parts: string[] = []
  for (const access of ['control', 'read'] as const) {
    for (const kind of ['campaigns', 'projects'] as const) {
      const list = g[access]?.[kind]
      if (list !== undefined) parts.push(`${access} ${kind} ${list.length === 0 ? '(none)' : list.join(',')}`)
    }
  }
  return parts.length === 0 ? '(nothing)' : parts.join('; ')
}

function table (head: string[], rows: string[][]): string[] {
  const cells = rows.map((r) => r.map((v) => printable(v)))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]): string => c.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(head), ...cells.map(line)]
}

const reportError = (io: RequestsIo, a: Answer): number => reportGatewayError(io, 'callers', a, HINTS)

export async function runCallersCommand (args: string[], env: Env, io: RequestsIo): Promise<number> {
  let base = DEFAULT_URL
  try {
    const p = parse(args)
    if (p.help) {
      io.out(USAGE)
      return 0
    }
    base = p.url ?? env.GATEWAY_URL ?? DEFAULT_URL
    // https, or plain http to loopback only: the admin token never crosses a network in clear
    const problem = targetProblem(base, env.GATEWAY_TOKEN)
    if (problem !== undefined) throw new UsageError(problem)
    const a = await call(base, env.GATEWAY_TOKEN!, 'GET', 'v1/admin/callers')
    if (a.status !== 200) return reportError(io, a)
    if (p.json) {
      io.out(printableJson(a.body))
      return 0
    }
    const list = a.body as CallerList
    io.out(list.requireGrants
      ? 'GATEWAY_REQUIRE_GRANTS is true: a caller without grants reaches no campaign; admins reach every one'
      : 'GATEWAY_REQUIRE_GRANTS is false: a caller without grants reaches every campaign')
    const rows = list.callers.map((c) => [c.name, c.kind, c.scopes.join(','), c.controllerId ?? '-', c.reach, grantsText(c.grants)])
    for (const line of table(['NAME', 'KIND', 'SCOPES', 'CONTROLLER', 'REACH', 'GRANTS'], rows)) io.out(line)
    if (list.identities.length > 0) {
      io.out('')
      for (const line of table(['IDENTITY', 'KIND', 'GRANTS'], list.identities.map((i) => [i.identity, i.kind, grantsText(i.grants)]))) io.out(line)
    }
    if (list.jwtClaims !== null) {
      const claims = Object.entries(list.jwtClaims).map(([k, v]) => `${k} from the ${v} claim`)
      io.out(printable(`JWT callers: grants ${claims.length === 0 ? 'from the table above alone (no grants claim mapped)' : claims.join(', ')}; the table replaces a mapped identity's claims`))
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`callers: ${err.message}\n${USAGE}`)
      return 2
    }
    // a transport failure: its code and the gateway's address, never the token (headers are not in it)
    const code = (err as { code?: string }).code
    io.err(printable(`callers: no answer from ${redactUrl(base)}${code !== undefined ? ` (${code})` : ''}`))
    return 1
  }
}
