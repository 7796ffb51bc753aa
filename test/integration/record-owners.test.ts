// A request record's owner is an identity, never a name (docs/design.md#request-records), over
// real sockets against the campaign-control simulator: two JWT callers whose subjects differ but
// whose name claim (`azp`, as operating.md's Keycloak example maps it, or `preferred_username`)
// is one and the same are two callers. The other one's use of alice's request id is 409
// idempotency_key_conflict, never her replay; her records show it only what anyone with read
// sees; she still sees hers whole.
import { describe, expect } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { twoSubjectsOneName } from '../helpers/identities.js'

/** what anyone with read sees of a record that is not theirs */
const SUMMARY_KEYS = ['caller', 'createdAt', 'operation', 'requestId', 'state', 'updatedAt']

describe.each(['azp', 'preferred_username'])('two JWT subjects sharing one name through %s', (claimName) => {
  it('the other subject\'s use of alice\'s request id is 409 idempotency_key_conflict, nothing replayed or sent', async ({ startControlPair }) => {
    const { p, alice, mallory } = await twoSubjectsOneName(startControlPair, claimName, 'camp-o')
    await claim(p, alice, 'camp-o')
    const id = rid('sub')
    const body = { requestId: id, parts: [{ kind: 'text', text: 'train it' }] }
    const sub = await p.post(alice, '/v1/campaigns/camp-o/submissions', body)
    expect(sub.status, JSON.stringify(sub.body)).toBe(202)
    const sends = p.calls('message/send').length

    // the same body, the same id, the same display name: still not alice
    const stolen = await p.post(mallory, '/v1/campaigns/camp-o/submissions', body)
    expect(stolen.status, JSON.stringify(stolen.body)).toBe(409)
    expect(stolen.body).toEqual({ error: { code: 'idempotency_key_conflict', message: expect.any(String), retryable: false } })
    expect(stolen.headers['idempotent-replayed']).toBeUndefined()
    expect(stolen.text).not.toContain(sub.body.taskId as string)
    // in the Idempotency-Key header alone, too
    const header = await p.post(mallory, '/v1/campaigns/camp-o/submissions', { parts: body.parts }, { 'idempotency-key': id })
    expect(header.status).toBe(409)
    expect(header.body.error.code).toBe('idempotency_key_conflict')
    expect(p.calls('message/send')).toHaveLength(sends)

    // alice's own repeat is her replay
    const again = await p.post(alice, '/v1/campaigns/camp-o/submissions', body)
    expect(again.status).toBe(202)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body.taskId).toBe(sub.body.taskId)
  })

  it('alice\'s records show the other subject their summary alone, in listings and lookups; alice sees them whole', async ({ startControlPair }) => {
    const { p, alice, mallory } = await twoSubjectsOneName(startControlPair, claimName, 'camp-o')
    await claim(p, alice, 'camp-o')
    const id = rid('sub')
    const sub = await p.post(alice, '/v1/campaigns/camp-o/submissions', { requestId: id, parts: [{ kind: 'text', text: 'secret plan' }] })
    expect(sub.status).toBe(202)

    const listed = await p.get(mallory, '/v1/campaigns/camp-o/requests')
    expect(listed.status).toBe(200)
    expect(listed.body.requests).toHaveLength(2)
    for (const r of listed.body.requests) expect(Object.keys(r).sort()).toEqual(SUMMARY_KEYS)
    expect(listed.text).not.toContain('secret plan')
    expect(listed.text).not.toContain(sub.body.taskId as string)
    const one = await p.get(mallory, `/v1/campaigns/camp-o/requests/${id}`)
    expect(one.status).toBe(200)
    expect(Object.keys(one.body).sort()).toEqual(SUMMARY_KEYS)
    expect(one.body).toMatchObject({ requestId: id, operation: 'submit', state: 'applied', caller: 'jwt:ml-portal' })

    const own = await p.get(alice, `/v1/campaigns/camp-o/requests/${id}`)
    expect(own.body).toMatchObject({ requestId: id, campaignId: 'camp-o', taskId: sub.body.taskId, params: { parts: [{ kind: 'text', text: 'secret plan' }] }, answer: { httpStatus: 202 } })
    const ownList = await p.get(alice, '/v1/campaigns/camp-o/requests')
    for (const r of ownList.body.requests) expect(r).toHaveProperty('params')
  })
})
