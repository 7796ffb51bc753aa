// What the first audit of the control plane found when time and other actors interleave
// (docs/design.md#campaign-control): each case reproduces one defect over real sockets and
// holds the reading docs/design.md settles for it.
import { describe, expect } from 'vitest'
import { request } from 'undici'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { startGateway } from '../helpers/gateway.js'
import { startSimulator } from '../../src/simulator/index.js'
import { startForwarder } from '../helpers/forwarder.js'
import { call } from '../helpers/http.js'

const sentCancels = (p: ControlPair): number => p.calls('tasks/cancel').length

/** a clock that runs with real time plus an offset the test moves */
function movableClock (): { now: () => number; advance: (ms: number) => void } {
  let offset = 0
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms } }
}

async function submit (p: ControlPair, token: string, campaignId: string, requestId = rid('sub')) {
  return await p.post(token, `/v1/campaigns/${campaignId}/submissions`, { requestId, parts: [{ kind: 'text', text: 'train' }] })
}

describe('cancel authorises at the remote', () => {
  it('a lease that lapses while tasks/get runs: 409 and no tasks/cancel sent (the lease is read after the task)', async ({ startControlPair }) => {
    // the read deadline well past the 4-s answer: at the test gateway's 4-s read timeout
    // (test/helpers/gateway.ts) the answer and the deadline raced, and the test read a 504
    // instead of the lapsed lease
    const p = await startControlPair({ env: { UPSTREAM_READ_TIMEOUT_MS: '10000' } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c1')
    expect((await submit(p, t, 'camp-c1')).status).toBe(202)
    // the remote's lease now ends in 4 s; the gateway's known lease still says 600 s
    p.sim.control.setLease('camp-c1', { controller_id: 'ctl-1', epoch: 1, expires_at: Math.floor(p.sim.control.now() / 1000) + 4 })
    p.sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 4000 }, 1)
    const res = await p.post(t, '/v1/campaigns/camp-c1/cancel', { requestId: rid('cancel') })
    expect(res.status, JSON.stringify(res.body)).toBe(409)
    // read_control after the task: the lease is gone (lease_not_held), or inside the margin (lease_expired)
    expect(['lease_expired', 'lease_not_held']).toContain(res.body.error.code)
    expect(sentCancels(p)).toBe(0)
  })

  it('a lease the remote gives away while tasks/get runs: 409 lease_not_held, no tasks/cancel sent (docs/design.md#leases)', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c0')
    expect((await submit(p, t, 'camp-c0')).status).toBe(202)
    // the gateway knows the lease (its own claim); the remote hands it to another controller
    // while the cancel's tasks/get is answered slowly
    p.sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 800 }, 1)
    const cancelling = p.post(t, '/v1/campaigns/camp-c0/cancel', { requestId: rid('cancel') })
    const deadline = Date.now() + 5000
    while (!p.sim.rpcCalls().some((c) => c.method === 'tasks/get') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
    p.sim.control.setLease('camp-c0', { controller_id: 'ctl-other', epoch: 7, expires_at: Math.floor(p.sim.control.now() / 1000) + 600 })
    const res = await cancelling
    expect(res.status, JSON.stringify(res.body)).toBe(409)
    expect(res.body.error.code).toBe('lease_not_held')
    expect(sentCancels(p)).toBe(0)
    expect(p.sim.rpcCalls().map((c) => c.method).slice(-2)).toEqual(['tasks/get', 'campaign/read_control'])
  })

  it('a known local lease does not authorise: another controller\'s takeover is seen by read_control, nothing sent', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c2')
    expect((await submit(p, t, 'camp-c2')).status).toBe(202)
    p.sim.control.setLease('camp-c2', { controller_id: 'ctl-other', epoch: 2, expires_at: Math.floor(p.sim.control.now() / 1000) + 600 })
    const reads = p.calls('campaign/read_control').length
    const res = await p.post(t, '/v1/campaigns/camp-c2/cancel', { requestId: rid('cancel') })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('lease_not_held')
    expect(p.calls('campaign/read_control').length).toBe(reads + 1)
    expect(sentCancels(p)).toBe(0)
  })

  it('with the lease held, cancel reads the task, then the lease, then sends once with the remote\'s epoch', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c3')
    expect((await submit(p, t, 'camp-c3')).status).toBe(202)
    p.sim.control.setLease('camp-c3', { controller_id: 'ctl-1', epoch: 3, expires_at: Math.floor(p.sim.control.now() / 1000) + 600 })
    const res = await p.post(t, '/v1/campaigns/camp-c3/cancel', { requestId: rid('cancel') })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const order = p.sim.rpcCalls().map((c) => c.method).slice(-3)
    expect(order).toEqual(['tasks/get', 'campaign/read_control', 'tasks/cancel'])
    expect(p.calls('tasks/cancel')[0]!.params.metadata.argus_supervisor.controller_epoch).toBe(3)
  })
})

