// `openoperator-gateway controllers list | remove <controllerId> [--force]` (docs/design.md#controller-bindings):
// an admin's view of which caller identity holds each controller id, and the way to free one
// (a JWT client whose subject changed, a static caller renamed) — one holding a live lease only
// with --force, as the gateway refuses it otherwise — through a running gateway's
// REST API — the ledger behind it is the one every replica reads. The URL comes from --url or
// GATEWAY_URL, the token from GATEWAY_TOKEN only (an admin token), as for `requests`
// (src/cli/requests-command.ts, whose HTTP call this reuses). Everything printed from an answer
// is made printable first. Exit 0 answered, 1 an error answer or no answer, 2 usage.
import { CONTROLLER_ID_PATTERN, CONTROLLER_ID_RULE } from '../../schemas/callers.js'
import { redactUrl } from '../http/redact-url.js'
import { printable, printableJson } from './printable.js'
import { DEFAULT_URL, call, reportGatewayError, type Answer, type RequestsIo } from './requests-command.js'
import { targetProblem } from './gateway-transport.js'

type Env = Record<string, string | undefined>

export const USAGE = `usage: openoperator-gateway controllers <list|remove>   (against a running gateway, over its REST API)
  controllers list [--json]
        every controller id and the caller identity it is bound to (GET /v1/admin/controllers;
        an admin token)
  controllers remove <controllerId> [--force] [--json]
        remove the binding of a controller id, in any letter case: the next caller identity to
        use it in a mutation binds it (DELETE /v1/admin/controllers/<controllerId>; an admin token).
        Refused while the id holds a live lease (controller_lease_held) unless --force; the
        gateway logs the removal with your identity and the binding's
options and environment:
  --url <url> | GATEWAY_URL   the gateway's API (default ${DEFAULT_URL})
  GATEWAY_TOKEN               the admin's bearer token. From the environment only, never an
                              argument: arguments show in \`ps\` and the shell's history
exit status: 0 answered, 1 an error answer (its error code printed) or no answer, 2 usage`

class UsageError extends Error {}

interface Binding { controllerId: string; identity: string; caller: string; boundAt: string }

const HINTS: Record<string, string> = {
  unauthorized: 'GATEWAY_TOKEN is not a token this gateway knows',
  forbidden: 'the token lacks the admin scope',
  not_found: 'no binding holds this controller id (openoperator-gateway controllers list)',
  controller_lease_held: 'the binding stays: its holder may still be mutating under that lease, and whoever binds the id next would act under it too. Release the lease or let it expire, or remove the binding anyway with --force'
}

function parse (args: string[]): { positional: string[]; url: string | undefined; json: boolean; force: boolean; help: boolean } {
  const out = { positional: [] as string[], url: undefined as string | undefined, json: false, force: false, help: false }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '-h' || a === '--help') { out.help = true; continue }
    if (a === '--json') { out.json = true; continue }
    if (a === '--force') { out.force = true; continue }
    if (a === '--url' || a.startsWith('--url=')) {
      const value = a === '--url' ? args[++i] : a.slice('--url='.length)
      if (value === undefined || value === '' || value.startsWith('--')) throw new UsageError('--url needs a value')
      out.url = value
      continue
    }
    if (/^--(token|gateway-token|bearer|auth)/.test(a)) throw new UsageError(`${printable(a.split('=')[0]!)} is not accepted: set GATEWAY_TOKEN in the environment (arguments show in \`ps\`)`)
    if (a.startsWith('-')) throw new UsageError(`unknown option ${printable(a.split('=')[0]!).slice(0, 64)}`)
    out.positional.push(a)
  }
  return out
}

function table (rows: Binding[]): string[] {
  const head = ['CONTROLLER', 'IDENTITY', 'CALLER', 'BOUND']
  const cells = rows.map((b) => [b.controllerId, b.identity, b.caller, b.boundAt].map((v) => printable(String(v))))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]): string => c.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(head), ...cells.map(line)]
}

const reportError = (io: RequestsIo, what: string, a: Answer): number => reportGatewayError(io, what, a, HINTS)

export async function runControllersCommand (args: string[], env: Env, io: RequestsIo): Promise<number> {
  let base = DEFAULT_URL
  try {
    const p = parse(args)
    if (p.help) {
      io.out(USAGE)
      return 0
    }
    base = p.url ?? env.GATEWAY_URL ?? DEFAULT_URL
    const [sub, ...rest] = p.positional
    let path: string
    let what: string
    if (sub === 'list') {
      if (rest.length > 0) throw new UsageError(`unexpected argument ${printable(rest[0]!).slice(0, 64)}`)
      if (p.force) throw new UsageError('--force goes with remove only')
      path = 'v1/admin/controllers'
      what = 'controllers list'
    } else if (sub === 'remove') {
      if (rest.length !== 1) throw new UsageError('remove needs one <controllerId>')
      // refused here rather than sent: the gateway would refuse it too (400)
      if (!CONTROLLER_ID_PATTERN.test(rest[0]!)) throw new UsageError(`<controllerId> ${CONTROLLER_ID_RULE}`)
      path = `v1/admin/controllers/${encodeURIComponent(rest[0]!)}${p.force ? '?force=true' : ''}`
      what = `controllers remove ${rest[0]!}`
    } else {
      throw new UsageError(sub === undefined ? 'needs list or remove' : `unknown subcommand ${printable(sub).slice(0, 64)}`)
    }
    // https, or plain http to loopback only: the admin token never crosses a network in clear
    const problem = targetProblem(base, env.GATEWAY_TOKEN)
    if (problem !== undefined) throw new UsageError(problem)
    const token = env.GATEWAY_TOKEN!

    const a = await call(base, token, sub === 'list' ? 'GET' : 'DELETE', path)
    if (a.status !== 200) return reportError(io, what, a)
    if (p.json) {
      io.out(printableJson(a.body))
      return 0
    }
    if (sub === 'remove') {
      io.out(`removed the binding of ${rest[0]!}${p.force ? ' (forced)' : ''}: the next caller identity to use it in a mutation binds it`)
      return 0
    }
    const rows = (a.body as { controllers: Binding[] }).controllers
    if (rows.length === 0) io.out('no controller bindings')
    else {
      for (const line of table(rows)) io.out(line)
      io.out(`${rows.length} binding(s); free one with: openoperator-gateway controllers remove <controllerId>`)
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`controllers: ${err.message}\n${USAGE}`)
      return 2
    }
    // a transport failure: its code and the gateway's address, never the token (headers are not in it)
    const code = (err as { code?: string }).code
    io.err(printable(`controllers: no answer from ${redactUrl(base)}${code !== undefined ? ` (${code})` : ''}`))
    return 1
  }
}
