// Ambiguous writes and their resolution over real sockets (docs/design.md#outcomes,
// docs/design.md#reconcile-and-acknowledge): the remote applies and drops the connection,
// the campaign is blocked until reconcile asks request_status; acknowledge is safe or refused.
import { describe, expect } from 'vitest'
import { METRICS_CACHE_MS } from '../../src/server.js'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

describe('an ambiguous write', () => {
  it('is 504 ambiguous_write, blocks the campaign, and reconcile resolves it without a resend', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-a')
    const id = rid('iv')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    const res = await p.post(t, '/v1/campaigns/camp-a/interventions', { requestId: id, intervention: { stop: true } })
    expect(res.status).toBe(504)
    expect(res.body.error).toMatchObject({ code: 'ambiguous_write', retryable: false, requestId: id, reconcile: `/v1/campaigns/camp-a/requests/${id}/reconcile` })
    // the remote did apply it
    expect(p.sim.control.interventions('camp-a')).toHaveLength(1)

    // the same id replays the ambiguity; a new mutation of the campaign is blocked, naming the id
    const replay = await p.post(t, '/v1/campaigns/camp-a/interventions', { requestId: id, intervention: { stop: true } })
    expect(replay.status).toBe(504)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const blocked = await p.post(t, '/v1/campaigns/camp-a/interventions', { requestId: rid(), intervention: { go: true } })
    expect(blocked.status).toBe(409)
    expect(blocked.body.error).toMatchObject({ code: 'ambiguity_unresolved', requestId: id })
    // another campaign is not blocked
    await claim(p, t, 'camp-b')

    const metrics = await fetch(`${p.gw.metricsUrl}/metrics`).then(async (r) => await r.text())
    expect(metrics).toMatch(/^gateway_ambiguous_mutations 1$/m)
    expect(metrics).toMatch(/^gateway_mutations_total\{operation="intervene",outcome="ambiguous"\} 1$/m)
    expect(metrics).toMatch(/^gateway_mutations_total\{operation="intervene",outcome="blocked"\} 1$/m)
    expect(metrics).toMatch(/^gateway_mutations_total\{operation="intervene",outcome="replayed"\} 1$/m)

    const rec = await p.post(t, `/v1/campaigns/camp-a/requests/${id}/reconcile`)
    expect(rec.status, JSON.stringify(rec.body)).toBe(200)
    expect(rec.body).toMatchObject({ requestId: id, state: 'applied', resolution: { kind: 'reconcile', by: 'controller', note: null } })
    const status = p.calls('campaign/request_status')
    expect(status).toHaveLength(1)
    expect(status[0]!.params).toEqual({ campaign_id: 'camp-a', request_id: id })
    // never re-sent, never re-claimed
    expect(p.calls('campaign/intervene')).toHaveLength(1)
    expect(p.calls('campaign/claim_control')).toHaveLength(2)

    // unblocked: the lease is unknown after a reconcile, so the next mutation reads it first
    const readsBefore = p.calls('campaign/read_control').length
    const next = await p.post(t, '/v1/campaigns/camp-a/interventions', { requestId: rid(), intervention: { go: true } })
    expect(next.status).toBe(200)
    expect(p.calls('campaign/read_control').length).toBe(readsBefore + 1)
    const replayResolved = await p.post(t, '/v1/campaigns/camp-a/interventions', { requestId: id, intervention: { stop: true } })
    expect(replayResolved.status).toBe(200)
    expect(replayResolved.body).toMatchObject({ requestId: id, state: 'applied' })
    // a rendering serves scrapes for METRICS_CACHE_MS (docs/design.md#metrics): past it, the gauge is current
    await new Promise((r) => setTimeout(r, METRICS_CACHE_MS))
    const after = await fetch(`${p.gw.metricsUrl}/metrics`).then(async (r) => await r.text())
    expect(after).toMatch(/^gateway_ambiguous_mutations 0$/m)

    const log = p.gw.logs.filter((l) => l.includes('"event":"mutation"'))
    expect(log.length).toBeGreaterThanOrEqual(5)
    for (const line of log) {
      expect(line).not.toContain('stop')
      expect(line).not.toContain('"params"')
    }
    expect(log.some((l) => l.includes(`"requestId":"${id}"`) && l.includes('"outcome":"ambiguous"') && l.includes('"caller":"controller"') && l.includes('"durationMs"'))).toBe(true)
  })

  it('a 5xx without a JSON-RPC body, -32603 and a wrongly shaped result are ambiguous too', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-5')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'status', status: 502, body: 'Bad Gateway', contentType: 'text/plain' }, 1)
    const a = await p.post(t, '/v1/campaigns/camp-5/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(a.body.error.code).toBe('ambiguous_write')
    expect(a.text).not.toContain('Bad Gateway')

    await claim(p, t, 'camp-6')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'rpc-error', code: -32603, message: 'Internal error' }, 1)
    const b = await p.post(t, '/v1/campaigns/camp-6/interventions', { requestId: rid(), intervention: { a: 1 } })
    expect(b.body.error.code).toBe('ambiguous_write')
  })

  it('reconcile echo: an answer about another id proves nothing and the record stays ambiguous', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-e')
    const id = rid()
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(t, '/v1/campaigns/camp-e/interventions', { requestId: id, intervention: { a: 1 } })).status).toBe(504)
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'result', result: { request_id: `${id}-other`, state: 'not_applied' } }, 1)
    const echo = await p.post(t, `/v1/campaigns/camp-e/requests/${id}/reconcile`)
    expect(echo.status).toBe(502)
    expect(echo.body.error.code).toBe('upstream_invalid_response')
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'status', status: 503 }, 1)
    const failed = await p.post(t, `/v1/campaigns/camp-e/requests/${id}/reconcile`)
    expect(failed.status).toBe(503)
    const rec = await p.get(t, `/v1/campaigns/camp-e/requests/${id}`)
    expect(rec.body).toMatchObject({ state: 'ambiguous', reconcileFailures: 2 })
    const ok = await p.post(t, `/v1/campaigns/camp-e/requests/${id}/reconcile`)
    expect(ok.body.state).toBe('applied')
  })

  it('a submission reconciled as applied needs its task id, which becomes the bound task', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-st')
    const id = rid()
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'drop' }, 1)
    expect((await p.post(t, '/v1/campaigns/camp-st/submissions', { requestId: id, parts: [{ kind: 'text', text: 'go' }] })).status).toBe(504)
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'result', result: { request_id: id, state: 'applied' } }, 1)
    const noTask = await p.post(t, `/v1/campaigns/camp-st/requests/${id}/reconcile`)
    expect(noTask.status).toBe(502)
    const ok = await p.post(t, `/v1/campaigns/camp-st/requests/${id}/reconcile`)
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ state: 'applied', operation: 'submit' })
    expect(typeof ok.body.taskId).toBe('string')
    const cancel = await p.post(t, '/v1/campaigns/camp-st/cancel', { requestId: rid() })
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200)
    expect(cancel.body.taskId).toBe(ok.body.taskId)
  })
})

