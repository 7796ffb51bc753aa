// GET /v1/requests (docs/design.md#finding-unresolved): the unresolved records of every
// campaign, for admins, over real sockets — oldest first, whole records, filtered by state,
// paged by an opaque cursor that stays right while records are written and resolved; the
// scope, the query's bounds and the OpenAPI entry; and the ambiguous outcome's log line at warn.
import { describe, expect } from 'vitest'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

let planted = 0
/**
 * an intervention the remote applies and whose answer is lost: an ambiguous record. Its id sorts
 * after the ones planted before it, so two written in the same millisecond keep their order too
 */
async function plantAmbiguous (p: ControlPair, campaignId: string): Promise<string> {
  const id = rid(`iv-${String(++planted).padStart(4, '0')}`)
  p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
  const res = await p.post(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/interventions`, { requestId: id, intervention: { pause: true } })
  expect(res.status, JSON.stringify(res.body)).toBe(504)
  return id
}

const logLines = (p: ControlPair): Array<Record<string, unknown>> =>
  p.gw.logs.flatMap((l) => l.split('\n')).filter((l) => l.includes('"event":"mutation"')).map((l) => JSON.parse(l) as Record<string, unknown>)

describe('GET /v1/requests', () => {
  it('lists the ambiguous records of every campaign, oldest first, whole, to an admin only', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    for (const c of ['camp-u1', 'camp-u2', 'camp-u3']) await claim(p, t, c)
    const ids = [await plantAmbiguous(p, 'camp-u2'), await plantAmbiguous(p, 'camp-u1'), await plantAmbiguous(p, 'camp-u3')]

    const res = await p.get(p.gw.tokens.admin, '/v1/requests')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.requests.map((r: { requestId: string }) => r.requestId)).toEqual(ids)
    expect(res.body.nextCursor).toBeNull()
    // every field an admin may see: the campaign and epoch to reconcile with, the stored 504, the
    // params (the claims, applied, are not listed)
    expect(res.body.requests[0]).toEqual({
      requestId: ids[0],
      operation: 'intervene',
      state: 'ambiguous',
      caller: 'controller',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      campaignId: 'camp-u2',
      controllerEpoch: 1,
      taskId: null,
      outcomeCode: 'ambiguous_write',
      reconcileFailures: 0,
      deadline: expect.any(String),
      resolution: null,
      params: { requestId: ids[0], intervention: { pause: true } },
      answer: { httpStatus: 504, body: { error: expect.objectContaining({ code: 'ambiguous_write', reconcile: `/v1/campaigns/camp-u2/requests/${ids[0]}/reconcile` }) } }
    })
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')).body.requests).toHaveLength(3)
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=pending')).body).toEqual({ requests: [], nextCursor: null })

    // admin scope: read and control callers are refused, no token is 401
    for (const token of [p.gw.tokens.reader, p.gw.tokens.controller]) {
      const refused = await p.get(token, '/v1/requests')
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe('forbidden')
    }
    expect((await call(`${p.gw.url}/v1/requests`)).status).toBe(401)

    // resolved, it drops out
    expect((await p.post(t, `/v1/campaigns/camp-u1/requests/${ids[1]!}/reconcile`)).body.state).toBe('applied')
    expect((await p.get(p.gw.tokens.admin, '/v1/requests')).body.requests.map((r: { requestId: string }) => r.requestId)).toEqual([ids[0], ids[2]])
  })

  it('pages with an opaque cursor that stays right while records are written and resolved', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const campaigns = ['camp-p1', 'camp-p2', 'camp-p3', 'camp-p4', 'camp-p5']
    for (const c of campaigns) await claim(p, t, c)
    const ids: string[] = []
    for (const c of campaigns.slice(0, 4)) ids.push(await plantAmbiguous(p, c))

    const first = await p.get(p.gw.tokens.admin, '/v1/requests?limit=2')
    expect(first.body.requests.map((r: { requestId: string }) => r.requestId)).toEqual(ids.slice(0, 2))
    expect(typeof first.body.nextCursor).toBe('string')
    // meanwhile one more is written and one already read is resolved: neither moves the next page
    ids.push(await plantAmbiguous(p, 'camp-p5'))
    expect((await p.post(t, `/v1/campaigns/camp-p1/requests/${ids[0]!}/reconcile`)).status).toBe(200)
    const second = await p.get(p.gw.tokens.admin, `/v1/requests?limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`)
    expect(second.body.requests.map((r: { requestId: string }) => r.requestId)).toEqual(ids.slice(2, 4))
    const third = await p.get(p.gw.tokens.admin, `/v1/requests?limit=2&cursor=${encodeURIComponent(second.body.nextCursor as string)}`)
    expect(third.body).toMatchObject({ requests: [{ requestId: ids[4] }], nextCursor: null })
    // the access line keeps the API's query names, never their values
    const access = p.gw.logs.filter((l) => l.includes('"route":"/v1/requests"'))
    expect(access.some((l) => l.includes('/v1/requests?limit=[REDACTED]&cursor=[REDACTED]'))).toBe(true)

    // the query's bounds, each 400 invalid_request
    for (const q of ['limit=0', 'limit=501', 'limit=x', 'state=applied', 'state=not_applied', 'cursor=not-a-cursor', `cursor=${Buffer.from('[1,"a b"]').toString('base64url')}`, 'campaign=camp-p1']) {
      const bad = await p.get(p.gw.tokens.admin, `/v1/requests?${q}`)
      expect(bad.status, q).toBe(400)
      expect(bad.body.error.code, q).toBe('invalid_request')
    }
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?limit=500')).status).toBe(200)
  })

  it('a pending record is listed while its sender waits, with state=pending', async ({ startControlPair }) => {
    const p = await startControlPair({ env: { UPSTREAM_MUTATION_TIMEOUT_MS: '3000' } })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-h')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const id = rid('held')
    const sending = p.post(t, '/v1/campaigns/camp-h/interventions', { requestId: id, intervention: { a: 1 } })
    let pending: { requests: Array<{ requestId: string; state: string }> } | undefined
    for (let i = 0; i < 50 && (pending?.requests.length ?? 0) === 0; i++) {
      pending = (await p.get(p.gw.tokens.admin, '/v1/requests?state=pending')).body
      if (pending?.requests.length === 0) await new Promise((r) => setTimeout(r, 20))
    }
    expect(pending?.requests).toMatchObject([{ requestId: id, state: 'pending' }])
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')).body.requests).toEqual([])
    expect((await p.get(p.gw.tokens.admin, '/v1/requests')).body.requests).toMatchObject([{ requestId: id, state: 'pending' }])
    p.sim.dropHeld()
    expect((await sending).status).toBe(504)
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')).body.requests).toMatchObject([{ requestId: id, state: 'ambiguous' }])
  })

  it('is in the OpenAPI document with its query and its error responses', async ({ controlPair: p }) => {
    const doc = (await p.get(p.gw.tokens.reader, '/openapi.json')).body
    const op = doc.paths['/v1/requests']?.get
    expect(op).toBeDefined()
    expect(op.parameters.map((x: { name: string; in: string }) => `${x.in}:${x.name}`).sort()).toEqual(['query:cursor', 'query:limit', 'query:state'])
    expect(op.parameters.find((x: { name: string }) => x.name === 'state').schema.enum).toEqual(['pending', 'ambiguous'])
    for (const status of ['200', '400', '401', '403', '429', '503']) expect(op.responses[status], status).toBeDefined()
    expect(JSON.stringify(op.responses['200'])).toContain('UnresolvedRequestList')
  })
})

describe('the mutation log line', () => {
  it('an ambiguous outcome is logged at warn, the others at info', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-l')
    const id = await plantAmbiguous(p, 'camp-l')
    const lines = logLines(p)
    const ambiguous = lines.find((l) => l.requestId === id && l.outcome === 'ambiguous')
    expect(ambiguous).toMatchObject({ level: 40, event: 'mutation', campaignId: 'camp-l', operation: 'intervene', caller: 'controller' })
    expect(lines.find((l) => l.operation === 'claim' && l.outcome === 'applied')?.level).toBe(30)
    // the replay and the block it causes stay at info: the record is already known ambiguous
    await p.post(t, '/v1/campaigns/camp-l/interventions', { requestId: id, intervention: { pause: true } })
    await p.post(t, '/v1/campaigns/camp-l/interventions', { requestId: rid(), intervention: { go: true } })
    expect(logLines(p).filter((l) => l.outcome === 'replayed' || l.outcome === 'blocked').map((l) => l.level)).toEqual([30, 30])
  })
})
