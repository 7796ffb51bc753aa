// The operator's commands `requests`, `reconcile` and `acknowledge` (src/cli/requests-command.ts,
// docs/runbooks/ambiguous-write.md), in this process against a real gateway over its socket: the
// usage refusals (a token in the arguments above all), the table and its pages, --json, an error
// answer's contract code and exit status, a failed connection, an answer that is not the
// gateway's — and the token in none of the output. The runbook test runs the bin itself.
import { createServer } from 'node:net'
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici'
import { afterEach, describe, expect } from 'vitest'
import { runRequestsCommand, USAGE, type OperatorCommand } from '../../src/cli/requests-command.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

interface Run { code: number; out: string[]; err: string[]; all: string }

async function run (command: OperatorCommand, args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await runRequestsCommand(command, args, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  const all = [...out, ...err].join('\n')
  for (const secret of [env.GATEWAY_TOKEN, 'tok-in-argv-0123456789']) if (secret !== undefined && secret !== '') expect(all).not.toContain(secret)
  return { code, out, err, all }
}

let planted = 0
async function plantAmbiguous (p: ControlPair, campaignId: string): Promise<string> {
  const id = rid(`iv-${String(++planted).padStart(4, '0')}`)
  p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
  expect((await p.post(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/interventions`, { requestId: id, intervention: { a: 1 } })).status).toBe(504)
  return id
}

async function closedPort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

describe('usage', () => {
  it('--help prints the usage, which says why the token is read from the environment only', async () => {
    const r = await run('requests', ['--help'], {})
    expect(r.code).toBe(0)
    expect(r.out.join('\n')).toBe(USAGE)
    expect(USAGE).toMatch(/GATEWAY_TOKEN\s+the bearer token\. From the environment only, never an argument:\s+arguments show in `ps`/)
    for (const c of ['requests [--state ambiguous|pending] [--limit N]', 'reconcile <campaignId> <requestId>', 'acknowledge <campaignId> <requestId> --resolution', 'GATEWAY_URL', 'http://127.0.0.1:8080', 'docs/runbooks/ambiguous-write.md']) expect(USAGE, c).toContain(c)
  })

  it('refuses a token in the arguments, a missing GATEWAY_TOKEN and malformed options (exit 2), before any request', async () => {
    const env = { GATEWAY_URL: `http://127.0.0.1:${await closedPort()}`, GATEWAY_TOKEN: 'tok-env-0123456789abcdef' }
    const cases: Array<[OperatorCommand, string[], Record<string, string | undefined>, RegExp]> = [
      ['requests', ['--token', 'tok-in-argv-0123456789'], env, /--token is not accepted: set GATEWAY_TOKEN in the environment \(arguments show in `ps`\)/],
      ['reconcile', ['camp-1', 'req-12345678', '--token=tok-in-argv-0123456789'], env, /--token is not accepted/],
      ['requests', [], { GATEWAY_URL: env.GATEWAY_URL }, /GATEWAY_TOKEN is not set: the token is read from the environment only/],
      ['requests', ['--state', 'applied'], env, /--state is ambiguous or pending/],
      ['requests', ['--limit', '0'], env, /--limit is a whole number, 1-500/],
      ['requests', ['--limit', '501'], env, /--limit is a whole number, 1-500/],
      ['requests', ['--verbose'], env, /unknown option --verbose/],
      ['requests', ['camp-1'], env, /unexpected argument camp-1/],
      ['reconcile', ['camp-1'], env, /needs <campaignId> <requestId>/],
      ['reconcile', ['camp-1', 'req-12345678', '--state', 'ambiguous'], env, /--state does not apply here/],
      ['acknowledge', ['camp-1', 'req-12345678', '--note', 'x'], env, /--resolution is assume_applied or assume_not_applied/],
      ['acknowledge', ['camp-1', 'req-12345678', '--resolution', 'assume_applied'], env, /--note is needed/],
      ['requests', ['--url', 'ftp://example'], env, /must be http:\/\/ or https:\/\//]
    ]
    for (const [command, args, e, message] of cases) {
      const r = await run(command, args, e)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.err.join('\n'), args.join(' ')).toMatch(message)
      expect(r.err.join('\n')).toContain('usage: openoperator-gateway')
    }
  })

  it('no answer: exit 1 naming the gateway (its password redacted) and the error code', async () => {
    const port = await closedPort()
    const r = await run('requests', ['--url', `http://ops:pw-secret-1@127.0.0.1:${port}`], { GATEWAY_TOKEN: 'tok-env-0123456789abcdef' })
    expect(r.code).toBe(1)
    expect(r.err).toEqual([`requests: no answer from http://ops:***@127.0.0.1:${port}/ (ECONNREFUSED)`])
    expect(r.all).not.toContain('pw-secret-1')
  })
})

describe('transport: https, or plain http to loopback only', () => {
  // every connection the command would open, recorded and failed at once: no DNS lookup, no
  // socket, nothing leaves this machine (gateway.invalid never resolves anyway, RFC 6761)
  const attempts: string[] = []
  const before = getGlobalDispatcher()
  const recorder = new Agent({
    connect: (opts, callback) => {
      attempts.push(`${String(opts.protocol)}//${String(opts.hostname)}`)
      callback(Object.assign(new Error('recorded, not connected'), { code: 'E_RECORDED' }), null)
    }
  })
  afterEach(() => { setGlobalDispatcher(before); attempts.length = 0 })
  const token = 'tok-env-0123456789abcdef'

  it('refuses plain http to a host that is not loopback before any connection (exit 2, saying why): the token would cross the network in clear', async () => {
    setGlobalDispatcher(recorder)
    const hosts = ['gateway.invalid', 'gateway.example.com:8080', '192.0.2.10:8080', '10.0.0.1', '0.0.0.0:8080', '[2001:db8::1]:8080', '[::ffff:127.0.0.1]', '127.0.0.1.nip.io', 'localhost.example', 'ops:pw-secret-1@gw.invalid']
    for (const host of hosts) {
      for (const [args, env] of [[['--url', `http://${host}/`], { GATEWAY_TOKEN: token }], [[], { GATEWAY_URL: `http://${host}`, GATEWAY_TOKEN: token }]] as const) {
        const r = await run('requests', [...args], env)
        expect(r.code, host).toBe(2)
        expect(r.err[0], host).toMatch(/^requests: --url \/ GATEWAY_URL: plain http:\/\/ is accepted to loopback only \(127\.0\.0\.0\/8, ::1, localhost\): the token would cross the network unencrypted; use https:\/\//)
        expect(r.all).not.toContain('pw-secret-1')
      }
      for (const [command, args] of [['reconcile', ['camp-1', 'req-12345678']], ['acknowledge', ['camp-1', 'req-12345678', '--resolution', 'assume_applied', '--note', 'n']]] as const) {
        expect((await run(command, [...args, '--url', `http://${host}`], { GATEWAY_TOKEN: token })).code, `${command} ${host}`).toBe(2)
      }
    }
    expect(attempts).toEqual([])
  })

  it('plain http to loopback (127.0.0.0/8, ::1, localhost) and https to any host are tried', async () => {
    setGlobalDispatcher(recorder)
    const urls = ['http://127.0.0.1:1', 'http://127.8.9.10:1', 'http://[::1]:1', 'http://localhost:1', 'http://LocalHost:1', 'https://gateway.invalid', 'https://192.0.2.10:8443']
    for (const url of urls) {
      const r = await run('requests', ['--url', url], { GATEWAY_TOKEN: token })
      expect(r.code, url).toBe(1)
      expect(r.err[0], url).toMatch(/^requests: no answer from .* \(E_RECORDED\)$/)
    }
    expect(attempts).toEqual(['http://127.0.0.1', 'http://127.8.9.10', 'http://::1', 'http://localhost', 'http://localhost', 'https://gateway.invalid', 'https://192.0.2.10'])
  })
})

describe('against a gateway', () => {
  it('requests: a table oldest first, pages with --cursor, --json, and an empty list', async ({ controlPair: p }) => {
    const env = { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: p.gw.tokens.admin }
    const none = await run('requests', [], env)
    expect([none.code, none.out]).toEqual([0, ['no unresolved (ambiguous or pending) requests']])

    for (const c of ['camp-c1', 'camp-c2', 'camp-c3']) await claim(p, p.gw.tokens.controller, c)
    const ids = [await plantAmbiguous(p, 'camp-c2'), await plantAmbiguous(p, 'camp-c1'), await plantAmbiguous(p, 'camp-c3')]

    const page1 = await run('requests', ['--state', 'ambiguous', '--limit', '2'], env)
    expect(page1.code, page1.all).toBe(0)
    expect(page1.out[0]).toMatch(/^CAMPAIGN\s+REQUEST\s+OPERATION\s+STATE\s+CALLER\s+CREATED\s+EPOCH\s+RECONCILE FAILURES$/)
    expect(page1.out.slice(1, 3).map((l) => l.split(/\s+/).slice(0, 5))).toEqual([
      ['camp-c2', ids[0], 'intervene', 'ambiguous', 'controller'],
      ['camp-c1', ids[1], 'intervene', 'ambiguous', 'controller']
    ])
    expect(page1.out[3]).toBe('2 ambiguous request(s), oldest first; resolve each with: openoperator-gateway reconcile <campaignId> <requestId>')
    const more = /^more: openoperator-gateway requests --state ambiguous --limit 2 --cursor (\S+)$/.exec(page1.out[4] ?? '')
    expect(more, page1.all).not.toBeNull()
    const page2 = await run('requests', ['--state=ambiguous', '--limit=2', '--cursor', more![1]!], env)
    expect(page2.out.slice(1, 2).map((l) => l.split(/\s+/)[1])).toEqual([ids[2]])
    expect(page2.out.some((l) => l.startsWith('more:'))).toBe(false)

    const json = await run('requests', ['--json'], env)
    const body = JSON.parse(json.out.join('')) as { requests: Array<{ requestId: string; params: unknown }>; nextCursor: string | null }
    expect(body.requests.map((r) => r.requestId)).toEqual(ids)
    expect(body.nextCursor).toBeNull()
  })

  it('an error answer: exit 1 with the contract code, status and what to do; never the token', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-e1')
    const id = await plantAmbiguous(p, 'camp-e1')
    const url = { GATEWAY_URL: p.gw.url }

    const unknown = await run('requests', [], { ...url, GATEWAY_TOKEN: 'tok-not-a-caller-0123456789' })
    expect(unknown.code).toBe(1)
    expect(unknown.err[0]).toMatch(/^requests: unauthorized \(HTTP 401\): /)
    const scope = await run('reconcile', ['camp-e1', id], { ...url, GATEWAY_TOKEN: p.gw.tokens.admin })
    expect(scope.err[0]).toMatch(new RegExp(`^reconcile camp-e1 ${id}: forbidden \\(HTTP 403\\)`))
    expect(scope.err).toContain('the token lacks the scope: requests and acknowledge need admin, reconcile needs control')
    const other = await run('reconcile', ['camp-other', id], { ...url, GATEWAY_TOKEN: p.gw.tokens.controller })
    expect(other.err[0]).toMatch(/not_found \(HTTP 404\)/)
    const unsafe = await run('acknowledge', ['camp-e1', id, '--resolution', 'assume_applied', '--note', 'seen'], { ...url, GATEWAY_TOKEN: p.gw.tokens.admin })
    expect([unsafe.code, unsafe.err[0]]).toEqual([1, expect.stringMatching(/acknowledge_unsafe \(HTTP 409\): The remote offers request_status: reconcile the request first\./)])

    // --json on success: the Request as the gateway answered it
    const ok = await run('reconcile', ['camp-e1', id, '--json'], { ...url, GATEWAY_TOKEN: p.gw.tokens.controller })
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.out.join(''))).toMatchObject({ requestId: id, campaignId: 'camp-e1', state: 'applied', resolution: { kind: 'reconcile' } })
    // reconciled again: answered as it stands, nothing asked
    const again = await run('reconcile', ['camp-e1', id], { ...url, GATEWAY_TOKEN: p.gw.tokens.controller })
    expect(again.out.at(-1)).toBe('resolved: the remote applied it; the campaign accepts mutations again (never send it again)')
    expect(p.calls('campaign/request_status')).toHaveLength(1)
  })

  it('an answer that is not the gateway\'s (a proxy, the wrong port) is said to be so', async ({ controlPair: p }) => {
    const r = await run('requests', ['--url', p.sim.url], { GATEWAY_TOKEN: p.gw.tokens.admin })
    expect(r.code).toBe(1)
    expect(r.err[0]).toMatch(/^requests: HTTP \d{3}, not a gateway error body/)
  })
})
