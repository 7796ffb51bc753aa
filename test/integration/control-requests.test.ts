// Single-shot request ids and the order of checks over real sockets
// (docs/design.md#order-of-checks): body rules before the schema, the id rules, replays
// with Idempotent-Replayed, and 64 concurrent requests with one id sending exactly once.
import { describe, expect } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

describe('the order of checks', () => {
  it('401, then 403, then 413, then body rules, then the schema, then the id', async ({ controlPair: p }) => {
    const path = '/v1/campaigns/camp-o/interventions'
    expect((await p.post('not-a-token', path, { constraints: {} })).status).toBe(401)
    expect((await p.post(p.gw.tokens.reader, path, { constraints: {} })).body.error.code).toBe('forbidden')
    const big = await call(`${p.gw.url}${path}`, { method: 'POST', token: p.gw.tokens.controller, body: { intervention: { blob: 'x'.repeat(70_000) }, constraints: {} } })
    expect(big.status).toBe(413)
    const both = await p.post(p.gw.tokens.controller, path, { requestId: 'bad', unknownKey: 1, intervention: { constraints: {} } })
    expect(both.status).toBe(400)
    expect(both.body.error.code).toBe('constraints_not_relaxable')
    const reserved = await p.post(p.gw.tokens.controller, path, { unknownKey: 1, intervention: { 'urn:x': 1 } })
    expect(reserved.body.error.code).toBe('reserved_field')
    const strict = await p.post(p.gw.tokens.controller, path, { requestId: rid(), intervention: {}, unknownKey: 1 })
    expect(strict.status).toBe(400)
    expect(strict.body.error).toMatchObject({ code: 'invalid_request', retryable: false })
    expect(strict.body.error.message).toContain('unknownKey')
    const noId = await p.post(p.gw.tokens.controller, path, { intervention: {} })
    expect(noId.status).toBe(400)
    expect(noId.body.error.code).toBe('invalid_request')
    const conflict = await p.post(p.gw.tokens.controller, path, { requestId: rid(), intervention: {} }, { 'idempotency-key': rid() })
    expect(conflict.body.error.code).toBe('conflicting_fields')
    const aliases = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-o/control/claim', { requestId: rid(), request_id: rid(), ttlSeconds: 60 })
    expect(aliases.body.error.code).toBe('conflicting_fields')
    for (const ttl of [14, 3601, 60.5]) {
      const res = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-o/control/claim', { requestId: rid(), ttlSeconds: ttl })
      expect(res.body.error.code, String(ttl)).toBe('invalid_request')
    }
    const tooBig = await p.post(p.gw.tokens.controller, path, { requestId: rid(), intervention: { blob: 'x'.repeat(17 * 1024) } })
    expect(tooBig.body.error.code).toBe('invalid_request')
    const parts = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-o/submissions', { requestId: rid(), parts: [{ kind: 'file', file: { uri: 'x' } }] })
    expect(parts.body.error.code).toBe('invalid_request')
    const partMeta = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-o/submissions', { requestId: rid(), parts: [{ kind: 'text', text: 'x', metadata: {} }] })
    expect(partMeta.body.error.code).toBe('invalid_request')
    // none of these reached the remote
    expect(p.sim.control.requestCounts().size).toBe(0)
  })

  it('a refused body says which field and what is wrong, in the contract\'s shape, never echoing a value', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = '/v1/campaigns/camp-m'
    const refused = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await p.post(t, `${c}${path}`, body)
      expect(res.status, res.text).toBe(400)
      expect(Object.keys(res.body)).toEqual(['error'])
      expect(res.body.error.code).toBe('invalid_request')
      expect(res.body.error.retryable).toBe(false)
      return res.body.error
    }
    for (const ttl of [14, 3601]) expect((await refused('/control/claim', { requestId: rid(), ttlSeconds: ttl })).message).toBe('ttlSeconds: must be between 15 and 3600')
    expect((await refused('/control/claim', { requestId: rid(), ttlSeconds: 60.5 })).message).toBe('ttlSeconds: must be a whole number of seconds')
    expect((await refused('/control/claim', { requestId: rid() })).message).toBe('ttlSeconds: required')
    expect((await refused('/control/renew', { requestId: rid(), ttl_seconds: 10 })).message).toBe('ttlSeconds: must be between 15 and 3600')
    expect((await refused('/control/release', { requestId: rid(), foo: 1 })).message).toBe('unknown field: foo')
    expect((await refused('/submissions', { requestId: rid(), parts: [] })).message).toBe('parts: must hold 1 to 16 parts')
    const seventeen = Array.from({ length: 17 }, () => ({ kind: 'text', text: 'x' }))
    expect((await refused('/submissions', { requestId: rid(), parts: seventeen })).message).toBe('parts: must hold 1 to 16 parts')
    expect((await refused('/submissions', { requestId: rid(), parts: [{ kind: 'file', file: { uri: 'x' } }, { kind: 'text', text: 'x', metadata: {} }] })).message)
      .toBe('parts[0].kind: must be one of "text", "data"; unknown field: parts[1].metadata')
    expect((await refused('/interventions', { requestId: rid(), intervention: { blob: 'x'.repeat(17 * 1024) } })).message).toBe('intervention: must be at most 16 KiB of JSON')
    expect((await refused('/interventions', [])).message).toBe('body: must be a JSON object')
    // every problem at once
    expect((await refused('/control/claim', { requestId: 'short', ttlSeconds: 'soon', extra: 1 })).message)
      .toBe('requestId: must be 8-128 characters of [A-Za-z0-9._:-]; ttlSeconds: must be a number; unknown field: extra')

    // a bad value that could be a secret or a token is described, never repeated
    const secret = 'sk-live-SECRETVALUE-0123456789abcdef'
    const answers = [
      await p.post(t, `${c}/control/claim`, { requestId: rid(), ttlSeconds: secret }),
      await p.post(t, `${c}/control/claim`, { requestId: secret.replace(/-/g, ' '), ttlSeconds: 60 }),
      await p.post(t, `${c}/submissions`, { requestId: rid(), parts: [{ kind: secret, text: secret }], project: secret.repeat(10) }),
      await p.post(t, `${c}/submissions`, { requestId: rid(), parts: secret })
    ]
    for (const a of answers) {
      expect(a.status).toBe(400)
      expect(a.body.error.code).toBe('invalid_request')
      expect(a.body.error.message).toMatch(/^(requestId|ttlSeconds|parts|project)/)
      expect(a.text).not.toContain('SECRETVALUE')
    }
    expect(p.sim.control.requestCounts().size).toBe(0)
  })

  it('the acknowledgement\'s body is checked the same way, and its codes stay what they are', async ({ controlPair: p }) => {
    const res = await call(`${p.gw.url}/v1/campaigns/camp-m/requests/${rid()}/acknowledge`, { method: 'POST', token: p.gw.tokens.admin, body: { resolution: 'maybe', note: '' } })
    expect(res.status).toBe(400)
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'resolution: must be one of "assume_applied", "assume_not_applied"; note: must not be empty', retryable: false })
    // the body rules come before the schema, with their own codes
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-m/interventions', { requestId: rid(), intervention: {}, constraints: {} })).body.error.code).toBe('constraints_not_relaxable')
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-m/control/claim', { requestId: rid(), ttlSeconds: 60, controller_id: 'x' })).body.error.code).toBe('reserved_field')
  })
})

