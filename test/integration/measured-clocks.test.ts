// Measured clocks only (docs/design.md#one-clock; CONTRACT §14): a replica sends nothing that
// depends on a lease before it has measured the remote's clock, itself or through another
// replica's measurement in the ledger; a step of its wall clock drops every measurement; the
// margins add; and after a start nothing settles early on a wall clock that jumped. Each case is
// the gateway on loopback against the simulator in campaign-control mode, whose clock — and the
// Date of its answers — the test moves; what reached the remote is read from the remote.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { CONTROL_ENV, CONTROL_SIM, claim, controlPairOf, expectEachRequestOnce, rid, type ControlPair } from '../helpers/control.js'
import { startGateway, type GatewayOverrides, type TestGateway } from '../helpers/gateway.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.log('measured-clocks: TEST_POSTGRES_URL is unset: the case of two replicas on one PostgreSQL ledger is skipped')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function simulator (): Promise<Simulator> {
  const sim = await startSimulator(CONTROL_SIM)
  cleanups.push(async () => {
    expectEachRequestOnce(sim)
    await sim.close()
  })
  return sim
}

function sqliteFile (): string {
  const dir = mkdtempSync(join(tmpdir(), 'oogw-clocks-'))
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }) })
  return `sqlite:${join(dir, 'ledger.db')}`
}

/** a gateway in controller mode on `ledger`, sharing the first one's tokens when given */
async function gateway (sim: Simulator, ledger: string, o: Omit<GatewayOverrides, 'simulator'> = {}): Promise<ControlPair> {
  const gw: TestGateway = await startGateway({ simulator: sim, ...o, env: { ...CONTROL_ENV, GATEWAY_LEDGER_URL: ledger, GATEWAY_LEASE_SAFETY_MS: '2000', ...o.env } })
  return controlPairOf(sim, gw)
}

const MUTATING = ['campaign/intervene', 'campaign/renew_control', 'campaign/release_control', 'message/send', 'tasks/cancel']
const mutations = (p: ControlPair): number => p.sim.rpcCalls().filter((c) => MUTATING.includes(c.method)).length

async function submit (p: ControlPair, token: string, campaignId: string): Promise<void> {
  const res = await p.post(token, `/v1/campaigns/${campaignId}/submissions`, { requestId: rid('sub'), parts: [{ kind: 'text', text: 'train' }] })
  expect(res.status, JSON.stringify(res.body)).toBe(202)
}

/**
 * a clock the test steps: `wall` is the gateway's wall clock, `mono` its monotonic clock;
 * `pass` is time passing (both, and the remote's), `step` moves the wall clock alone
 */
function steppedClocks (sim: Simulator): { wall: () => number; mono: () => number; pass: (ms: number) => void; step: (ms: number) => void } {
  let passed = 0
  let stepped = 0
  return {
    wall: () => Date.now() + passed + stepped,
    mono: () => performance.now() + passed,
    pass: (ms) => {
      passed += ms
      sim.control.advanceClock(ms)
    },
    step: (ms) => { stepped += ms }
  }
}