describe('reconcile never settles too early', () => {
  it('not_applied before the deadline is 409 reconcile_too_early; the late arrival is then found applied', async ({ startControlPair }) => {
    const clock = movableClock()
    const p = await startControlPair({ clock: clock.now, env: { UPSTREAM_MUTATION_TIMEOUT_MS: '1500' } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-r1')
    // the remote reaches its handler 3 s after the request arrived: after the gateway gave up
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'delay', ms: 3000 }, 1)
    const id = rid('sub')
    const sent = await submit(p, t, 'camp-r1', id)
    expect(sent.status).toBe(504)
    expect(sent.body.error.code).toBe('ambiguous_write')
    const early = await p.post(t, `/v1/campaigns/camp-r1/requests/${id}/reconcile`)
    expect(early.status, JSON.stringify(early.body)).toBe(409)
    expect(early.body.error).toMatchObject({ code: 'reconcile_too_early', retryable: true, requestId: id })
    // seconds to the deadline: connect 2 s + mutation 1.5 s + 30 s, less what has passed
    const retryAfter = Number(early.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(25)
    expect(retryAfter).toBeLessThanOrEqual(34)
    const rec = await p.get(t, `/v1/campaigns/camp-r1/requests/${id}`)
    expect(rec.body).toMatchObject({ state: 'ambiguous', reconcileFailures: 0 })
    // the campaign stays blocked meanwhile
    const blocked = await submit(p, t, 'camp-r1')
    expect(blocked.body.error.code).toBe('ambiguity_unresolved')

    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(p.sim.control.applied().some((a) => a.requestId === id)).toBe(true)
    clock.advance(40_000)
    const late = await p.post(t, `/v1/campaigns/camp-r1/requests/${id}/reconcile`)
    expect(late.status).toBe(200)
    expect(late.body).toMatchObject({ state: 'applied' })
    expect(late.body.taskId).toEqual(expect.any(String))
  })

  it('not_applied after the deadline settles the record not_applied', async ({ startControlPair }) => {
    const clock = movableClock()
    const p = await startControlPair({ clock: clock.now })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-r2')
    // a 5xx without a JSON-RPC body, applying nothing: ambiguous
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'status', status: 502 }, 1)
    const id = rid('iv')
    expect((await p.post(t, '/v1/campaigns/camp-r2/interventions', { requestId: id, intervention: { a: 1 } })).status).toBe(504)
    expect((await p.post(t, `/v1/campaigns/camp-r2/requests/${id}/reconcile`)).body.error.code).toBe('reconcile_too_early')
    clock.advance(60_000)
    const res = await p.post(t, `/v1/campaigns/camp-r2/requests/${id}/reconcile`)
    expect(res.status).toBe(200)
    expect(res.body.state).toBe('not_applied')
  })

  it('acknowledge assume_not_applied of a claim waits for the deadline too', async ({ startControlPair }) => {
    const clock = movableClock()
    const p = await startControlPair({ clock: clock.now, sim: { campaignControl: { operations: { request_status: null } } } })
    p.sim.inject({ rpcMethod: 'campaign/claim_control' }, { kind: 'status', status: 502 }, 1)
    const id = rid('claim')
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-r3/control/claim', { requestId: id, ttlSeconds: 60 })).status).toBe(504)
    const ack = { resolution: 'assume_not_applied', note: 'remote restarted' }
    const early = await p.post(p.gw.tokens.admin, `/v1/campaigns/camp-r3/requests/${id}/acknowledge`, ack)
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe('reconcile_too_early')
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(0)
    clock.advance(60_000)
    const res = await p.post(p.gw.tokens.admin, `/v1/campaigns/camp-r3/requests/${id}/acknowledge`, ack)
    expect(res.status).toBe(200)
    expect(res.body.state).toBe('not_applied')
  })
})

