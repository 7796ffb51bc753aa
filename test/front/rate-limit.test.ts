// The front door's mutations against the control budget (docs/api.md#a2a-front-door,
// docs/design.md#rate-limits): `POST /a2a/` counts as a read when it arrives, and a submission, a
// cancel or a campaign mutation is charged to the same per-caller control key REST's mutation
// routes use, in the same store, before anything reaches the pipeline. Past the budget it is the
// front door's -32016 `rate_limited` with Retry-After, and the remote never hears of it.
import { randomBytes } from 'node:crypto'
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { frontRpc } from '../helpers/http.js'
import { CONTROL_ENV, controlPairOf, rid, type ControlPair } from '../helpers/control.js'
import { startGateway } from '../helpers/gateway.js'

const URN = 'urn:openoperator:argus-supervisor:v1'
const REDIS = process.env.TEST_REDIS_URL
if (REDIS === undefined) console.warn('SKIP front-door rate limit across replicas: TEST_REDIS_URL is not set')

const submitSend = (campaignId: string, messageId: string) => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text: 'train it' }] }
})
const health = () => {
  const messageId = rid('msg')
  return {
    configuration: { blocking: true },
    message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] }
  }
}
/** every request id the remote heard, of any mutation */
const heard = (p: ControlPair): string[] => p.sim.rpcCalls().map((c) => JSON.stringify(c.params))

describe('front-door mutations and the control budget', () => {
  it('REST and front-door mutations of one caller share the budget; reads are not charged; past it nothing is sent', async ({ startControlPair }) => {
    const p = await startControlPair({ env: { GATEWAY_RATE_LIMIT_CONTROL: '4' } })
    const t = p.gw.tokens.controller
    const c = 'camp-rl-1'
    // reads first, more of them than the control budget: none is charged to it
    for (let i = 0; i < 3; i++) {
      expect((await frontRpc(p.gw.url, t, 'campaign/read_control', { campaign_id: c })).body.result).toEqual({ lease: null })
      expect((await frontRpc(p.gw.url, t, 'message/send', health())).body.result.kind).toBe('message')
    }
    // four mutations, REST and front door mixed: the budget
    expect((await p.post(t, `/v1/campaigns/${c}/control/claim`, { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(200)
    const sub = await frontRpc(p.gw.url, t, 'message/send', submitSend(c, rid('submit')))
    const taskId = sub.body.result.id as string
    expect(sub.headers['x-ratelimit-limit']).toBe('4')
    expect(sub.headers['x-ratelimit-remaining']).toBe('2')
    expect((await frontRpc(p.gw.url, t, 'tasks/get', { id: taskId })).body.result.id).toBe(taskId)
    expect((await frontRpc(p.gw.url, t, 'campaign/renew_control', { campaign_id: c, request_id: rid('renew'), ttl_seconds: 600 })).body.result.lease).toBeDefined()
    expect((await p.post(t, `/v1/campaigns/${c}/control/renew`, { requestId: rid('renew'), ttlSeconds: 600 })).status).toBe(200)

    // past it: each front-door mutation is -32016 with Retry-After, and the remote never hears of it
    const refused = [
      ['message/send', submitSend(c, rid('submit'))],
      ['tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: rid('cancel') } } }],
      ['campaign/release_control', { campaign_id: c, request_id: rid('release') }],
      ['campaign/claim_control', { campaign_id: c, request_id: rid('claim'), ttl_seconds: 600 }],
      ['campaign/intervene', { campaign_id: c, request_id: rid('intervene'), intervention: { kind: 'pause' } }]
    ] as const
    for (const [method, params] of refused) {
      const before = p.sim.rpcCalls().length
      const res = await frontRpc(p.gw.url, t, method, params)
      expect(res.status, method).toBe(200)
      expect(res.body.error, method).toMatchObject({ code: -32016, data: { code: 'rate_limited', retryable: true } })
      expect(Number(res.headers['retry-after']), method).toBeGreaterThanOrEqual(1)
      expect(res.headers['x-ratelimit-remaining'], method).toBe('0')
      expect(p.sim.rpcCalls().length, method).toBe(before)
      const id = JSON.stringify(params).match(/"(?:messageId|request_id)":"([^"]+)"/)![1]!
      expect(heard(p).some((x) => x.includes(id)), method).toBe(false)
    }
    // REST is refused from the same budget; reads still pass
    const rest = await p.post(t, `/v1/campaigns/${c}/control/release`, { requestId: rid('release') })
    expect(rest.status).toBe(429)
    expect(rest.body.error.code).toBe('rate_limited')
    expect((await frontRpc(p.gw.url, t, 'campaign/read_control', { campaign_id: c })).body.result.lease.controller_id).toBe('ctl-1')
    expect((await frontRpc(p.gw.url, t, 'tasks/get', { id: taskId })).body.result.id).toBe(taskId)
    expect((await frontRpc(p.gw.url, t, 'message/send', health())).body.result.kind).toBe('message')
    // another caller's budget is its own
    expect((await frontRpc(p.gw.url, p.gw.tokens.all, 'campaign/claim_control', { campaign_id: 'camp-rl-other', request_id: rid('claim'), ttl_seconds: 600 })).body.result.lease).toBeDefined()
    const metrics = await (await fetch(`${p.gw.metricsUrl}/metrics`)).text()
    for (const [method] of refused) expect(metrics).toContain(`gateway_a2a_requests_total{rpc_method="${method}",outcome="rate_limited"} 1`)
  })

  it.skipIf(REDIS === undefined)('replicas sharing Redis share one control budget across REST and the front door', async ({ controlPair: p }) => {
    const name = `rlf-${randomBytes(6).toString('hex')}`
    const env = { ...CONTROL_ENV, GATEWAY_REDIS_URL: REDIS!, GATEWAY_RATE_LIMIT_CONTROL: '2' }
    const a = controlPairOf(p.sim, await startGateway({ simulator: p.sim, env, callerPrefix: name }))
    const b = controlPairOf(p.sim, await startGateway({ simulator: p.sim, env, callerPrefix: name, tokens: a.gw.tokens }))
    const t = a.gw.tokens.controller
    expect((await a.post(t, '/v1/campaigns/camp-rl-a/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(200)
    expect((await frontRpc(b.gw.url, t, 'campaign/claim_control', { campaign_id: 'camp-rl-b', request_id: rid('claim'), ttl_seconds: 600 })).body.result.lease).toBeDefined()
    const id = rid('claim')
    const third = await frontRpc(a.gw.url, t, 'campaign/claim_control', { campaign_id: 'camp-rl-c', request_id: id, ttl_seconds: 600 })
    expect(third.body.error).toMatchObject({ code: -32016, data: { code: 'rate_limited' } })
    expect(third.headers['retry-after']).toBeDefined()
    expect(heard(p).some((x) => x.includes(id))).toBe(false)
    expect((await b.post(t, '/v1/campaigns/camp-rl-d/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(429)
    await b.gw.close()
    await a.gw.close()
  })
})