describe('no lease-dependent send on an unmeasured clock', () => {
  it('a restarted replica with the remote 13.6 s ahead measures the remote with a lease read first, and refuses the cancel 503 clock_skew, nothing sent', async () => {
    const sim = await simulator()
    const ledger = sqliteFile()
    const a = await gateway(sim, ledger)
    const t = a.gw.tokens.controller
    await claim(a, t, 'camp-restart', 15)
    await submit(a, t, 'camp-restart')
    await a.gw.close()
    // the remote's clock runs 13.6 s ahead of this machine's from now on: 1.4 s left of the lease
    sim.control.advanceClock(13_600)
    const b = await gateway(sim, ledger, { tokens: a.gw.tokens })
    const reads = b.calls('campaign/read_control').length
    const before = mutations(b)
    const res = await b.post(t, '/v1/campaigns/camp-restart/cancel', { requestId: rid('cancel') })
    expect(res.status, JSON.stringify(res.body)).toBe(503)
    expect(res.body.error.code).toBe('clock_skew')
    expect(res.body.error.message).toMatch(/behind the remote's/)
    // the measurement was a lease read, and nothing mutating left
    expect(b.calls('campaign/read_control').length).toBeGreaterThan(reads)
    expect(mutations(b)).toBe(before)
    expect(b.calls('tasks/cancel')).toHaveLength(0)
    expect(b.gw.app.control.clocks.status()).toMatchObject({ ok: false })
  })

  it('a replica measures the remote with a lease read when it has none, then sends: one read, one intervention', async () => {
    const sim = await simulator()
    const ledger = sqliteFile()
    const a = await gateway(sim, ledger)
    const t = a.gw.tokens.controller
    await claim(a, t, 'camp-measure', 600)
    await a.gw.close()
    const b = await gateway(sim, ledger, { tokens: a.gw.tokens })
    expect(b.gw.app.control.clocks.status().remoteOffsetMs).toBeUndefined()
    const res = await b.post(t, '/v1/campaigns/camp-measure/interventions', { requestId: rid('iv'), intervention: { pause: true } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    // the lease read measured the remote's clock (its answer's Date) and gave the lease view: one read
    expect(b.calls('campaign/read_control')).toHaveLength(1)
    const s = b.gw.app.control.clocks.status()
    expect(Math.abs(s.remoteOffsetMs!)).toBeLessThanOrEqual(1000)
    expect(s.remoteWidthMs).toBeGreaterThanOrEqual(1000)
  })

  it.skipIf(PG === undefined)('PostgreSQL: a second replica uses the first one\'s measurement from the ledger: the remote 10 s ahead is 503 clock_skew on both, nothing sent, no lease read', async () => {
    const schema = await freshSchema(PG!)
    cleanups.push(schema.drop)
    const sim = await simulator()
    sim.control.advanceClock(10_000)
    const a = await gateway(sim, schema.url)
    const b = await gateway(sim, schema.url, { tokens: a.gw.tokens, callerPrefix: '' })
    const t = a.gw.tokens.controller
    // a claim depends on no lease: it is sent, and measures the remote's clock
    await claim(a, t, 'camp-pg', 15)
    const ownA = await a.post(t, '/v1/campaigns/camp-pg/interventions', { requestId: rid('iv'), intervention: { a: 1 } })
    expect(ownA.status, JSON.stringify(ownA.body)).toBe(503)
    expect(ownA.body.error.code).toBe('clock_skew')
    const reads = b.calls('campaign/read_control').length
    const res = await b.post(t, '/v1/campaigns/camp-pg/interventions', { requestId: rid('iv'), intervention: { a: 2 } })
    expect(res.status, JSON.stringify(res.body)).toBe(503)
    expect(res.body.error.code).toBe('clock_skew')
    expect(b.calls('campaign/read_control')).toHaveLength(reads)
    expect(b.calls('campaign/intervene')).toHaveLength(0)
  })
})

describe('a cancel decides on the measurement its own lease read takes', () => {
  it('the remote\'s clock steps 10 s ahead after this replica measured it: the cancel\'s fresh read sees it, 503 clock_skew, nothing sent', async () => {
    const sim = await simulator()
    const p = await gateway(sim, sqliteFile())
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-remote-step', 600)
    await submit(p, t, 'camp-remote-step')
    expect(Math.abs(p.gw.app.control.clocks.status().remoteOffsetMs!)).toBeLessThanOrEqual(1000)
    sim.control.advanceClock(10_000)
    const res = await p.post(t, '/v1/campaigns/camp-remote-step/cancel', { requestId: rid('cancel') })
    expect(res.status, JSON.stringify(res.body)).toBe(503)
    expect(res.body.error.code).toBe('clock_skew')
    expect(p.calls('tasks/cancel')).toHaveLength(0)
  })
})

describe('a step of the wall clock drops every measurement', () => {
  for (const stepMs of [-6000, 6000]) {
    it(`a step of ${stepMs / 1000} s after the measurement: the next mutation measures again first, and refuses 503 clock_skew, nothing sent`, async () => {
      const sim = await simulator()
      const clocks = steppedClocks(sim)
      const p = await gateway(sim, sqliteFile(), { clock: clocks.wall, monotonic: clocks.mono })
      const t = p.gw.tokens.controller
      await claim(p, t, 'camp-step', 15)
      await submit(p, t, 'camp-step')
      expect(p.gw.app.control.clocks.status().remoteOffsetMs).toBeDefined()
      clocks.step(stepMs)
      // 12 s of the 15 s lease pass: 3 s left, which a clock stepped back reads as 9 s
      clocks.pass(12_000)
      const reads = p.calls('campaign/read_control').length
      const res = await p.post(t, '/v1/campaigns/camp-step/cancel', { requestId: rid('cancel') })
      expect(res.status, JSON.stringify(res.body)).toBe(503)
      expect(res.body.error.code).toBe('clock_skew')
      expect(p.calls('campaign/read_control').length).toBeGreaterThan(reads)
      expect(p.calls('tasks/cancel')).toHaveLength(0)
      expect(p.gw.logs.some((l) => l.includes('"event":"clock_step"'))).toBe(true)
    })
  }

  it('a drift under a quarter of the margin moves the measurement with it: no new read, the mutation goes', async () => {
    const sim = await simulator()
    const clocks = steppedClocks(sim)
    const p = await gateway(sim, sqliteFile(), { clock: clocks.wall, monotonic: clocks.mono })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-drift', 600)
    const before = p.gw.app.control.clocks.status().remoteOffsetMs!
    clocks.step(-400)
    const reads = p.calls('campaign/read_control').length
    const res = await p.post(t, '/v1/campaigns/camp-drift/interventions', { requestId: rid('iv'), intervention: { a: 1 } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(p.calls('campaign/read_control')).toHaveLength(reads)
    // the remote is now 400 ms further ahead of this clock (its value nearest zero moves by as much, or to the interval's edge)
    const after = p.gw.app.control.clocks.status().remoteOffsetMs!
    expect(after).toBeGreaterThanOrEqual(before)
    expect(after - before).toBeLessThanOrEqual(400)
  })
})

describe('the margins add', () => {
  it('a tolerated skew of 1.9 s does not eat the cancel\'s 2 s margin: 3.5 s left on this clock is 409 lease_expired, nothing sent', async () => {
    const sim = await simulator()
    const clocks = steppedClocks(sim)
    // the remote runs 1.9 s ahead: within the 2 s margin, so tolerated
    sim.control.advanceClock(1900)
    const p = await gateway(sim, sqliteFile(), { clock: clocks.wall, monotonic: clocks.mono })
    const t = p.gw.tokens.controller
    const claimed = await claim(p, t, 'camp-margin', 15)
    await submit(p, t, 'camp-margin')
    const expiresAt = claimed.body.lease.expiresAt as number
    // 3.5 s of the lease left as this replica's clock reads it; 1.6 s as the remote's does
    clocks.pass(expiresAt * 1000 - clocks.wall() - 3500)
    // and the cancel would reach the remote's handler 2 s later: after the lease lapsed there
    sim.inject({ rpcMethod: 'tasks/cancel' }, { kind: 'delay', ms: 2000 }, 1)
    const res = await p.post(t, '/v1/campaigns/camp-margin/cancel', { requestId: rid('cancel') })
    expect(res.status, JSON.stringify(res.body)).toBe(409)
    expect(res.body.error.code).toBe('lease_expired')
    expect(p.calls('tasks/cancel')).toHaveLength(0)
    expect(sim.control.received().filter((r) => r.operation === 'cancel')).toHaveLength(0)
  })
})

describe('a restart never settles early', () => {
  it('restarted with its clock 40 s ahead, a submission the remote still holds is 409 reconcile_too_early, not not_applied; delivered, it reconciles applied', async () => {
    const sim = await simulator()
    const ledger = sqliteFile()
    const a = await gateway(sim, ledger, { env: { UPSTREAM_MUTATION_TIMEOUT_MS: '1000' } })
    const t = a.gw.tokens.controller
    await claim(a, t, 'camp-jump', 600)
    // the remote accepts the submission and holds it, unapplied, past the gateway's wait
    sim.inject({ rpcMethod: 'message/send' }, { kind: 'hold' }, 1)
    const id = rid('sub')
    const sent = await a.post(t, '/v1/campaigns/camp-jump/submissions', { requestId: id, parts: [{ kind: 'text', text: 'train' }] })
    expect(sent.status, JSON.stringify(sent.body)).toBe(504)
    await a.gw.close()
    const jumped = (): number => Date.now() + 40_000
    // the wall clock (SQLite's ledger clock) jumped 40 s: the record's deadline reads as past
    const b = await gateway(sim, ledger, { tokens: a.gw.tokens, clock: jumped, monotonic: () => performance.now() })
    expect((await b.get(t, `/v1/campaigns/camp-jump/requests/${id}`)).body.state).toBe('ambiguous')
    const early = await b.post(t, `/v1/campaigns/camp-jump/requests/${id}/reconcile`)
    expect(early.status, JSON.stringify(early.body)).toBe(409)
    expect(early.body.error.code).toBe('reconcile_too_early')
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(25)
    // nothing turned the record not_applied, and nothing is swept on the jumped clock either
    expect(await b.gw.app.control.sweep()).toEqual([])
    expect((await b.get(t, `/v1/campaigns/camp-jump/requests/${id}`)).body.state).toBe('ambiguous')
    // the remote applies it after all: the ledger then learns the truth
    expect(sim.deliverHeld()).toBe(1)
    const late = await b.post(t, `/v1/campaigns/camp-jump/requests/${id}/reconcile`)
    expect(late.status, JSON.stringify(late.body)).toBe(200)
    expect(late.body.state).toBe('applied')
  })
})
