// Campaign control end to end over real sockets (docs/design.md#campaign-control): claim,
// read, intervene, submit, cancel, renew with readback, release; the exact wire params with
// the constraints envelope on every claim and mutation; the ledger's view of each request.
import { describe, expect } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

const ENVELOPE = '{"version":1,"execution":"remote_only","allow_publication":false,"allow_destructive_git":false,"allow_credential_changes":false,"allow_force_push":false,"allow_merge":false}'

describe('campaign control, one campaign from claim to release', () => {
  it('claims, intervenes, submits, cancels, renews and releases, sending each once with the envelope', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = 'camp-1'

    const claimed = await claim(p, t, c, 300)
    expect(claimed.body.lease).toMatchObject({ controllerId: 'ctl-1', epoch: 1 })
    expect(claimed.body.lease.expiresAt).toBeGreaterThan(Date.now() / 1000 + 250)

    const read = await p.get(p.gw.tokens.reader, `/v1/campaigns/${c}/control`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ campaignId: c, lease: claimed.body.lease })

    const iv = await p.post(t, `/v1/campaigns/${c}/interventions`, { requestId: rid('iv'), intervention: { pause: true } })
    expect(iv.status, JSON.stringify(iv.body)).toBe(200)
    expect(iv.body).toMatchObject({ accepted: true, campaignId: c })
    expect(p.sim.control.interventions(c)).toHaveLength(1)
    expect(p.sim.control.interventions(c)[0]!.intervention).toEqual({ pause: true })

    const subId = rid('sub')
    const sub = await p.post(t, `/v1/campaigns/${c}/submissions`, { requestId: subId, parts: [{ kind: 'text', text: 'train it' }], project: 'proj-a' })
    expect(sub.status, JSON.stringify(sub.body)).toBe(202)
    expect(sub.body).toMatchObject({ requestId: subId, state: 'submitted' })
    expect(typeof sub.body.taskId).toBe('string')

    const cancelId = rid('cancel')
    const cancel = await p.post(t, `/v1/campaigns/${c}/cancel`, { requestId: cancelId })
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200)
    expect(cancel.body).toMatchObject({ taskId: sub.body.taskId, state: 'canceled' })
    // tasks/get first, then the advertised cancel on the bound task
    const methods = p.sim.rpcCalls().map((x) => x.method)
    expect(methods.lastIndexOf('tasks/get')).toBeLessThan(methods.lastIndexOf('tasks/cancel'))

    const renew = await p.post(t, `/v1/campaigns/${c}/control/renew`, { request_id: rid('renew'), ttl_seconds: 900 })
    expect(renew.status, JSON.stringify(renew.body)).toBe(200)
    expect(renew.body.lease.epoch).toBe(1)
    expect(renew.body.lease.expiresAt).toBeGreaterThan(claimed.body.lease.expiresAt)
    // the renewal is read back with a fresh read_control
    const after = p.sim.rpcCalls().map((x) => x.method)
    expect(after.lastIndexOf('campaign/read_control')).toBeGreaterThan(after.lastIndexOf('campaign/renew_control'))

    const rel = await p.post(t, `/v1/campaigns/${c}/control/release`, {}, { 'idempotency-key': rid('rel') })
    expect(rel.status, JSON.stringify(rel.body)).toBe(200)
    expect(rel.body.released).toBe(true)
    expect(p.sim.control.lease(c)).toBeNull()

    // the wire: snake_case params, the caller's controller id, the request id, the envelope byte for byte
    const mutations = p.sim.rpcCalls().filter((x) => x.method.startsWith('campaign/') && x.method !== 'campaign/read_control' && x.method !== 'campaign/request_status')
    expect(mutations.map((x) => x.method)).toEqual(['campaign/claim_control', 'campaign/intervene', 'campaign/renew_control', 'campaign/release_control'])
    for (const m of mutations) {
      expect(JSON.stringify(m.params.constraints)).toBe(ENVELOPE)
      expect(m.params.controller_id).toBe('ctl-1')
      expect(m.params.campaign_id).toBe(c)
      expect(m.params.request_id).toBe(m.id)
      if (m.method !== 'campaign/claim_control') expect(m.params.controller_epoch).toBe(1)
    }
    const send = p.calls('message/send').at(-1)!
    expect(send.params.configuration).toEqual({ blocking: false, acceptedOutputModes: ['application/json'] })
    expect(send.params.message.messageId).toBe(subId)
    expect(send.params.message.parts).toEqual([{ kind: 'text', text: 'train it' }])
    expect(JSON.stringify(send.params.message.metadata.argus_supervisor.constraints)).toBe(ENVELOPE)
    expect(send.params.message.metadata.argus_supervisor).toMatchObject({ campaign_id: c, controller_id: 'ctl-1', controller_epoch: 1, request_id: subId, project: 'proj-a' })
    const cancelCall = p.calls('tasks/cancel').at(-1)!
    expect(cancelCall.params.id).toBe(sub.body.taskId)
    expect(JSON.stringify(cancelCall.params.metadata.argus_supervisor.constraints)).toBe(ENVELOPE)
    expect(cancelCall.params.metadata.argus_supervisor).toMatchObject({ campaign_id: c, controller_id: 'ctl-1', controller_epoch: 1, request_id: cancelId })

    // the ledger: every request, newest first; details only for the caller or an admin
    const list = await p.get(p.gw.tokens.reader, `/v1/campaigns/${c}/requests`)
    expect(list.status).toBe(200)
    expect(list.body.requests.map((r: { operation: string }) => r.operation)).toEqual(['release', 'renew', 'cancel', 'submit', 'intervene', 'claim'])
    expect(list.body.requests.every((r: { state: string }) => r.state === 'applied')).toBe(true)
    expect(list.body.requests.some((r: object) => 'params' in r || 'answer' in r)).toBe(false)
    const own = await p.get(t, `/v1/campaigns/${c}/requests/${subId}`)
    expect(own.body).toMatchObject({ requestId: subId, operation: 'submit', state: 'applied', taskId: sub.body.taskId, caller: 'controller', params: { parts: [{ kind: 'text', text: 'train it' }] } })
    const admin = await p.get(p.gw.tokens.admin, `/v1/campaigns/${c}/requests/${subId}`)
    expect(admin.body.answer).toMatchObject({ httpStatus: 202 })
    const filtered = await p.get(p.gw.tokens.reader, `/v1/campaigns/${c}/requests?state=ambiguous`)
    expect(filtered.body.requests).toEqual([])
  })

  it('uses the method names the card advertises, never its own', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { operations: { claim_control: 'ctl.claim', read_control: 'ctl.read', intervene: 'ctl.poke' } } } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-m')
    const iv = await p.post(t, '/v1/campaigns/camp-m/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(iv.status).toBe(200)
    expect(p.calls('ctl.claim')).toHaveLength(1)
    expect(p.calls('ctl.poke')).toHaveLength(1)
    expect(p.calls('campaign/claim_control')).toHaveLength(0)
  })

  it('takes the controller id from the authenticated caller only', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.all, 'camp-who')
    expect(p.calls('campaign/claim_control')[0]!.params.controller_id).toBe('ctl-all')
    const res = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-who/interventions', { requestId: rid(), intervention: { x: 1 }, controller_id: 'ctl-1' })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('reserved_field')
  })
})
