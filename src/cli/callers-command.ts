// `openoperator-gateway callers [--json]` (docs/design.md#grants): an admin's view of who may call
// a running gateway and which campaigns each may reach — names, identity kinds, scopes, controller
// ids, grants, and whether GATEWAY_REQUIRE_GRANTS is on — through its REST API
// (`GET /v1/admin/callers`), as the replica answering last loaded its callers file. Never a token
// or a digest: the gateway does not send them. The URL from --url or GATEWAY_URL, the token from
// GATEWAY_TOKEN only, as for `controllers` (src/cli/controllers-command.ts); everything printed
// from the answer is made printable first. Exit 0 answered, 1 an error answer or no answer, 2 usage.
import { UsageError, checkTarget, runAdminCommand, table, type Env } from './admin-command.js'
import { printable, printableJson } from './printable.js'
import { DEFAULT_URL, call, reportGatewayError, type Answer, type RequestsIo } from './requests-command.js'

export const USAGE = `usage: openoperator-gateway callers [--json]   (against a running gateway, over its REST API)
        every static caller — name, kind, scopes, controller id, what it reaches (all, granted,
        none) and its grants — and the grants keyed by a JWT caller's identity
        (GET /v1/admin/callers; an admin token). Never a token or a digest
options and environment:
  --url <url> | GATEWAY_URL   the gateway's API (default ${DEFAULT_URL})
  GATEWAY_TOKEN               the admin's bearer token. From the environment only, never an
                              argument: arguments show in \`ps\` and the shell's history
exit status: 0 answered, 1 an error answer (its error code printed) or no answer, 2 usage`

interface GrantSet { campaigns?: string[]; projects?: string[] }
interface Grants { read?: GrantSet; control?: GrantSet }
interface CallerView { name: string; kind: string; scopes: string[]; controllerId: string | null; reach: string; grants: Grants | null; expiresAt: string | null }
interface CallerList { requireGrants: boolean; jwtClaims: { campaigns?: string; projects?: string } | null; callers: CallerView[]; identities: Array<{ identity: string; kind: string; grants: Grants }> }

const HINTS: Record<string, string> = {
  unauthorized: 'GATEWAY_TOKEN is not a token this gateway knows',
  forbidden: 'the token lacks the admin scope'
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

const reportError = (io: RequestsIo, a: Answer): number => reportGatewayError(io, 'callers', a, HINTS)

export async function runCallersCommand (args: string[], env: Env, io: RequestsIo): Promise<number> {
  return await runAdminCommand('callers', USAGE, args, env, io, [], async (p, base) => {
    if (p.positional.length > 0) throw new UsageError(`unexpected argument ${printable(p.positional[0]!).slice(0, 64)}`)
    const token = checkTarget(base, env.GATEWAY_TOKEN)
    const a = await call(base, token, 'GET', 'v1/admin/callers')
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
  })
}
