// A remote that refuses an A2A version with -32009 (docs/design.md#protocol-versions): the refusal
// darkens nothing for good. A dual card falls back to the other version it offers at once; the
// refused version is spoken again after a back-off that starts at VERSION_RETRY_FIRST_MS and
// doubles, up to VERSION_RETRY_MAX_MS, while each probe is refused (a flood counts once; an
// answer over the version resets it); a v1.0-only card goes dark only until then. On v0.3, where
// -32009 is no defined code, it is an ordinary upstream error: 502 for that read, nothing marked.
// A mutation answered -32009 stays ambiguous.
import { describe, expect } from 'vitest'
import { VERSION_RETRY_FIRST_MS, VERSION_RETRY_MAX_MS } from '../../src/discovery/version-backoff.js'
import type { Simulator } from '../../src/simulator/index.js'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const get = async (g: TestGateway, path: string) => await call(`${g.url}${path}`, { token: g.tokens.reader })
const upstream = async (g: TestGateway) => (await get(g, '/v1/upstream')).body
/** the capabilities /v1/upstream shows unavailable */
const unavailable = (u: { capabilities: Record<string, { state: string }> }): string[] => Object.entries(u.capabilities).filter(([, c]) => c.state === 'unavailable').map(([name]) => name)

/** the gateway's clock, moved by the test */
function movableClock (): { now: () => number; advance: (ms: number) => void } {
  let offset = 0
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms } }
}

const refuse = (sim: Simulator, rpcMethod: string, times = 1): void => {
  sim.inject({ rpcMethod }, { kind: 'rpc-error', code: -32009, message: 'The requested A2A protocol version is not supported.' }, times)
}

/** one health read; returns the JSON-RPC method it was sent as */
async function healthVia (sim: Simulator, g: TestGateway): Promise<string | undefined> {
  const before = sim.rpcCalls().length
  const res = await get(g, '/v1/supervisor/health')
  expect(res.status, res.text).toBe(200)
  return sim.rpcCalls().slice(before).at(-1)?.method
}

/** a refusal answered now: the read that got it, and when /v1/upstream says the version is tried again */
async function refusedRead (sim: Simulator, g: TestGateway, clock: { now: () => number }, rpcMethod = 'SendMessage'): Promise<{ waitedMs: [number, number] }> {
  refuse(sim, rpcMethod)
  const t0 = clock.now()
  const res = await get(g, '/v1/supervisor/health')
  const t1 = clock.now()
  expect(res.status, res.text).toBe(503)
  expect(res.body.error.code).toBe('capability_unavailable')
  expect(res.body.error.missingPrerequisites).toEqual(['the remote does not accept A2A protocol version 1.0 (-32009), which its card advertises'])
  const until = Date.parse((await upstream(g)).protocol.refusedUntil as string)
  return { waitedMs: [until - t1, until - t0] }
}

