// Controller mode and each operation's own detection over real sockets
// (docs/design.md#discovery-and-capabilities): observer mode answers every mutation route 503
// with the exact missing prerequisites; -32601 marks an operation unavailable.
import { describe, expect } from 'vitest'
import { call } from '../helpers/http.js'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

const ROUTES = ['control/claim', 'control/renew', 'control/release', 'submissions', 'interventions', 'cancel']
const BODIES: Record<string, object> = {
  'control/claim': { ttlSeconds: 60 },
  'control/renew': { ttlSeconds: 60 },
  'control/release': {},
  submissions: { parts: [{ kind: 'text', text: 'x' }] },
  interventions: { intervention: { a: 1 } },
  cancel: {}
}

describe('observer mode', () => {
  it('the default remote (OpenOperator today) advertises no control: every mutation route is 503 with the reason', async ({ startPair }) => {
    const { sim, gw } = await startPair({ env: { GATEWAY_CONTROL_ENABLED: 'true' } })
    for (const route of ROUTES) {
      const res = await call(`${gw.url}/v1/campaigns/c1/${route}`, { method: 'POST', token: gw.tokens.controller, body: { requestId: rid(), ...BODIES[route] } })
      expect(res.status, route).toBe(503)
      expect(res.body.error.code).toBe('capability_unavailable')
      expect(res.body.error.missingPrerequisites).toEqual(['card does not advertise urn:openoperator:campaign-control:v1'])
    }
    expect(sim.rpcCalls()).toHaveLength(0)
  })

  it('names GATEWAY_CONTROL_ENABLED, policy and read_control exactly', async ({ startControlPair }) => {
    const off = await startControlPair({ env: { GATEWAY_CONTROL_ENABLED: 'false' } })
    const a = await off.post(off.gw.tokens.controller, '/v1/campaigns/c/control/claim', { requestId: rid(), ttlSeconds: 60 })
    expect(a.body.error.missingPrerequisites).toEqual(['GATEWAY_CONTROL_ENABLED is not true'])

    const policy = await startControlPair({ sim: { campaignControl: { policyEnforced: false } } })
    const b = await policy.post(policy.gw.tokens.controller, '/v1/campaigns/c/control/claim', { requestId: rid(), ttlSeconds: 60 })
    expect(b.body.error.missingPrerequisites).toEqual(['params.policy_enforced is not true'])

    const noRead = await startControlPair({ sim: { campaignControl: { operations: { read_control: null } } } })
    const c = await noRead.post(noRead.gw.tokens.controller, '/v1/campaigns/c/control/claim', { requestId: rid(), ttlSeconds: 60 })
    expect(c.body.error.missingPrerequisites).toEqual(['operation read_control is not advertised'])
    const up = await noRead.get(noRead.gw.tokens.reader, '/v1/upstream')
    expect(up.body.mode).toBe('observer')
    expect(up.body.missingPrerequisites).toEqual(['operation read_control is not advertised'])
    for (const p of [off, policy, noRead]) expect(p.sim.control.requestCounts().size).toBe(0)
  })

  it('a replay is answered even after the gateway has become an observer', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-r')
    const id = rid()
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-r/interventions', { requestId: id, intervention: { a: 1 } })).status).toBe(200)
    p.sim.setCard((card) => ({ ...card, capabilities: {} }))
    await p.post(p.gw.tokens.admin, '/v1/upstream/refresh')
    const replay = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-r/interventions', { requestId: id, intervention: { a: 1 } })
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const fresh = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-r/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(fresh.status).toBe(503)
  })
})

describe('each operation on its own', () => {
  it('an operation missing from the card is 503 on its route only', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { operations: { intervene: null } } } })
    await claim(p, p.gw.tokens.controller, 'camp-1')
    const res = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-1/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(res.status).toBe(503)
    expect(res.body.error.missingPrerequisites).toEqual(['operation intervene is not advertised'])
  })

  it('-32601 marks the operation unavailable until the card changes', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-2')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'rpc-error', code: -32601, message: 'Method not found' }, 1)
    const first = await p.post(t, '/v1/campaigns/camp-2/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(first.status).toBe(503)
    expect(first.body.error.code).toBe('capability_unavailable')
    const second = await p.post(t, '/v1/campaigns/camp-2/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(second.status).toBe(503)
    expect(second.body.error.missingPrerequisites).toEqual(['operation intervene answered method not found'])
    expect(p.calls('campaign/intervene')).toHaveLength(1)
    const up = await p.get(p.gw.tokens.reader, '/v1/upstream')
    expect(up.body.capabilities['control.intervene'].state).toBe('unavailable')
    // claim is unaffected
    await claim(p, t, 'camp-3')
  })

  it('project selection needs params.project_selection', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { projectSelection: false } } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-p')
    const res = await p.post(t, '/v1/campaigns/camp-p/submissions', { requestId: rid(), parts: [{ kind: 'text', text: 'x' }], project: 'p1' })
    expect(res.status).toBe(503)
    expect(res.body.error.missingPrerequisites).toEqual(['params.project_selection is not true'])
    const ok = await p.post(t, '/v1/campaigns/camp-p/submissions', { requestId: rid(), parts: [{ kind: 'text', text: 'x' }] })
    expect(ok.status).toBe(202)
  })

  it('OpenAPI documents every control route with its error responses', async ({ controlPair: p }) => {
    const doc = (await p.get(p.gw.tokens.reader, '/openapi.json')).body
    for (const route of ROUTES) {
      const op = doc.paths[`/v1/campaigns/{campaignId}/${route}`]?.post
      expect(op, route).toBeDefined()
      for (const status of ['400', '401', '403', '409', '413', '422', '503', '504']) expect(op.responses[status], `${route} ${status}`).toBeDefined()
    }
    for (const path of ['/v1/campaigns/{campaignId}/control', '/v1/campaigns/{campaignId}/requests', '/v1/campaigns/{campaignId}/requests/{requestId}']) expect(doc.paths[path]?.get, path).toBeDefined()
    for (const path of ['/v1/campaigns/{campaignId}/requests/{requestId}/reconcile', '/v1/campaigns/{campaignId}/requests/{requestId}/acknowledge']) expect(doc.paths[path]?.post, path).toBeDefined()
  })
})
