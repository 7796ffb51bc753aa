// Whose a front-door task is (docs/design.md#front-door), over real sockets against the
// campaign-control simulator. Two JWT subjects sharing one display name (`azp` or
// `preferred_username` as the name claim) are two senders: the other one re-sending alice's
// message/send with her message id gets an error in the contract's shape, no task of hers and
// nothing sent, and her task does not exist for it. A submission whose send did not return
// (the remote applied it and dropped the connection) and that a reconcile settled later is its
// sender's task as soon as the record names it, with no re-send.
import { describe, expect, onTestFinished } from 'vitest'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { frontRpc } from '../helpers/http.js'
import { twoSubjectsOneName } from '../helpers/identities.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey } from '../helpers/jwks.js'

const submitSend = (campaignId: string, messageId: string, text = 'train it') => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text }] }
})
const rpc = async (p: ControlPair, token: string, method: string, params: unknown) => await frontRpc(p.gw.url, token, method, params)
/** how many times the remote heard this message id */
const sendsOf = (p: ControlPair, messageId: string): number => p.calls('message/send').filter((c) => c.params?.message?.messageId === messageId).length

describe.each(['azp', 'preferred_username'])('two JWT subjects sharing one name through %s', (claimName) => {
  it('the other one re-sending alice\'s message id gets no task of hers, nothing is sent, and her task does not exist for it', async ({ startControlPair }) => {
    const { p, alice, mallory } = await twoSubjectsOneName(startControlPair, claimName, 'camp-f')

    await claim(p, alice, 'camp-f')
    const messageId = rid('msg')
    const sent = await rpc(p, alice, 'message/send', submitSend('camp-f', messageId))
    expect(sent.body.result, JSON.stringify(sent.body)).toMatchObject({ kind: 'task' })
    const taskId = sent.body.result.id as string

    const stolen = await rpc(p, mallory, 'message/send', submitSend('camp-f', messageId))
    expect(stolen.body.result).toBeUndefined()
    expect(stolen.body.error).toMatchObject({ code: -32011, data: { code: 'idempotency_key_conflict', retryable: false } })
    expect(stolen.text).not.toContain(taskId)
    expect(sendsOf(p, messageId)).toBe(1)
    // the door wrote nothing of alice's task as mallory's
    const malloryIdentity = `jwt:${ISSUER}#mallory-0666`
    expect((await p.gw.app.ledger.getFrontSend(malloryIdentity, messageId))?.taskId ?? null).toBeNull()
    expect(await p.gw.app.ledger.frontTaskOf(malloryIdentity, taskId)).toBeUndefined()

    expect((await rpc(p, mallory, 'tasks/get', { id: taskId })).body.error).toMatchObject({ code: -32001 })
    expect((await rpc(p, mallory, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: rid('cancel') } } })).body.error).toMatchObject({ code: -32001 })
    // alice's task is still hers
    expect((await rpc(p, alice, 'tasks/get', { id: taskId })).body.result).toMatchObject({ kind: 'task', id: taskId })
  })
})

describe('a submission whose send did not return', () => {
  it('settled by a reconcile, is its sender\'s task at once: tasks/get without a re-send; nobody else\'s', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-r')
    const messageId = rid('msg')
    // the remote applies the submission and drops the connection: ambiguous
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'drop' }, 1)
    const cut = await rpc(p, t, 'message/send', submitSend('camp-r', messageId))
    expect(cut.body.error).toMatchObject({ code: -32012, data: { code: 'ambiguous_write', requestId: messageId } })

    // another caller with control reconciles it (the runbook's step): the record's owner gets the task
    const rec = await p.post(p.gw.tokens.all, `/v1/campaigns/camp-r/requests/${messageId}/reconcile`)
    expect(rec.status, JSON.stringify(rec.body)).toBe(200)
    expect(rec.body).toMatchObject({ state: 'applied', operation: 'submit', taskId: expect.any(String) })
    const taskId = rec.body.taskId as string

    const got = await rpc(p, t, 'tasks/get', { id: taskId })
    expect(got.body.result, JSON.stringify(got.body)).toMatchObject({ kind: 'task', id: taskId })
    expect(sendsOf(p, messageId)).toBe(1)
    // the reconciler is not its owner, nor anyone else
    expect((await rpc(p, p.gw.tokens.all, 'tasks/get', { id: taskId })).body.error).toMatchObject({ code: -32001 })
  })
})

describe('a caller from the identity provider with no subject', () => {
  it('owns nothing: two of one name each get a fresh Argus read for one message id, and no send is recorded', async ({ startControlPair }) => {
    const key = await testKey('k1')
    const idp = await startIdp([key])
    onTestFinished(idp.close)
    const p = await startControlPair({ env: { GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_URL: idp.url, GATEWAY_JWT_CLAIMS: JSON.stringify({ name: 'azp' }) } })
    // no sub: a name, and no identity; read only (control needs an identity)
    const a = await sign(key, { azp: 'dashboards', scope: 'read', sub: undefined })
    const b = await sign(key, { azp: 'dashboards', scope: 'read', sub: undefined, jti: 'other' })
    await eventually(async () => (await p.get(a, '/v1/supervisor/health')).status === 200, 5000, 'keys in use')
    const messageId = rid('msg')
    const URN = 'urn:openoperator:argus-supervisor:v1'
    const read = { configuration: { blocking: true }, message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health' } }, parts: [{ kind: 'data', data: { params: {} } }] } }
    const before = p.calls('message/send').length
    const first = await rpc(p, a, 'message/send', read)
    const second = await rpc(p, b, 'message/send', read)
    expect(first.body.result, first.text).toMatchObject({ kind: 'message' })
    expect(second.body.result, second.text).toMatchObject({ kind: 'message' })
    // each went to the remote: no answer of one name-keyed send handed to the other
    expect(p.calls('message/send').length - before).toBe(2)
    expect(second.body.result.messageId).not.toBe(first.body.result.messageId)
    expect(await p.gw.app.ledger.getFrontSend('static:jwt:dashboards', messageId)).toBeUndefined()
  })
})
