// Discovery and the capability model over real sockets (docs/design.md#discovery-and-capabilities).
import { describe, expect } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { it } from '../helpers/fixtures.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { CONTROL_METHODS } from '../helpers/fake-upstream.js'

const URN = 'urn:openoperator:campaign-control:v1'
// the seed's operations map, as the gateway's tests write it once
const OPS = CONTROL_METHODS
const withControl = (params: Record<string, unknown>) => (card: Record<string, unknown>) => ({
  ...card,
  capabilities: { ...(card.capabilities as object), extensions: [{ uri: URN, params }] }
})

const cardGets = (s: Simulator) => s.received.filter((r) => r.method === 'GET' && r.path.includes('.well-known')).map((r) => r.path)
const upstream = async (g: TestGateway) => (await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })).body
const refresh = async (g: TestGateway) => await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })

describe('card discovery', () => {
  it('uses agent-card.json when served and identifies skills by id', async ({ sim, gw }) => {
    const u = await upstream(gw)
    expect(cardGets(sim)).toEqual(['/a2a/.well-known/agent-card.json'])
    expect(u.card.path).toBe('/.well-known/agent-card.json')
    expect(u.card.skillIds).toEqual(expect.arrayContaining(['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list']))
    expect(u.cardUrlMismatch).toBe(false)
    expect(u.capabilities['argus.supervisor.health']).toMatchObject({ state: 'available' })
    expect(u.capabilities['a2a.message.send']).toMatchObject({ state: 'tentative' })
    expect(u.mode).toBe('observer')
  })

  it('falls back to agent.json on a 404 (plain FastA2A 0.5)', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { profile: 'fasta2a' } })
    expect(cardGets(sim)).toEqual(['/a2a/.well-known/agent-card.json', '/a2a/.well-known/agent.json'])
    expect((await upstream(gw)).card.path).toBe('/.well-known/agent.json')
  })

  it('falls back on a 405 and on an invalid card, but not on a 500', async ({ sim }) => {
    sim.inject('agent-card', { kind: 'status', status: 405, body: '' }, 1)
    const gw = await startGateway({ simulator: sim })
    expect(cardGets(sim)).toEqual(['/a2a/.well-known/agent-card.json', '/a2a/.well-known/agent.json'])

    sim.received.length = 0
    sim.inject('agent-card', { kind: 'status', status: 200, body: '{"name":"no skills"}', contentType: 'application/json' }, 1)
    expect((await refresh(gw)).body.card.path).toBe('/.well-known/agent.json')
    expect(cardGets(sim)).toEqual(['/a2a/.well-known/agent-card.json', '/a2a/.well-known/agent.json'])

    sim.received.length = 0
    sim.inject('agent-card', { kind: 'status', status: 500 }, 1)
    const r = await refresh(gw)
    expect(r.body.consecutiveFailures).toBe(1)
    expect(cardGets(sim)).toEqual(['/a2a/.well-known/agent-card.json'])
  })

  it('keeps the last good card on a transient failure; two failures in a row mean observer mode, readiness stays', async ({ startPair }) => {
    const { sim, gw } = await startPair({ sim: { card: withControl({ lease_epoch_enforced: true, policy_enforced: true, operations: OPS }) }, env: { GATEWAY_CONTROL_ENABLED: 'true' } })
    expect((await upstream(gw)).mode).toBe('controller')
    sim.inject('card', { kind: 'status', status: 503 }, 2)
    const first = (await refresh(gw)).body
    expect(first).toMatchObject({ mode: 'controller', consecutiveFailures: 1 })
    expect(first.card.name).toBeTypeOf('string')
    const second = (await refresh(gw)).body
    expect(second.mode).toBe('observer')
    expect(second.missingPrerequisites).toContain('the last two agent card refreshes failed')
    expect(second.capabilities['argus.supervisor.health'].state).toBe('available')
    expect((await call(`${gw.url}/readyz`)).status).toBe(200)
    expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
    const third = (await refresh(gw)).body
    expect(third).toMatchObject({ mode: 'controller', consecutiveFailures: 0 })
  })

  it('reports a card url naming another origin, and never fetches it', async ({ startPair }) => {
    let hits = 0
    const other = await startSimulator()
    const { gw } = await startPair({ sim: { card: (c) => ({ ...c, url: `${other.url}/a2a/` }) } })
    await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    hits = other.received.length
    expect((await upstream(gw)).cardUrlMismatch).toBe(true)
    expect(hits).toBe(0)
    await other.close()
  })

  it('is not ready until a card is discovered; a failure at start is not fatal', async ({ sim }) => {
    sim.inject('card', { kind: 'status', status: 500 }, 1)
    const gw = await startGateway({ simulator: sim })
    const ready = await call(`${gw.url}/readyz`)
    expect(ready.status).toBe(503)
    expect(ready.body.checks.card).toBe(false)
    expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).body.error.code).toBe('capability_unavailable')
    await refresh(gw)
    expect((await call(`${gw.url}/readyz`)).status).toBe(200)
  })

  it('refreshes on its timer', async ({ startPair }) => {
    const { sim } = await startPair({ env: { GATEWAY_DISCOVERY_INTERVAL_MS: '150' } })
    await new Promise((r) => setTimeout(r, 500))
    expect(cardGets(sim).length).toBeGreaterThanOrEqual(3)
  })
})

