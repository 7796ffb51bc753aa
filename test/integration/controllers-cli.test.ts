// `openoperator-gateway controllers list | remove` (src/cli/controllers-command.ts,
// docs/design.md#controller-bindings), in this process against a real gateway over its socket:
// the usage refusals, the table and --json, a removal in another letter case, a binding holding a
// live lease kept (its code, a hint naming --force) and removed with --force, an error answer's
// contract code and exit status, no answer — the token in none of the output. And against a
// purpose-built server answering escape sequences and bidirectional controls: nothing of them
// reaches the terminal.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, onTestFinished } from 'vitest'
import { runControllersCommand, USAGE } from '../../src/cli/controllers-command.js'
import { claim } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

interface Run { code: number; out: string[]; err: string[]; all: string }

async function run (args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await runControllersCommand(args, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  const all = [...out, ...err].join('\n')
  for (const secret of [env.GATEWAY_TOKEN, 'tok-in-argv-0123456789']) if (secret !== undefined && secret !== '') expect(all).not.toContain(secret)
  return { code, out, err, all }
}

const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u
/** every line the command printed is free of what a terminal would act on */
const expectPrintable = (r: Run): void => { for (const line of [...r.out, ...r.err]) expect(line).not.toMatch(UNPRINTABLE) }

describe('controllers', () => {
  it('refuses usage errors (exit 2) before any request; --help prints the usage', async () => {
    const help = await run(['--help'], {})
    expect([help.code, help.out.join('\n')]).toEqual([0, USAGE])
    for (const c of ['controllers list [--json]', 'controllers remove <controllerId> [--force] [--json]', 'controller_lease_held', 'GATEWAY_TOKEN', 'DELETE /v1/admin/controllers/<controllerId>']) expect(USAGE, c).toContain(c)
    const env = { GATEWAY_URL: 'http://127.0.0.1:9', GATEWAY_TOKEN: 'tok-env-0123456789abcdef' }
    const cases: Array<[string[], Record<string, string | undefined>, RegExp]> = [
      [['list', '--token', 'tok-in-argv-0123456789'], env, /--token is not accepted: set GATEWAY_TOKEN in the environment/],
      [['list'], { GATEWAY_URL: env.GATEWAY_URL }, /GATEWAY_TOKEN is not set/],
      [[], env, /needs list or remove/],
      [['purge'], env, /unknown subcommand purge/],
      [['list', 'extra'], env, /unexpected argument extra/],
      [['list', '--force'], env, /--force goes with remove only/],
      [['remove'], env, /remove needs one <controllerId>/],
      [['remove', 'ctl 1'], env, /<controllerId> must be 1–128 ASCII characters/],
      [['remove', 'ctl\u200b-1'], env, /<controllerId> must be 1–128 ASCII characters/],
      [['list', '--verbose'], env, /unknown option --verbose/],
      [['list', '--url', 'ftp://example'], env, /must be http:\/\/ or https:\/\//],
      // the admin token never crosses a network in clear (refused before any lookup or connection)
      [['list', '--url', 'http://gateway.invalid:8080'], env, /plain http:\/\/ is accepted to loopback only/],
      [['remove', 'ctl-1'], { ...env, GATEWAY_URL: 'http://192.0.2.10' }, /plain http:\/\/ is accepted to loopback only/]
    ]
    for (const [args, e, message] of cases) {
      const r = await run(args, e)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.err.join('\n'), args.join(' ')).toMatch(message)
    }
  })

  it('list and remove against a gateway: the table, --json, a removal in any letter case, error answers', async ({ controlPair: p }) => {
    const env = { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: p.gw.tokens.admin }
    const empty = await run(['list'], env)
    expect([empty.code, empty.out], empty.all).toEqual([0, ['no controller bindings']])
    await claim(p, p.gw.tokens.controller, 'camp-cli')
    await claim(p, p.gw.tokens.all, 'camp-cli-2')

    const list = await run(['list'], env)
    expect(list.code, list.all).toBe(0)
    expect(list.out[0]).toMatch(/^CONTROLLER\s+IDENTITY\s+CALLER\s+BOUND$/)
    expect(list.out.slice(1, 3).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([['ctl-1', 'static:controller', 'controller'], ['ctl-all', 'static:all', 'all']])
    expect(list.out[3]).toBe('2 binding(s); free one with: openoperator-gateway controllers remove <controllerId>')
    const json = await run(['list', '--json'], env)
    expect(JSON.parse(json.out.join(''))).toEqual({ controllers: [expect.objectContaining({ controllerId: 'ctl-1', identity: 'static:controller' }), expect.objectContaining({ controllerId: 'ctl-all' })] })

    // ctl-1 holds the lease on camp-cli: kept, with what to do about it
    const held = await run(['remove', 'CTL-1'], env)
    expect([held.code, held.out]).toEqual([1, []])
    expect(held.err).toEqual([
      expect.stringMatching(/^controllers remove CTL-1: controller_lease_held \(HTTP 409\): The controller id holds a live lease \(camp-cli\)/),
      expect.stringMatching(/^the binding stays: .*Release the lease or let it expire, or remove the binding anyway with --force$/)
    ])
    expect((await run(['list', '--json'], env)).out.join('')).toContain('"ctl-1"')
    const removed = await run(['remove', 'CTL-1', '--force'], env)
    expect([removed.code, removed.out]).toEqual([0, ['removed the binding of CTL-1 (forced): the next caller identity to use it in a mutation binds it']])
    expect(p.gw.logs.join('')).toMatch(/"event":"controller-unbound","controllerId":"CTL-1","by":"admin","byIdentity":"static:admin","boundIdentity":"static:controller","boundCaller":"controller","forced":true,"liveLeases":\["camp-cli"\]/)
    const again = await run(['remove', 'ctl-1', '--json'], env)
    expect(again.code).toBe(1)
    expect(again.err).toEqual([expect.stringMatching(/^controllers remove ctl-1: not_found \(HTTP 404\): /), 'no binding holds this controller id (openoperator-gateway controllers list)'])
    expect((await run(['list', '--json'], env)).out.join('')).not.toContain('"ctl-1"')

    const scope = await run(['list'], { ...env, GATEWAY_TOKEN: p.gw.tokens.controller })
    expect([scope.code, scope.err]).toEqual([1, [expect.stringMatching(/^controllers list: forbidden \(HTTP 403\)/), 'the token lacks the admin scope']])
    const unknown = await run(['list'], { ...env, GATEWAY_TOKEN: 'tok-not-a-caller-0123456789' })
    expect([unknown.code, unknown.err[0]]).toEqual([1, expect.stringMatching(/^controllers list: unauthorized \(HTTP 401\)/)])
    await p.gw.close()
    const gone = await run(['list'], env)
    expect([gone.code, gone.err]).toEqual([1, [expect.stringMatching(/^controllers: no answer from http:\/\/127\.0\.0\.1:\d+\/ \(ECONN(REFUSED|RESET)\)$/)]])
  })

  it('an answer holding escape sequences or bidirectional controls prints none of them; --json keeps the value, escaped', async () => {
    const evil = { controllerId: 'ctl-1\u202e', identity: 'jwt:https://idp#\u001b]0;pwned\u0007x', caller: 'jwt:\u009b2J\u200bteam', boundAt: '2026-12-01T00:00:00.000Z\u2028' }
    const server: Server = createServer((req, res) => {
      if (req.method === 'GET') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ controllers: [evil] }))
      else res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found\u001b[31m', message: 'gone \u001b[2J\u202e', retryable: false } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    onTestFinished(async () => { await new Promise<void>((resolve) => server.close(() => { resolve() })) })
    const env = { GATEWAY_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GATEWAY_TOKEN: 'tok-env-0123456789abcdef' }

    const list = await run(['list'], env)
    expect(list.code).toBe(0)
    expectPrintable(list)
    expect(list.out[1]).toContain('jwt:https://idp#?]0;pwned?x')
    const json = await run(['list', '--json'], env)
    expectPrintable(json)
    expect(JSON.parse(json.out.join(''))).toEqual({ controllers: [evil] })
    const remove = await run(['remove', 'ctl-1'], env)
    expect(remove.code).toBe(1)
    expectPrintable(remove)
    expect(remove.err[0]).toBe('controllers remove ctl-1: not_found?[31m (HTTP 404): gone ?[2J?')
  })
})
