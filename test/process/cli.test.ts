// The bin as a user runs it (docs/design.md#production,
// docs/design.md#embedded-default-and-simulator): no configuration starts the gateway on the
// embedded simulator and prints one dev token; production refuses to start without each required
// variable, naming every one.
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { call } from '../helpers/http.js'
import { startBin, startGatewayChild, waitFor, type GatewayChild } from '../helpers/child.js'

const run = startGatewayChild // the bin with a clean environment, killed after each test

/** whether a TCP connection to host:port is accepted */
async function accepts (host: string, port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = connect({ host, port, timeout: 2000 })
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => { resolve(false) })
    s.once('timeout', () => { s.destroy(); resolve(false) })
  })
}

/** an address of this machine other than loopback, if it has one */
const outsideAddress = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address

describe('the bin', () => {
  it('starts with no configuration: embedded simulator, dev token printed once, health works, SIGTERM exits 0', async () => {
    const p = run({ HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0' })
    const token = await waitFor(() => /dev token \(all scopes, this run only\): (\S+)/.exec(p.out())?.[1], 15_000)
    const url = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(p.out())?.[1], 5_000)
    const res = await call(`${url}/v1/supervisor/health`, { token })
    expect(res.status).toBe(200)
    expect(res.body.result.ok).toBe(true)
    expect(p.out().split(token).length - 1).toBe(2) // the token line and the curl hint, nothing else
    p.child.kill('SIGTERM')
    expect(await p.exited).toBe(0)
  })

  it('with HOST unset outside production, both listeners bind 127.0.0.1 only, and say so; HOST keeps its meaning', async () => {
    const dev = run({ PORT: '0', METRICS_PORT: '0' })
    await waitFor(() => /dev token \(all scopes, this run only\)/.exec(dev.out()) ?? undefined, 15_000)
    const listening = await waitFor(() => /"url":"http:\/\/127\.0\.0\.1:(\d+)","metricsUrl":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(dev.out()) ?? undefined, 5_000)
    const ports = [Number(listening[1]), Number(listening[2])]
    expect(dev.out()).toContain('HOST is unset: both listeners bind 127.0.0.1, reachable from this machine only (the development default); set HOST=0.0.0.0 to listen on every interface')
    for (const port of ports) expect(await accepts('127.0.0.1', port)).toBe(true)
    if (outsideAddress === undefined) {
      console.log('no non-loopback IPv4 address on this machine: the outside-address check is skipped')
    } else {
      for (const port of ports) expect(await accepts(outsideAddress, port), `${outsideAddress}:${port}`).toBe(false)
    }
    dev.child.kill('SIGTERM')
    expect(await dev.exited).toBe(0)

    // set, HOST is what it says: the same check then reaches the listeners from outside
    const all = run({ HOST: '0.0.0.0', PORT: '0', METRICS_PORT: '0' })
    const open = await waitFor(() => /"url":"http:\/\/127\.0\.0\.1:(\d+)","metricsUrl":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(all.out()) ?? undefined, 15_000)
    expect(all.out()).not.toContain('HOST is unset')
    if (outsideAddress !== undefined) {
      for (const port of [Number(open[1]), Number(open[2])]) expect(await accepts(outsideAddress, port), `${outsideAddress}:${port}`).toBe(true)
    }
  })

  it('refuses to start in production without each required variable, naming each', async () => {
    const p = run({ NODE_ENV: 'production', SPYNEL_AGENT_ZERO_API_KEY: 'prod-secret-do-not-print' })
    const code = await p.exited
    expect(code).not.toBe(0)
    for (const name of ['OPENOPERATOR_URL', 'GATEWAY_CALLERS', 'GATEWAY_LEDGER_URL']) expect(p.err()).toContain(name)
    expect(p.err()).not.toContain('prod-secret-do-not-print')
    expect(p.out()).toBe('')
  })

  it('a bad configuration names every problem at once, exit 1, the secret never printed', async () => {
    const p = run({
      PORT: 'abc',
      GATEWAY_CALLERS: JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read'] }, { name: 'ctl', tokenSha256: 'b'.repeat(64), scopes: ['control'] }]),
      GATEWAY_TRUST_PROXY: 'yes',
      SPYNEL_AGENT_ZERO_API_KEY: 'too-short-secret'.slice(0, 15)
    })
    expect(await p.exited).toBe(1)
    expect(p.err().trim().split('\n')).toEqual([
      'invalid configuration:',
      '  - PORT: must be a whole number from 0 to 65535',
      '  - SPYNEL_AGENT_ZERO_API_KEY: must be at least 16 characters (a random value: the gateway refuses any answer that contains it)',
      '  - GATEWAY_CALLERS[1].controllerId: required for a caller with the control scope',
      expect.stringMatching(/^ {2}- GATEWAY_TRUST_PROXY: must be false, true, a hop count/)
    ])
    expect(p.err()).not.toContain('too-short-secre')
    expect(p.out()).toBe('')
  })

  it('refuses plain http to a non-loopback host', async () => {
    const p = run({ OPENOPERATOR_URL: 'http://openoperator.example' })
    expect(await p.exited).toBe(1)
    expect(p.err()).toMatch(/OPENOPERATOR_URL must be https/)
  })

  it('SIMULATOR_PROFILE=campaign-control GATEWAY_CONTROL_ENABLED=true: a newcomer claims, submits, intervenes and cancels with the dev token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-cli-'))
    try {
      const p = run({ HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', SIMULATOR_PROFILE: 'campaign-control', GATEWAY_CONTROL_ENABLED: 'true', GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}` })
      const token = await waitFor(() => /dev token \(all scopes, this run only\): (\S+)/.exec(p.out())?.[1], 15_000)
      const url = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(p.out())?.[1], 5_000)
      const post = async (path: string, body: object) => await call(`${url}/v1/campaigns/demo${path}`, { method: 'POST', token, body })
      expect((await call(`${url}/v1/upstream`, { token })).body.mode).toBe('controller')
      const claimed = await post('/control/claim', { requestId: 'newcomer-claim-1', ttlSeconds: 300 })
      expect(claimed.status, claimed.text).toBe(200)
      expect(claimed.body.lease.controllerId).toBe('dev')
      expect((await post('/submissions', { requestId: 'newcomer-submit-1', parts: [{ kind: 'text', text: 'hello' }] })).status).toBe(202)
      expect((await post('/interventions', { requestId: 'newcomer-poke-1', intervention: { note: 'hi' } })).status).toBe(200)
      expect((await post('/cancel', { requestId: 'newcomer-cancel-1' })).status).toBe(200)
      const list = await call(`${url}/v1/campaigns/demo/requests`, { token })
      expect(list.body.requests).toHaveLength(4)
      p.child.kill('SIGTERM')
      expect(await p.exited).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the bin\'s help', () => {
  const done = async (p: GatewayChild): Promise<{ code: number | null; out: string; err: string }> => {
    const code = await p.exited
    return { code, out: p.out(), err: p.err() }
  }
  const commandsOf = (overview: string): string[] =>
    [...overview.split('commands:\n')[1]!.split('\n\n')[0]!.matchAll(/^ {2}(\S+) /gm)].map((m) => m[1]!)

  it('--help, -h and help list every command on stdout, exit 0', async () => {
    const [long, short, word] = await Promise.all([['--help'], ['-h'], ['help']].map(async (a) => await done(startBin(a))))
    for (const r of [long!, short!, word!]) {
      expect(r.code).toBe(0)
      expect(r.err).toBe('')
      expect(r.out).toMatch(/^usage: openoperator-gateway \[command\]/)
      expect(r.out).toBe(long!.out)
    }
    expect(commandsOf(long!.out)).toEqual(expect.arrayContaining(['start', 'simulator', 'qualify', 'ledger', 'requests', 'reconcile', 'acknowledge', 'controllers', 'help']))
  })

  it('help <command> and <command> --help print that command\'s usage, for every command listed', async () => {
    const commands = commandsOf((await done(startBin(['help']))).out)
    const answers = await Promise.all(commands.flatMap((c) => [['help', c], [c, '--help']].map(async (a) => ({ command: c, a, r: await done(startBin(a)) }))))
    for (const { command, a, r } of answers) {
      expect(r.code, a.join(' ')).toBe(0)
      expect(r.err, a.join(' ')).toBe('')
      expect(r.out, a.join(' ')).toMatch(/^usage: openoperator-gateway /)
      expect(r.out, a.join(' ')).toContain(command)
    }
    // both spellings print the same text
    for (let i = 0; i < answers.length; i += 2) expect(answers[i]!.r.out).toBe(answers[i + 1]!.r.out)
  // eighteen bins started at once: on two busy cores their starts alone can pass the default 20 s
  }, 60_000)

  it('an unknown command is one line and the usage on stderr, exit 2; so is an argument start does not take', async () => {
    const [unknown, helpUnknown, startArg] = await Promise.all([['frobnicate'], ['help', 'frobnicate'], ['start', '--verbose']].map(async (a) => await done(startBin(a, { PORT: '0', METRICS_PORT: '0' }))))
    for (const r of [unknown!, helpUnknown!]) {
      expect(r.code).toBe(2)
      expect(r.out).toBe('')
      const [first, blank, ...usage] = r.err.trim().split('\n')
      expect(first).toBe('unknown command "frobnicate"')
      expect(blank).toBe('')
      expect(usage[0]).toMatch(/^usage: openoperator-gateway/)
    }
    expect(startArg!.code).toBe(2)
    expect(startArg!.out).toBe('') // it did not start
    expect(startArg!.err.split('\n')[0]).toBe('start: unexpected argument "--verbose"')
    expect(startArg!.err).toMatch(/usage: openoperator-gateway \[start\]/)
  })
})