describe('a remote that refuses an A2A version (-32009)', () => {
  it('a dual card: the next read is served over v0.3; after the back-off v1.0 is spoken again', async ({ startPair }) => {
    const clock = movableClock()
    const { sim, gw: g } = await startPair({ sim: { protocol: 'dual' }, clock: clock.now, env: { GATEWAY_RATE_LIMIT_READ: '100000' } })
    expect(await healthVia(sim, g)).toBe('SendMessage')
    const before = await upstream(g)

    const { waitedMs } = await refusedRead(sim, g, clock)
    expect(waitedMs[0]).toBeLessThanOrEqual(VERSION_RETRY_FIRST_MS)
    expect(waitedMs[1]).toBeGreaterThanOrEqual(VERSION_RETRY_FIRST_MS)
    const u = await upstream(g)
    expect(u.protocol).toMatchObject({ version: '0.3', refusedVersion: '1.0' })
    expect(u.protocol.reason).toContain('refused A2A 1.0 (-32009)')
    expect(u.mode).toBe(before.mode)
    expect(u.capabilities).toEqual(before.capabilities)
    // every read, Argus and task alike, over v0.3 while 1.0 is refused
    expect(await healthVia(sim, g)).toBe('message/send')
    expect((await get(g, '/v1/campaigns')).status).toBe(200)
    expect((await get(g, '/v1/tasks/no-such-task')).status).toBe(404)
    expect(sim.rpcCalls().at(-1)?.method).toBe('tasks/get')
    expect(sim.rpcCalls().at(-1)?.headers['a2a-version']).toBeUndefined()

    clock.advance(VERSION_RETRY_FIRST_MS - 1000)
    expect(await healthVia(sim, g)).toBe('message/send')
    clock.advance(1000)
    expect(await healthVia(sim, g)).toBe('SendMessage')
    expect((await upstream(g)).protocol).toMatchObject({ version: '1.0', refusedVersion: null, refusedUntil: null })
    expect(g.logs.some((l) => l.includes('the remote refused an A2A protocol version its card advertises'))).toBe(true)
  })

  it('each refused probe doubles the wait up to the maximum; a flood counts once; an answer over the version starts it again', async ({ startPair }) => {
    const clock = movableClock()
    const { sim, gw: g } = await startPair({ sim: { protocol: 'dual' }, clock: clock.now, env: { GATEWAY_RATE_LIMIT_READ: '100000' } })
    let wait = VERSION_RETRY_FIRST_MS
    for (let i = 0; i < 9; i++) {
      const { waitedMs } = await refusedRead(sim, g, clock)
      expect(waitedMs[0], `refusal ${i + 1}`).toBeLessThanOrEqual(wait)
      expect(waitedMs[1], `refusal ${i + 1}`).toBeGreaterThanOrEqual(wait)
      // (the clock runs on meanwhile: a margin of half a second)
      clock.advance(wait - 500)
      expect(await healthVia(sim, g)).toBe('message/send')
      clock.advance(500)
      wait = Math.min(wait * 2, VERSION_RETRY_MAX_MS)
    }
    expect(wait).toBe(VERSION_RETRY_MAX_MS)
    // the probe answered: the next refusal waits the first delay again
    expect(await healthVia(sim, g)).toBe('SendMessage')
    // a flood: six reads in flight over 1.0, all refused; the version is refused once
    refuse(sim, 'SendMessage', 3)
    refuse(sim, 'GetTask', 3)
    const t0 = clock.now()
    const answers = await Promise.all(['/v1/supervisor/health', '/v1/supervisor/status', '/v1/campaigns', '/v1/tasks/t-1', '/v1/tasks/t-2', '/v1/tasks/t-3'].map(async (p) => await get(g, p)))
    // those sent before the first refusal came back are refused; any sent after it went over v0.3
    for (const a of answers) expect([200, 404, 503], a.text).toContain(a.status)
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThanOrEqual(1)
    const until = Date.parse((await upstream(g)).protocol.refusedUntil as string)
    expect(until - t0).toBeGreaterThanOrEqual(VERSION_RETRY_FIRST_MS)
    expect(until - clock.now()).toBeLessThanOrEqual(VERSION_RETRY_FIRST_MS)
  })

  it('a v1.0-only card: dark only until the back-off ends, then spoken again', async ({ startPair }) => {
    const clock = movableClock()
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0' }, clock: clock.now })
    await refusedRead(sim, g, clock)
    const u = await upstream(g)
    expect(u.protocol).toMatchObject({ version: null, refusedVersion: '1.0' })
    expect(u.capabilities['argus.supervisor.health'].state).toBe('unavailable')
    expect(u.missingPrerequisites.join(' ')).toContain('the remote refused A2A protocol version 1.0 (-32009)')
    const sent = sim.rpcCalls().length
    const dark = await get(g, '/v1/supervisor/health')
    expect(dark.status).toBe(503)
    expect(dark.body.error.code).toBe('capability_unavailable')
    expect(sim.rpcCalls().length).toBe(sent)
    clock.advance(VERSION_RETRY_FIRST_MS)
    expect(await healthVia(sim, g)).toBe('SendMessage')
    expect((await upstream(g)).capabilities['argus.supervisor.health'].state).toBe('available')
  })

  it('a v0.3-only remote answering -32009 (no code of v0.3): 502 for that read only, nothing marked', async ({ startPair }) => {
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v0.3' } })
    const before = await upstream(g)
    refuse(sim, 'message/send')
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status, res.text).toBe(502)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(await healthVia(sim, g)).toBe('message/send')
    refuse(sim, 'tasks/get')
    const task = await get(g, '/v1/tasks/t-1')
    expect(task.status, task.text).toBe(502)
    expect(task.body.error.code).toBe('upstream_rejected')
    const u = await upstream(g)
    expect(u.protocol).toMatchObject({ version: '0.3', refusedVersion: null, refusedUntil: null })
    expect(unavailable(u)).toEqual(unavailable(before))
    expect((await get(g, '/v1/campaigns')).status).toBe(200)
  })

  it('a mutation answered -32009 over v1.0 is ambiguous; a dual card goes on over v0.3 in controller mode', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { protocol: 'dual' } })
    const t = p.gw.tokens.controller
    expect((await p.get(t, '/v1/upstream')).body).toMatchObject({ mode: 'controller', protocol: { version: '1.0' } })
    refuse(p.sim, 'campaign/claim_control')
    const res = await p.post(t, '/v1/campaigns/camp-vns/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('ambiguous_write')
    const u = (await p.get(t, '/v1/upstream')).body
    expect(u).toMatchObject({ mode: 'controller', protocol: { version: '0.3', refusedVersion: '1.0' } })
    await claim(p, t, 'camp-vns-2')
    expect(p.sim.rpcCalls().at(-1)?.headers['a2a-version']).toBeUndefined()
  })

  it('a mutation answered -32009 over v0.3 is ambiguous, and nothing is marked (v0.3 defines no such code)', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { protocol: 'v0.3' } })
    const t = p.gw.tokens.controller
    refuse(p.sim, 'campaign/claim_control')
    const res = await p.post(t, '/v1/campaigns/camp-vns/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('ambiguous_write')
    expect((await p.get(t, '/v1/upstream')).body).toMatchObject({ mode: 'controller', protocol: { version: '0.3', refusedVersion: null } })
    await claim(p, t, 'camp-vns-2')
  })
})