describe('campaign-control detection', () => {
  const cases: Array<[string, Record<string, unknown> | undefined, string[]]> = [
    ['no extension', undefined, [`card does not advertise ${URN}`]],
    ['policy not enforced', { lease_epoch_enforced: true, policy_enforced: false, operations: OPS }, ['params.policy_enforced is not true']],
    ['leases not enforced', { lease_epoch_enforced: 'yes', policy_enforced: true, operations: OPS }, ['params.lease_epoch_enforced is not true']],
    ['read_control missing', { lease_epoch_enforced: true, policy_enforced: true, operations: { ...OPS, read_control: undefined } }, ['operation read_control is not advertised']]
  ]
  for (const [name, params, expected] of cases) {
    it(`stays observer with exact prerequisites: ${name}`, async ({ startPair }) => {
      const { gw } = await startPair({ sim: params === undefined ? {} : { card: withControl(params) }, env: { GATEWAY_CONTROL_ENABLED: 'true' } })
      const u = await upstream(gw)
      expect(u.mode).toBe('observer')
      expect(u.missingPrerequisites).toEqual(expected)
    })
  }

  it('needs the operator opt-in even when the remote qualifies, and uses advertised method names', async ({ startPair }) => {
    const { gw } = await startPair({ sim: { card: withControl({ lease_epoch_enforced: true, policy_enforced: true, operations: { ...OPS, intervene: 'x/intervene_v2' } }) } })
    const u = await upstream(gw)
    expect(u.mode).toBe('observer')
    expect(u.missingPrerequisites).toEqual(['GATEWAY_CONTROL_ENABLED is not true'])
    expect(u.capabilities['control.intervene']).toEqual({ state: 'available', reason: 'advertised as x/intervene_v2' })
    expect(u.capabilities['control.project_selection'].state).toBe('unavailable')
  })

  it('detects each operation on its own', async ({ startPair }) => {
    const { gw } = await startPair({ sim: { card: withControl({ lease_epoch_enforced: true, policy_enforced: true, project_selection: true, operations: { claim_control: 'c', read_control: 'r' } }) }, env: { GATEWAY_CONTROL_ENABLED: 'true' } })
    const u = await upstream(gw)
    expect(u.mode).toBe('controller')
    expect(u.missingPrerequisites).toEqual([])
    expect(u.capabilities['control.claim_control'].state).toBe('available')
    expect(u.capabilities['control.intervene']).toEqual({ state: 'unavailable', reason: 'operation intervene is not advertised' })
    expect(u.capabilities['control.project_selection'].state).toBe('available')
  })
})
