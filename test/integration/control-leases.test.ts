// Lease rules over real sockets (docs/design.md#leases): local state refuses, never
// authorises; another controller's lease and an expiring one are refused with nothing sent;
// the remote's stale-epoch and lease reasons map to their REST codes; renewal readback.
import { describe, expect } from 'vitest'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

const mutationCalls = (p: ControlPair): number =>
  p.sim.rpcCalls().filter((c) => ['campaign/intervene', 'campaign/renew_control', 'campaign/release_control', 'message/send', 'tasks/cancel'].includes(c.method)).length

describe('leases', () => {
  it('another caller\'s lease is refused locally, with no upstream call at all', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-l')
    const before = p.sim.rpcCalls().length
    for (const [path, body] of [
      ['interventions', { intervention: { a: 1 } }],
      ['submissions', { parts: [{ kind: 'text', text: 'x' }] }],
      ['control/renew', { ttlSeconds: 60 }],
      ['control/release', {}]
    ] as const) {
      const res = await p.post(p.gw.tokens.all, `/v1/campaigns/camp-l/${path}`, { requestId: rid(), ...body })
      expect(res.status, path).toBe(409)
      expect(res.body.error.code).toBe('lease_not_held')
    }
    expect(p.sim.rpcCalls().length).toBe(before)
  })

  it('a lease that expires within the safety margin is refused locally, with no upstream call', async ({ startControlPair }) => {
    const p = await startControlPair({ env: { GATEWAY_LEASE_SAFETY_MS: '30000' } })
    await claim(p, p.gw.tokens.controller, 'camp-x', 20)
    const before = p.sim.rpcCalls().length
    const res = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-x/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('lease_expired')
    expect(p.sim.rpcCalls().length).toBe(before)
    // a refusal before sending writes no record: the id is not used
    const list = await p.get(p.gw.tokens.reader, '/v1/campaigns/camp-x/requests')
    expect(list.body.requests.map((r: { operation: string }) => r.operation)).toEqual(['claim'])
  })

  it('no lease at all: read_control first, then lease_not_held, nothing mutating sent', async ({ controlPair: p }) => {
    const res = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-none/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('lease_not_held')
    expect(p.calls('campaign/read_control')).toHaveLength(1)
    expect(mutationCalls(p)).toBe(0)
  })

  it('a stale epoch is refused by the remote: 409 stale_epoch, recorded rejected, lease unknown after', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-s')
    // the remote moved on (a takeover and back) without the gateway seeing it
    p.sim.control.setLease('camp-s', { controller_id: 'ctl-1', epoch: 4, expires_at: Math.floor(Date.now() / 1000) + 600 })
    const id = rid()
    const res = await p.post(t, '/v1/campaigns/camp-s/interventions', { requestId: id, intervention: { a: 1 } })
    expect(res.status).toBe(409)
    expect(res.body.error).toMatchObject({ code: 'stale_epoch', requestId: id })
    expect(p.calls('campaign/intervene')[0]!.params.controller_epoch).toBe(1)
    const rec = await p.get(t, `/v1/campaigns/camp-s/requests/${id}`)
    expect(rec.body).toMatchObject({ state: 'rejected', outcomeCode: 'stale_epoch', controllerEpoch: 1 })
    // the next mutation reads the lease first and carries the remote's epoch
    const next = await p.post(t, '/v1/campaigns/camp-s/interventions', { requestId: rid(), intervention: { a: 2 } })
    expect(next.status).toBe(200)
    expect(p.calls('campaign/intervene')[1]!.params.controller_epoch).toBe(4)
  })

  it('a claim over another controller\'s lease is 409 lease_held_by_other; after expiry a takeover gets a higher epoch', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-t', 15)
    const res = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-t/control/claim', { requestId: rid(), ttlSeconds: 60 })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('lease_held_by_other')
    // the lease lapses at the remote (moving the remote's clock alone would skew it past the
    // margin, and mutations would then be refused with clock_skew: docs/design.md#one-clock)
    p.sim.control.setLease('camp-t', { controller_id: 'ctl-1', epoch: 1, expires_at: Math.floor(p.sim.control.now() / 1000) - 1 })
    const taken = await claim(p, p.gw.tokens.all, 'camp-t', 60)
    expect(taken.body.lease).toMatchObject({ controllerId: 'ctl-all', epoch: 2 })
    // the first controller's local view is now wrong; the remote decides
    const stale = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-t/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(stale.status).toBe(409)
    expect(['lease_not_held', 'lease_expired', 'stale_epoch', 'lease_held_by_other']).toContain(stale.body.error.code)
  })

  it('a renewal that does not read back equal is applied, answered 502 lease_readback_mismatch, lease unknown', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-rb')
    p.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'rpc-error', code: -32603, message: 'x' }, 1)
    const id = rid()
    const res = await p.post(t, '/v1/campaigns/camp-rb/control/renew', { requestId: id, ttlSeconds: 120 })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('lease_readback_mismatch')
    const rec = await p.get(t, `/v1/campaigns/camp-rb/requests/${id}`)
    expect(rec.body.state).toBe('applied')
    const reads = p.calls('campaign/read_control').length
    expect((await p.post(t, '/v1/campaigns/camp-rb/interventions', { requestId: rid(), intervention: { a: 1 } })).status).toBe(200)
    expect(p.calls('campaign/read_control').length).toBe(reads + 1)
  })

  it('a readback that differs only in expires_at is a mismatch too', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const claimed = await claim(p, t, 'camp-rx')
    p.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'result', result: { lease: { controller_id: 'ctl-1', epoch: claimed.body.lease.epoch, expires_at: claimed.body.lease.expiresAt } } }, 1)
    const res = await p.post(t, '/v1/campaigns/camp-rx/control/renew', { requestId: rid(), ttlSeconds: 1200 })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('lease_readback_mismatch')
  })

  it('an epoch lower than one already seen is 502 upstream_invalid_response', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-lo')
    p.sim.control.setLease('camp-lo', { controller_id: 'ctl-1', epoch: 9, expires_at: Math.floor(Date.now() / 1000) + 600 })
    expect((await p.get(p.gw.tokens.reader, '/v1/campaigns/camp-lo/control')).body.lease.epoch).toBe(9)
    p.sim.control.setLease('camp-lo', { controller_id: 'ctl-1', epoch: 3, expires_at: Math.floor(Date.now() / 1000) + 600 })
    const res = await p.get(p.gw.tokens.reader, '/v1/campaigns/camp-lo/control')
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_invalid_response')
  })
})

describe('cancel', () => {
  it('needs a bound task, and refuses one already terminal after tasks/get, sending no cancel', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c')
    const none = await p.post(t, '/v1/campaigns/camp-c/cancel', { requestId: rid() })
    expect(none.status).toBe(409)
    expect(none.body.error.code).toBe('no_bound_task')
    const sub = await p.post(t, '/v1/campaigns/camp-c/submissions', { requestId: rid(), parts: [{ kind: 'data', data: { plan: 'x' } }] })
    expect(sub.status).toBe(202)
    expect((await p.post(t, '/v1/campaigns/camp-c/cancel', { requestId: rid() })).status).toBe(200)
    const twice = await p.post(t, '/v1/campaigns/camp-c/cancel', { requestId: rid() })
    expect(twice.status).toBe(409)
    expect(twice.body.error.code).toBe('task_not_cancelable')
    expect(p.calls('tasks/cancel')).toHaveLength(1)
  })
})
