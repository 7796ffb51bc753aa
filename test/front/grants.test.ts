// Grants per campaign and project through the A2A front door (docs/design.md#grants), over real
// sockets against the campaign-control simulator: the same one check as REST, in the core. Every
// campaign method, a submission and tasks/cancel to a campaign the caller may not control are
// -32010 campaign_forbidden, nothing sent, nothing written (no front-door send either); a task
// whose campaign the caller may no longer read is -32001, as if it did not exist; the Argus
// campaign list, fresh or replayed, shows only what the caller may read. Granted by pattern, by
// project, by JWT claim, under GATEWAY_REQUIRE_GRANTS, and after a reload.
import { describe, expect, onTestFinished } from 'vitest'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { frontRpc, type JsonResponse } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey } from '../helpers/jwks.js'
import { grantCallers, startWithGrants } from '../helpers/grants.js'

const rpc = async (p: ControlPair, token: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> => await frontRpc(p.gw.url, token, method, params, headers)
const submitSend = (campaignId: string, messageId: string, project?: string): object => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId, ...(project !== undefined ? { project } : {}) } }, parts: [{ kind: 'text', text: 'work' }] }
})
const listRead = (messageId: string): object => ({
  configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, extensions: ['urn:openoperator:argus-supervisor:v1'], metadata: { 'urn:openoperator:argus-supervisor:v1': { operation: 'campaign.list', requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] }
})
const identity = (name: string): string => `static:${name}`

function expectForbidden (res: JsonResponse, what: string): void {
  expect(res.status, what).toBe(200)
  expect(res.body.error, `${what}: ${res.text}`).toMatchObject({ code: -32010, data: { code: 'campaign_forbidden', retryable: false } })
  expect(res.text, what).not.toMatch(/team-|vis-|orphan-/)
}

function expectNotFound (res: JsonResponse, what: string): void {
  expect(res.body.error, `${what}: ${res.text}`).toMatchObject({ code: -32001, data: { code: 'not_found' } })
}

const campaignsOf = (res: JsonResponse): string[] => (res.body.result.parts[0].data.campaigns as Array<{ campaign_id: string }>).map((c) => c.campaign_id)