describe('single-shot request ids', () => {
  it('replays a finished request with Idempotent-Replayed and sends nothing', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-r')
    const id = rid()
    const first = await p.post(t, '/v1/campaigns/camp-r/interventions', { requestId: id, intervention: { a: 1 } })
    expect(first.status).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const replay = await p.post(t, '/v1/campaigns/camp-r/interventions', { intervention: { a: 1 } }, { 'idempotency-key': id })
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toEqual(first.body)
    expect(p.calls('campaign/intervene')).toHaveLength(1)

    const mismatch = await p.post(t, '/v1/campaigns/camp-r/interventions', { requestId: id, intervention: { a: 2 } })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body.error.code).toBe('idempotency_key_mismatch')
    const otherCampaign = await p.post(t, '/v1/campaigns/camp-other/interventions', { requestId: id, intervention: { a: 1 } })
    expect(otherCampaign.body.error.code).toBe('idempotency_key_mismatch')
    const otherCaller = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-r/interventions', { requestId: id, intervention: { a: 1 } })
    expect(otherCaller.status).toBe(409)
    expect(otherCaller.body.error.code).toBe('idempotency_key_conflict')
    expect(JSON.stringify(otherCaller.body)).not.toContain('"a"')
    expect(p.calls('campaign/intervene')).toHaveLength(1)
  })

  it('replays a refused outcome too: an id is used once, whatever came of it', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-x')
    const id = rid()
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'rpc-error', code: -32003, message: 'remote text that must not leak', data: { reason: 'policy_violation' } }, 1)
    const first = await p.post(t, '/v1/campaigns/camp-x/interventions', { requestId: id, intervention: { a: 1 } })
    expect(first.status).toBe(403)
    expect(first.body.error.code).toBe('policy_rejected')
    expect(first.text).not.toContain('remote text')
    const replay = await p.post(t, '/v1/campaigns/camp-x/interventions', { requestId: id, intervention: { a: 1 } })
    expect(replay.status).toBe(403)
    expect(replay.headers['idempotent-replayed']).toBe('true')
  })

  it('64 concurrent requests with one id reach the remote exactly once', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-c')
    const id = rid()
    const answers = await Promise.all(Array.from({ length: 64 }, async () =>
      await p.post(t, '/v1/campaigns/camp-c/interventions', { requestId: id, intervention: { go: true } })))
    expect(p.calls('campaign/intervene')).toHaveLength(1)
    expect(p.sim.control.interventions('camp-c')).toHaveLength(1)
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1)
    // the others replay, or are told the request is in flight / the campaign busy: never a second send
    for (const a of answers) {
      if (a.status === 200) continue
      expect(a.status).toBe(409)
      expect(['request_in_flight', 'campaign_busy']).toContain(a.body.error.code)
    }
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length).toBe(statuses.filter((s) => s === 200).length - 1)
  })
})
