// What the admin commands share (`controllers`, `callers`): each reads one of a running gateway's
// /v1/admin routes with GATEWAY_TOKEN and prints what it answers. The arguments (--url, --json,
// --help, a command's own flags, its positional words; a token never as an argument), the target
// check (https, or plain http to loopback only: the admin token never crosses a network in clear),
// and what a usage error or a missing answer prints and exits with. Everything printed from an
// answer is made printable first (src/cli/printable.ts).
import { redactUrl } from '../core/redact-url.js'
import { printable } from './printable.js'
import { DEFAULT_URL, type RequestsIo } from './requests-command.js'
import { targetProblem } from './gateway-transport.js'

export type Env = Record<string, string | undefined>

/** a command line the command refuses: printed with its usage, exit 2 */
export class UsageError extends Error {}

export interface AdminArgs { positional: string[]; url: string | undefined; json: boolean; help: boolean; flags: Set<string> }

/** --url, --json, --help and `flags` (booleans of the command's own); a token option is refused */
export function parseAdminArgs (args: string[], flags: readonly string[] = []): AdminArgs {
  const out: AdminArgs = { positional: [], url: undefined, json: false, help: false, flags: new Set() }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '-h' || a === '--help') { out.help = true; continue }
    if (a === '--json') { out.json = true; continue }
    if (flags.includes(a)) { out.flags.add(a); continue }
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

/** `head` and `rows` as aligned columns, every cell made printable */
export function table (head: string[], rows: string[][]): string[] {
  const cells = rows.map((r) => r.map((v) => printable(v)))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]): string => c.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(head), ...cells.map(line)]
}

/**
 * Runs an admin command: its arguments parsed, --help answered, the gateway's URL (--url,
 * GATEWAY_URL, the default), then `run`, which checks it with the token (`checkTarget`). A usage error
 * prints the usage (exit 2); a transport failure its code and the gateway's address, never the
 * token (headers are not in it) (exit 1).
 */
export async function runAdminCommand (name: string, usage: string, args: string[], env: Env, io: RequestsIo, flags: readonly string[], run: (p: AdminArgs, base: string) => Promise<number>): Promise<number> {
  let base = DEFAULT_URL
  try {
    const p = parseAdminArgs(args, flags)
    if (p.help) {
      io.out(usage)
      return 0
    }
    base = p.url ?? env.GATEWAY_URL ?? DEFAULT_URL
    return await run(p, base)
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${name}: ${err.message}\n${usage}`)
      return 2
    }
    const code = (err as { code?: string }).code
    io.err(printable(`${name}: no answer from ${redactUrl(base)}${code !== undefined ? ` (${code})` : ''}`))
    return 1
  }
}

/** https, or plain http to loopback only, and a token: a usage error otherwise; answers the token */
export function checkTarget (base: string, token: string | undefined): string {
  const problem = targetProblem(base, token)
  if (problem !== undefined) throw new UsageError(problem)
  return token!
}