describe('grants through the A2A front door', () => {
  it('done when: granted team-a-*, every campaign method, a submission and a cancel on team-b-7 are refused, nothing sent or written; its task reads as missing; the campaign list shows none of it', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    await claim(p, t.teamB, 'team-b-7')
    const bMsg = rid('msg-b')
    const sentB = await rpc(p, t.teamB, 'message/send', submitSend('team-b-7', bMsg))
    expect(sentB.body.result, sentB.text).toMatchObject({ kind: 'task' })
    const taskB = sentB.body.result.id as string

    const before = p.sim.rpcCalls().length
    const id = (): string => rid('a-on-b')
    expectForbidden(await rpc(p, t.teamA, 'campaign/read_control', { campaign_id: 'team-b-7' }), 'read_control')
    for (const [method, extra] of [['campaign/claim_control', { ttl_seconds: 60 }], ['campaign/renew_control', { ttl_seconds: 60 }], ['campaign/release_control', {}], ['campaign/intervene', { intervention: { a: 1 } }]] as const) {
      const requestId = id()
      expectForbidden(await rpc(p, t.teamA, method, { campaign_id: 'team-b-7', request_id: requestId, ...extra }), method)
      expect(await p.gw.app.ledger.get(requestId)).toBeUndefined()
    }
    const msg = id()
    expectForbidden(await rpc(p, t.teamA, 'message/send', submitSend('team-b-7', msg)), 'a submission')
    expect(await p.gw.app.ledger.getFrontSend(identity('team-a'), msg), 'no front-door send written').toBeUndefined()
    expect(await p.gw.app.ledger.get(msg)).toBeUndefined()
    // v1.0's method names and error shape: the same refusal
    const v1 = await rpc(p, t.teamA, 'SendMessage', { message: { role: 'ROLE_USER', messageId: id(), metadata: { argus_supervisor: { campaign_id: 'team-b-7' } }, parts: [{ text: 'w' }] }, configuration: { returnImmediately: true } }, { 'a2a-version': '1.0' })
    expect(v1.body.error, v1.text).toMatchObject({ code: -32010, data: [expect.objectContaining({ reason: 'CAMPAIGN_FORBIDDEN' })] })
    // team-b's task, named by team-a: another caller's task does not exist for it either way
    expectNotFound(await rpc(p, t.teamA, 'tasks/get', { id: taskB }), 'tasks/get')
    expectNotFound(await rpc(p, t.teamA, 'tasks/cancel', { id: taskB, metadata: { argus_supervisor: { request_id: id() } } }), 'tasks/cancel')
    expect(p.sim.rpcCalls().length).toBe(before)

    const listed = await rpc(p, t.teamA, 'message/send', listRead(rid('list')))
    expect(campaignsOf(listed)).toEqual(['team-a-1'])
    expect(listed.text).not.toContain('team-b')
    // granted by pattern: the same methods on team-a-1 answer
    await claim(p, t.teamA, 'team-a-1')
    expect((await rpc(p, t.teamA, 'campaign/read_control', { campaign_id: 'team-a-1' })).body.result.lease).toMatchObject({ controller_id: 'ctl-team-a' })
    const sentA = await rpc(p, t.teamA, 'message/send', submitSend('team-a-1', rid('msg-a')))
    expect(sentA.body.result, sentA.text).toMatchObject({ kind: 'task' })
    expect((await rpc(p, t.teamA, 'tasks/get', { id: sentA.body.result.id })).body.result).toMatchObject({ id: sentA.body.result.id })
  })

  it('after a reload takes a grant: the caller\'s own task reads as missing; with read kept and control taken, its cancel is forbidden; a replayed campaign list is filtered anew', async ({ startControlPair }) => {
    const { p, t, file } = await startWithGrants(startControlPair)
    await claim(p, t.teamA, 'team-a-1')
    const sent = await rpc(p, t.teamA, 'message/send', submitSend('team-a-1', rid('msg')))
    const task = sent.body.result.id as string
    const listId = rid('list')
    expect(campaignsOf(await rpc(p, t.teamA, 'message/send', listRead(listId)))).toEqual(['team-a-1'])

    // read kept, control taken
    file.write(grantCallers(t, { read: { campaigns: ['team-a-*'] } }))
    expect(await p.gw.reloadCallers()).toBe(true)
    expect((await rpc(p, t.teamA, 'tasks/get', { id: task })).body.result).toMatchObject({ id: task })
    const cancelId = rid('cancel')
    expectForbidden(await rpc(p, t.teamA, 'tasks/cancel', { id: task, metadata: { argus_supervisor: { request_id: cancelId } } }), 'cancel without control')
    expect(await p.gw.app.ledger.get(cancelId)).toBeUndefined()

    // every grant taken: the task is missing to its own sender, the list replayed shows nothing
    file.write(grantCallers(t, { read: { campaigns: ['team-z-*'] } }))
    expect(await p.gw.reloadCallers()).toBe(true)
    const before = p.sim.rpcCalls().length
    expectNotFound(await rpc(p, t.teamA, 'tasks/get', { id: task }), 'own task, grant gone')
    expectNotFound(await rpc(p, t.teamA, 'tasks/cancel', { id: task, metadata: { argus_supervisor: { request_id: rid('cancel') } } }), 'own cancel, grant gone')
    expect(p.sim.rpcCalls().length).toBe(before)
    const replayed = await rpc(p, t.teamA, 'message/send', listRead(listId))
    expect(campaignsOf(replayed)).toEqual([])
  })

  it('by project: a submission naming a project not granted is refused before anything is written; the campaign list by the entries\' projects', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    expect(campaignsOf(await rpc(p, t.vision, 'message/send', listRead(rid('list'))))).toEqual(['vis-3'])
    await claim(p, t.vision, 'vis-3')
    const ok = await rpc(p, t.vision, 'message/send', submitSend('vis-3', rid('msg'), 'vision'))
    expect(ok.body.result, ok.text).toMatchObject({ kind: 'task' })
    const msg = rid('msg')
    expectForbidden(await rpc(p, t.vision, 'message/send', submitSend('vis-3', msg, 'beta')), 'another project')
    expect(await p.gw.app.ledger.getFrontSend(identity('vision'), msg)).toBeUndefined()
    expectForbidden(await rpc(p, t.vision, 'campaign/read_control', { campaign_id: 'orphan-1' }), 'no known project')
  })

  it('GATEWAY_REQUIRE_GRANTS and JWT claims: no grant, no campaign; a claim grants by pattern', async ({ startControlPair }) => {
    const key = await testKey('k1')
    const idp = await startIdp([key])
    onTestFinished(idp.close)
    const { p, t } = await startWithGrants(startControlPair, {
      GATEWAY_REQUIRE_GRANTS: 'true',
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
      GATEWAY_JWT_JWKS_URL: idp.url,
      GATEWAY_JWT_CLAIMS: JSON.stringify({ campaigns: 'groups' })
    })
    expectForbidden(await rpc(p, t.legacy, 'campaign/read_control', { campaign_id: 'team-a-1' }), 'no grants')
    expect(campaignsOf(await rpc(p, t.legacy, 'message/send', listRead(rid('list'))))).toEqual([])
    const jwt = await sign(key, { sub: 'j-1', scope: 'read control', oo_controller_id: 'ctl-j1', groups: ['team-b-*'] })
    await eventually(async () => (await rpc(p, jwt, 'campaign/read_control', { campaign_id: 'team-b-7' })).body.result !== undefined, 5000, 'keys in use')
    expect((await rpc(p, jwt, 'campaign/claim_control', { campaign_id: 'team-b-7', request_id: rid('claim'), ttl_seconds: 60 })).body.result.lease).toMatchObject({ controller_id: 'ctl-j1' })
    expectForbidden(await rpc(p, jwt, 'campaign/claim_control', { campaign_id: 'team-a-1', request_id: rid('claim'), ttl_seconds: 60 }), 'claim-granted elsewhere')
  })
})
