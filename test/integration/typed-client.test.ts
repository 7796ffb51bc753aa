// The typed client (clients/typescript/) against a real gateway over a real socket: claim,
// submit, an ambiguous write planted at the remote, reconcile — each answer read through the
// generated types, each refusal as a typed error. And the client is what the generator makes of
// today's document: a route or schema change that was not regenerated fails here.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { createGatewayClient, isReplay, mutationResult, type AcceptedAnswer, type ErrorCodeOf, type Lease, type LeaseAnswer, type RequestRecord, type TaskState } from '../../clients/typescript/src/index.js'
import { CLIENT_DIR, GENERATED, generateClientFiles } from '../../scripts/generate-client.js'
import { rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

describe('the typed client', () => {
  it('claims, submits, meets an ambiguous write and reconciles it, with typed answers and errors', async ({ startControlPair }) => {
    const p = await startControlPair()
    const gateway = createGatewayClient({ baseUrl: p.gw.url, token: p.gw.tokens.controller })
    const campaignId = 'camp-typed-1'
    const path = { campaignId }

    const claimId = rid('claim')
    const claimed = await gateway.POST('/v1/campaigns/{campaignId}/control/claim', { params: { path }, body: { requestId: claimId, ttlSeconds: 600 } })
    expect(claimed.response.status, JSON.stringify(claimed.error)).toBe(200)
    if (claimed.data === undefined || !('lease' in claimed.data)) throw new Error('a claim answers its lease')
    const lease: Lease = claimed.data.lease
    // the union told apart: a first answer is the operation's own, typed as such
    const first = mutationResult(claimed.data)
    if (first.kind !== 'answer') throw new Error(`a first claim answers its lease, not ${first.kind}`)
    const answer: LeaseAnswer = first.answer
    expect(answer.lease).toEqual(lease)
    expect(claimed.data.requestId).toBe(claimId)
    expect(lease.controllerId).toBe('ctl-1')
    // Unix seconds, about ttlSeconds from now
    expect(Math.abs(lease.expiresAt - (Math.floor(Date.now() / 1000) + 600))).toBeLessThanOrEqual(5)
    expect(isReplay(claimed.response)).toBe(false)

    // another controller is refused: the error is typed with the codes claimControl can answer
    const rival = createGatewayClient({ baseUrl: p.gw.url, token: p.gw.tokens.all })
    const rivalId = rid('claim')
    const refused = await rival.POST('/v1/campaigns/{campaignId}/control/claim', { params: { path }, body: { requestId: rivalId, ttlSeconds: 60 } })
    expect(refused.response.status).toBe(409)
    const code: ErrorCodeOf<'claimControl'> | undefined = refused.error?.error.code
    expect(code).toBe('lease_held_by_other')
    expect(refused.error?.error.retryable).toBe(false)

    const submitId = rid('submit')
    const body = { requestId: submitId, parts: [{ kind: 'text' as const, text: 'Train the baseline on the 2026-11 split.' }] }
    const submitted = await gateway.POST('/v1/campaigns/{campaignId}/submissions', { params: { path }, body })
    expect(submitted.response.status, JSON.stringify(submitted.error)).toBe(202)
    if (submitted.data === undefined || !('taskId' in submitted.data) || submitted.data.taskId == null) throw new Error('a submission answers its task')
    const taskId = submitted.data.taskId
    // the same request id again: the stored answer, nothing sent
    const again = await gateway.POST('/v1/campaigns/{campaignId}/submissions', { params: { path }, body })
    expect(again.response.status).toBe(202)
    expect(isReplay(again.response)).toBe(true)
    expect(again.data).toEqual(submitted.data)
    expect(p.calls('message/send').filter((c) => c.params.message?.messageId === submitId)).toHaveLength(1)
    const task = await gateway.GET('/v1/tasks/{taskId}', { params: { path: { taskId } } })
    expect(task.data).toMatchObject({ taskId, outcomeScope: 'attempt' })
    const state: TaskState | undefined = task.data?.state
    expect(state).toBe('working')

    // the remote applies the intervention and the connection drops: an ambiguous write
    const ivId = rid('iv')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    const iv = await gateway.POST('/v1/campaigns/{campaignId}/interventions', { params: { path }, body: { requestId: ivId, intervention: { action: 'pause' } } })
    expect(iv.response.status).toBe(504)
    expect(iv.data).toBeUndefined()
    expect(iv.error?.error).toMatchObject({ code: 'ambiguous_write', retryable: false, requestId: ivId, reconcile: `/v1/campaigns/${campaignId}/requests/${ivId}/reconcile` })
    const blocked = await gateway.POST('/v1/campaigns/{campaignId}/interventions', { params: { path }, body: { requestId: rid('iv'), intervention: { action: 'go' } } })
    expect(blocked.error?.error).toMatchObject({ code: 'ambiguity_unresolved', requestId: ivId })

    const pending = await createGatewayClient({ baseUrl: p.gw.url, token: p.gw.tokens.admin }).GET('/v1/requests', { params: { query: { state: 'ambiguous' } } })
    expect(pending.data?.requests.map((r) => r.requestId)).toEqual([ivId])

    // reconcile takes no body; it asks request_status once and never re-sends
    const reconciled = await gateway.POST('/v1/campaigns/{campaignId}/requests/{requestId}/reconcile', { params: { path: { campaignId, requestId: ivId } } })
    expect(reconciled.response.status, JSON.stringify(reconciled.error)).toBe(200)
    const record: RequestRecord | undefined = reconciled.data
    expect(record).toMatchObject({ requestId: ivId, operation: 'intervene', state: 'applied', resolution: { kind: 'reconcile', by: 'controller' } })
    expect(p.calls('campaign/intervene')).toHaveLength(1)
    expect(p.calls('campaign/request_status')).toHaveLength(1)

    // its id again: the resolved record, not an AcceptedAnswer; mutationResult says which
    const replayed = await gateway.POST('/v1/campaigns/{campaignId}/interventions', { params: { path }, body: { requestId: ivId, intervention: { action: 'pause' } } })
    expect(replayed.response.status).toBe(200)
    expect(isReplay(replayed.response)).toBe(true)
    const told = mutationResult(replayed.data!)
    expect(told).toMatchObject({ kind: 'resolved', record: { requestId: ivId, state: 'applied' } })
    const accepted = mutationResult((await gateway.POST('/v1/campaigns/{campaignId}/interventions', { params: { path }, body: { requestId: rid('iv'), intervention: { action: 'go' } } })).data!)
    if (accepted.kind !== 'answer') throw new Error(`a new intervention answers AcceptedAnswer, not ${accepted.kind}`)
    const acceptedAnswer: AcceptedAnswer = accepted.answer
    expect(acceptedAnswer.accepted).toBe(true)
    // a pruned replay (the document's own example of one)
    const doc = JSON.parse(await readFile(join(CLIENT_DIR, 'openapi.json'), 'utf8'))
    expect(mutationResult(doc.components.schemas.PrunedAnswer.example)).toMatchObject({ kind: 'pruned', pruned: { pruned: true } })
    expect(mutationResult(doc.components.schemas.Request.example).kind).toBe('resolved')

    const listed = await gateway.GET('/v1/campaigns/{campaignId}/requests', { params: { path, query: { limit: 10 } } })
    // newest first; the rival's refused claim is listed too (only its id, operation, state, caller and times)
    expect(listed.data?.requests.map((r) => [r.requestId, r.state])).toEqual([[expect.any(String), 'applied'], [ivId, 'applied'], [submitId, 'applied'], [rivalId, 'rejected'], [claimId, 'applied']])

    // a wrong token is a typed 401
    const stranger = await createGatewayClient({ baseUrl: p.gw.url, token: 'tok-not-a-caller-0000000000' }).GET('/v1/upstream')
    expect(stranger.response.status).toBe(401)
    expect(stranger.error?.error.code).toBe('unauthorized')
  })

  it('is what npm run client:generate makes of the gateway\'s document today', async () => {
    const files = await generateClientFiles()
    for (const name of GENERATED) {
      const committed = await readFile(join(CLIENT_DIR, name), 'utf8').catch(() => '')
      expect(committed === files[name], `clients/typescript/${name} is stale: run \`npm run client:generate\` and commit the result`).toBe(true)
    }
  })
})
