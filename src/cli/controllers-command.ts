// `openoperator-gateway controllers list | remove <controllerId> [--force]` (docs/design.md#controller-bindings):
// an admin's view of which caller identity holds each controller id, and the way to free one
// (a JWT client whose subject changed, a static caller renamed) — one holding a live lease only
// with --force, as the gateway refuses it otherwise — through a running gateway's
// REST API — the ledger behind it is the one every replica reads. The URL comes from --url or
// GATEWAY_URL, the token from GATEWAY_TOKEN only (an admin token), as for `requests`
// (src/cli/requests-command.ts, whose HTTP call this reuses). Everything printed from an answer
// is made printable first. Exit 0 answered, 1 an error answer or no answer, 2 usage.
import { CONTROLLER_ID_PATTERN, CONTROLLER_ID_RULE } from '../../schemas/callers.js'
import { UsageError, checkTarget, runAdminCommand, table, type Env } from './admin-command.js'
import { printable, printableJson } from './printable.js'
import { DEFAULT_URL, call, reportGatewayError, type Answer, type RequestsIo } from './requests-command.js'

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

interface Binding { controllerId: string; identity: string; caller: string; boundAt: string }

const HINTS: Record<string, string> = {
  unauthorized: 'GATEWAY_TOKEN is not a token this gateway knows',
  forbidden: 'the token lacks the admin scope',
  not_found: 'no binding holds this controller id (openoperator-gateway controllers list)',
  controller_lease_held: 'the binding stays: its holder may still be mutating under that lease, and whoever binds the id next would act under it too. Release the lease or let it expire, or remove the binding anyway with --force'
}

const reportError = (io: RequestsIo, what: string, a: Answer): number => reportGatewayError(io, what, a, HINTS)

export async function runControllersCommand (args: string[], env: Env, io: RequestsIo): Promise<number> {
  return await runAdminCommand('controllers', USAGE, args, env, io, ['--force'], async (p, base) => {
    const force = p.flags.has('--force')
    const [sub, ...rest] = p.positional
    let path: string
    let what: string
    if (sub === 'list') {
      if (rest.length > 0) throw new UsageError(`unexpected argument ${printable(rest[0]!).slice(0, 64)}`)
      if (force) throw new UsageError('--force goes with remove only')
      path = 'v1/admin/controllers'
      what = 'controllers list'
    } else if (sub === 'remove') {
      if (rest.length !== 1) throw new UsageError('remove needs one <controllerId>')
      // refused here rather than sent: the gateway would refuse it too (400)
      if (!CONTROLLER_ID_PATTERN.test(rest[0]!)) throw new UsageError(`<controllerId> ${CONTROLLER_ID_RULE}`)
      path = `v1/admin/controllers/${encodeURIComponent(rest[0]!)}${force ? '?force=true' : ''}`
      what = `controllers remove ${rest[0]!}`
    } else {
      throw new UsageError(sub === undefined ? 'needs list or remove' : `unknown subcommand ${printable(sub).slice(0, 64)}`)
    }
    const token = checkTarget(base, env.GATEWAY_TOKEN)

    const a = await call(base, token, sub === 'list' ? 'GET' : 'DELETE', path)
    if (a.status !== 200) return reportError(io, what, a)
    if (p.json) {
      io.out(printableJson(a.body))
      return 0
    }
    if (sub === 'remove') {
      io.out(`removed the binding of ${rest[0]!}${force ? ' (forced)' : ''}: the next caller identity to use it in a mutation binds it`)
      return 0
    }
    const rows = (a.body as { controllers: Binding[] }).controllers
    if (rows.length === 0) io.out('no controller bindings')
    else {
      for (const line of table(['CONTROLLER', 'IDENTITY', 'CALLER', 'BOUND'], rows.map((b) => [b.controllerId, b.identity, b.caller, String(b.boundAt)]))) io.out(line)
      io.out(`${rows.length} binding(s); free one with: openoperator-gateway controllers remove <controllerId>`)
    }
    return 0
  })
}