describe('the deadline covers the owner\'s whole wait', () => {
  it('a renew waiting for its readback is not swept ambiguous, whatever the read timeout', async ({ startControlPair }) => {
    const clock = movableClock()
    const p = await startControlPair({ clock: clock.now, env: { UPSTREAM_READ_TIMEOUT_MS: '60000', UPSTREAM_MUTATION_TIMEOUT_MS: '2000' } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-d1')
    // the readback (the read_control after the renew) takes 1.5 s
    p.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'delay', ms: 1500 }, 1)
    const id = rid('renew')
    const pending = p.post(t, '/v1/campaigns/camp-d1/control/renew', { requestId: id, ttlSeconds: 120 })
    await new Promise((resolve) => setTimeout(resolve, 500))
    // past sent + connect + mutation + 30 s, still short of the readback's read timeout
    clock.advance(2000 + 2000 + 30_000 + 5000)
    expect(await p.gw.app.control.sweep()).toEqual([])
    const res = await pending
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect((await p.get(t, `/v1/campaigns/camp-d1/requests/${id}`)).body.state).toBe('applied')
  })
})

describe('acknowledging a cancel', () => {
  it('assume_not_applied waits for the deadline even with a higher epoch: tasks/cancel ignores the epoch', async ({ startControlPair }) => {
    const clock = movableClock()
    const p = await startControlPair({ clock: clock.now, env: { UPSTREAM_MUTATION_TIMEOUT_MS: '1000' } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-k1')
    const task = (await submit(p, t, 'camp-k1')).body.taskId as string
    // the cancel reaches the remote's front door and waits there
    p.sim.inject({ rpcMethod: 'tasks/cancel' }, { kind: 'hold' }, 1)
    const id = rid('cancel')
    expect((await p.post(t, '/v1/campaigns/camp-k1/cancel', { requestId: id })).status).toBe(504)
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
    expect((await p.post(t, `/v1/campaigns/camp-k1/requests/${id}/reconcile`)).status).toBe(503)
    // another controller takes over: a higher epoch, which a cancel does not care about
    p.sim.control.setLease('camp-k1', { controller_id: 'ctl-other', epoch: 7, expires_at: Math.floor(p.sim.control.now() / 1000) + 600 })
    const ack = { resolution: 'assume_not_applied', note: 'the remote shows no cancel' }
    const early = await p.post(p.gw.tokens.admin, `/v1/campaigns/camp-k1/requests/${id}/acknowledge`, ack)
    expect(early.status, JSON.stringify(early.body)).toBe(409)
    expect(early.body.error.code).toBe('reconcile_too_early')
    // and rightly so: the late cancel lands, whatever the epoch
    expect(p.sim.deliverHeld()).toBe(1)
    expect(p.sim.getTask(task)!.status).toMatchObject({ state: 'canceled' })
    // past the deadline an acknowledgement is taken (here the operator would say applied)
    clock.advance(60_000)
    const ok = await p.post(p.gw.tokens.admin, `/v1/campaigns/camp-k1/requests/${id}/acknowledge`, { resolution: 'assume_applied', note: 'the task shows canceled' })
    expect(ok.status).toBe(200)
  })
})

describe('acknowledging a submission', () => {
  it('assume_applied with the task id unknown leaves no bound task: the previous one is never cancelled', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-a1')
    const first = await submit(p, t, 'camp-a1')
    expect(first.status).toBe(202)
    // submission #2 is applied but its answer is lost; reconcile then fails
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'drop' }, 1)
    const id = rid('sub')
    expect((await submit(p, t, 'camp-a1', id)).status).toBe(504)
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
    expect((await p.post(t, `/v1/campaigns/camp-a1/requests/${id}/reconcile`)).status).toBe(503)
    const ack = await p.post(p.gw.tokens.admin, `/v1/campaigns/camp-a1/requests/${id}/acknowledge`, { resolution: 'assume_applied', note: 'saw it in the remote UI' })
    expect(ack.status, JSON.stringify(ack.body)).toBe(200)
    const cancel = await p.post(t, '/v1/campaigns/camp-a1/cancel', { requestId: rid('cancel') })
    expect(cancel.status).toBe(409)
    expect(cancel.body.error.code).toBe('no_bound_task')
    expect(sentCancels(p)).toBe(0)
    expect(p.sim.getTask(first.body.taskId)!.status).toMatchObject({ state: expect.not.stringMatching(/canceled/) })
  })
})