describe('acknowledge', () => {
  it('is refused while reconcile has not been tried, and assume_not_applied needs a higher epoch', async ({ controlPair: p }) => {
    const t = p.gw.tokens.all
    await claim(p, t, 'camp-k')
    const id = rid()
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(t, '/v1/campaigns/camp-k/interventions', { requestId: id, intervention: { a: 1 } })).status).toBe(504)
    const path = `/v1/campaigns/camp-k/requests/${id}/acknowledge`

    expect((await p.post(p.gw.tokens.controller, path, { resolution: 'assume_applied', note: 'x' })).status).toBe(403)
    const early = await p.post(t, path, { resolution: 'assume_applied', note: 'checked by hand' })
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe('acknowledge_unsafe')

    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'rpc-error', code: -32603, message: 'boom' }, 1)
    expect((await p.post(t, `/v1/campaigns/camp-k/requests/${id}/reconcile`)).status).toBe(502)

    // the remote still shows the record's epoch: it could still apply the old mutation
    const unsafe = await p.post(t, path, { resolution: 'assume_not_applied', note: 'I think not' })
    expect(unsafe.status).toBe(409)
    expect(unsafe.body.error.code).toBe('acknowledge_unsafe')

    // another controller has taken over with a higher epoch: the old mutation can no longer apply
    p.sim.control.setLease('camp-k', { controller_id: 'someone-else', epoch: 7, expires_at: Math.floor(Date.now() / 1000) + 600 })
    const ok = await p.post(t, path, { resolution: 'assume_not_applied', note: 'superseded by epoch 7' })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ state: 'not_applied', resolution: { kind: 'acknowledge', by: 'all', note: 'superseded by epoch 7', resolution: 'assume_not_applied' } })
    const again = await p.post(t, path, { resolution: 'assume_applied', note: 'twice' })
    expect(again.body.error.code).toBe('acknowledge_unsafe')
    // the id stays used forever
    const reuse = await p.post(t, '/v1/campaigns/camp-k/interventions', { requestId: id, intervention: { a: 1 } })
    expect(reuse.headers['idempotent-replayed']).toBe('true')
    expect(p.calls('campaign/intervene')).toHaveLength(1)
  })

  it('is allowed at once where request_status is not advertised', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { operations: { request_status: null } } } })
    const t = p.gw.tokens.all
    await claim(p, t, 'camp-n')
    const id = rid()
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(t, '/v1/campaigns/camp-n/interventions', { requestId: id, intervention: { a: 1 } })).status).toBe(504)
    const rec = await p.post(t, `/v1/campaigns/camp-n/requests/${id}/reconcile`)
    expect(rec.status).toBe(503)
    expect(rec.body.error.code).toBe('capability_unavailable')
    const ok = await p.post(t, `/v1/campaigns/camp-n/requests/${id}/acknowledge`, { resolution: 'assume_applied', note: 'operator saw it applied' })
    expect(ok.status).toBe(200)
    expect(ok.body.state).toBe('applied')
  })
})