describe('bodies', () => {
  const nest = (depth: number): unknown => {
    let v: unknown = { leaf: 1 }
    for (let i = 0; i < depth; i++) v = { d: v }
    return v
  }

  it('a data part deeper than 32 levels is 400 invalid_request, nothing sent', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-b1')
    const sends = p.calls('message/send').length
    const res = await p.post(t, '/v1/campaigns/camp-b1/submissions', { requestId: rid(), parts: [{ kind: 'data', data: nest(40) }] })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(p.calls('message/send').length).toBe(sends)
    // 32 levels in all is still accepted: body, parts, part, data, and 28 more
    const ok = await p.post(t, '/v1/campaigns/camp-b1/submissions', { requestId: rid(), parts: [{ kind: 'data', data: nest(27) }] })
    expect(ok.status, JSON.stringify(ok.body)).toBe(202)
  })

  it('bodies thousands of levels deep are 400, never 500', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-b2')
    for (const raw of [
      `{"requestId":"deep-0001","intervention":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
      `{"requestId":"deep-0002","intervention":{"a":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`,
      `{"requestId":"deep-0003","parts":[{"kind":"data","data":{"x":${'['.repeat(30_000)}${']'.repeat(30_000)}}}]}`
    ]) {
      const path = raw.includes('parts') ? 'submissions' : 'interventions'
      const res = await call(`${p.gw.url}/v1/campaigns/camp-b2/${path}`, { method: 'POST', token: t, rawBody: raw, headers: { 'content-type': 'application/json' } })
      expect(res.status, res.text.slice(0, 200)).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
    }
  })

  it('constraints and reserved keys are matched after NFKC, full case folding and ignorable removal', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-b3')
    const cases: Array<[string, string]> = [
      ['con\u017Ftraints', 'constraints_not_relaxable'], // ſ
      ['CONSTRAINTS', 'constraints_not_relaxable'],
      ['con\u200Bstraints', 'constraints_not_relaxable'], // zero-width space
      ['\uFF43onstraints', 'constraints_not_relaxable'], // fullwidth c
      ['controller_\u0131d', 'reserved_field'], // ı
      ['controller\u00ADEpoch', 'reserved_field'], // soft hyphen
      ['argus\u2060supervisor', 'reserved_field'], // word joiner
      ['URN:x', 'reserved_field']
    ]
    for (const [key, code] of cases) {
      const res = await p.post(t, '/v1/campaigns/camp-b3/interventions', { requestId: rid(), intervention: { nested: { [key]: true } } })
      expect(res.status, key).toBe(400)
      expect(res.body.error.code, key).toBe(code)
    }
    expect(p.calls('campaign/intervene')).toHaveLength(0)
  })

  it('two Idempotency-Key headers are 400 conflicting_fields', async ({ controlPair: p }) => {
    const res = await request(`${p.gw.url}/v1/campaigns/camp-b4/control/claim`, {
      method: 'POST',
      headers: ['authorization', `Bearer ${p.gw.tokens.controller}`, 'content-type', 'application/json', 'idempotency-key', 'key-aaaa-1', 'idempotency-key', 'key-bbbb-2'],
      body: JSON.stringify({ ttlSeconds: 60 })
    })
    expect(res.statusCode).toBe(400)
    expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe('conflicting_fields')
  })
})

describe('answers', () => {
  it('a JSON-RPC answer with both result and error is ambiguous for a mutation', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-j1')
    const id = rid('iv')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, {
      kind: 'status',
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ jsonrpc: '2.0', id, result: { accepted: true }, error: { code: -32603, message: 'x' } })
    }, 1)
    const res = await p.post(t, '/v1/campaigns/camp-j1/interventions', { requestId: id, intervention: { a: 1 } })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('ambiguous_write')
  })
})

describe('what a record shows', () => {
  it('to a reader who is neither its caller nor an admin: ids, operation, state, caller and times only', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-v1')
    const sub = await submit(p, t, 'camp-v1')
    const view = await p.get(p.gw.tokens.reader, `/v1/campaigns/camp-v1/requests/${sub.body.requestId as string}`)
    expect(Object.keys(view.body).sort()).toEqual(['caller', 'createdAt', 'operation', 'requestId', 'state', 'updatedAt'])
    const list = await p.get(p.gw.tokens.reader, '/v1/campaigns/camp-v1/requests')
    for (const r of list.body.requests) expect(Object.keys(r).sort()).toEqual(['caller', 'createdAt', 'operation', 'requestId', 'state', 'updatedAt'])
    const own = await p.get(t, `/v1/campaigns/camp-v1/requests/${sub.body.requestId as string}`)
    expect(own.body).toMatchObject({ taskId: sub.body.taskId, params: expect.any(Object) })
    const admin = await p.get(p.gw.tokens.admin, `/v1/campaigns/camp-v1/requests/${sub.body.requestId as string}`)
    expect(admin.body).toMatchObject({ taskId: sub.body.taskId, params: expect.any(Object) })
  })
})

describe('nothing sent is not a use', () => {
  it('a 503 with nothing sent may be retried with the same id and body: it runs as new, sent once', async () => {
    const sim = await startSimulator({ profile: 'campaign-control', secret: 'sim-secret-0123456789' })
    const fwd = await startForwarder(sim.url)
    try {
      const gw = await startGateway({ upstreamUrl: fwd.url, env: { SPYNEL_AGENT_ZERO_API_KEY: sim.secret, GATEWAY_CONTROL_ENABLED: 'true' } })
      const t = gw.tokens.controller
      const post = async (path: string, body: unknown) => await call(`${gw.url}${path}`, { method: 'POST', token: t, body })
      expect((await post('/v1/campaigns/camp-n1/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(200)
      await fwd.shut()
      const body = { requestId: rid('iv'), intervention: { a: 1 } }
      const refused = await post('/v1/campaigns/camp-n1/interventions', body)
      expect(refused.status).toBe(503)
      expect(refused.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true })
      await fwd.reopen()
      const again = await post('/v1/campaigns/camp-n1/interventions', body)
      expect(again.status, JSON.stringify(again.body)).toBe(200)
      expect(again.headers['idempotent-replayed']).toBeUndefined()
      // and now it is used: a third time replays
      const third = await post('/v1/campaigns/camp-n1/interventions', body)
      expect(third.status).toBe(200)
      expect(third.headers['idempotent-replayed']).toBe('true')
      // other params under the same id are still a mismatch
      expect((await post('/v1/campaigns/camp-n1/interventions', { ...body, intervention: { a: 2 } })).status).toBe(422)
      expect(sim.control.requestCounts().get(body.requestId)).toBe(1)
    } finally {
      await fwd.close()
      await sim.close()
    }
  })
})
