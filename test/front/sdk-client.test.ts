// An unmodified @a2a-js/sdk 1.3.0 client pointed at the gateway's own card (docs/api.md#a2a-front-door):
// over v1.0 (its native wire) it runs the Argus reads, claims, submits, polls, cancels and
// releases against the campaign-control simulator, every request id reaching the remote once;
// a second client with another token sees none of the first one's tasks. Its v0.3 transport
// speaks the other generation to the same endpoint.
import { describe, expect } from 'vitest'
import { Client } from '@a2a-js/sdk/client'
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client'
import { it } from '../helpers/fixtures.js'
import { rid } from '../helpers/control.js'
import { argusRead, authed, message, sdkClient, textPart } from '../helpers/front-sdk.js'

const COMPLETED = 3
const CANCELED = 5

const submission = (campaignId: string, id: string) => ({
  tenant: '',
  message: message(id, [textPart('train it')], { argus_supervisor: { campaign_id: campaignId } }),
  configuration: { acceptedOutputModes: ['application/json'], taskPushNotificationConfig: undefined, returnImmediately: true } as never,
  metadata: undefined
})

type Ext = { callExtensionMethod: (m: string, p: unknown) => Promise<{ result: Record<string, unknown> }> }
const ext = (c: Client): Ext => c.transport as unknown as Ext

describe('@a2a-js/sdk 1.3.0 client at the front door', () => {
  it('v1.0: the Argus reads, claim, submit, poll, cancel and release; a second token sees none of it', async ({ controlPair: p }) => {
    const client = await sdkClient(p.gw, p.gw.tokens.controller)
    expect(client.protocolVersion).toBe('1.0')

    const health = await client.sendMessage(argusRead('supervisor.health')) as { parts: Array<{ content: { $case: string; value: Record<string, unknown> } }> }
    expect(health.parts[0]!.content).toMatchObject({ $case: 'data', value: { ok: true, operation: 'supervisor.health' } })

    const c = 'camp-sdk-1'
    const claimed = await ext(client).callExtensionMethod('campaign/claim_control', { campaign_id: c, request_id: rid('claim'), ttl_seconds: 600 })
    expect(claimed.result.lease).toMatchObject({ controller_id: 'ctl-1' })

    const subId = rid('submit')
    const task = await client.sendMessage(submission(c, subId)) as { id: string; status: { state: number } }
    expect(typeof task.id).toBe('string')
    // the same send again: the first answer, no second send
    expect((await client.sendMessage(submission(c, subId)) as { id: string }).id).toBe(task.id)
    expect(p.calls('message/send').filter((x) => x.params.message.messageId === subId)).toHaveLength(1)

    const polled = await client.getTask({ tenant: '', id: task.id, historyLength: 0 })
    expect(polled.id).toBe(task.id)
    expect(polled.history).toEqual([])
    expect(polled.metadata).toMatchObject({ outcomeScope: 'attempt' })

    // another caller, another token: the task does not exist for them
    const other = await sdkClient(p.gw, p.gw.tokens.all)
    await expect(other.getTask({ tenant: '', id: task.id, historyLength: 0 })).rejects.toMatchObject({ name: expect.stringMatching(/TaskNotFound/) })
    await expect(other.cancelTask({ tenant: '', id: task.id, metadata: { argus_supervisor: { request_id: rid('cancel') } } })).rejects.toMatchObject({ name: expect.stringMatching(/TaskNotFound/) })

    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: { argus_supervisor: { request_id: rid('cancel') } } })
    expect(canceled.status?.state).toBe(CANCELED)
    const released = await ext(client).callExtensionMethod('campaign/release_control', { campaign_id: c, request_id: rid('release') })
    expect(released.result).toEqual({ released: true })
    expect(p.calls('tasks/cancel')).toHaveLength(1)
  })

  it('v0.3: the SDK\'s v0.3 transport speaks the other generation to the same endpoint', async ({ controlPair: p }) => {
    const fetchImpl = authed(p.gw.tokens.controller)
    const v1 = await sdkClient(p.gw, p.gw.tokens.controller)
    const card = await v1.getAgentCard()
    const client = new Client(new LegacyJsonRpcTransport({ endpoint: `${p.gw.url}/a2a/`, fetchImpl }), card)
    expect(client.protocolVersion).toBe('0.3')
    const list = await client.sendMessage(argusRead('campaign.list')) as { parts: Array<{ content: { value: Record<string, unknown> } }> }
    expect(Array.isArray(list.parts[0]!.content.value.campaigns)).toBe(true)
    const c = 'camp-sdk-2'
    await ext(v1).callExtensionMethod('campaign/claim_control', { campaign_id: c, request_id: rid('claim'), ttl_seconds: 600 })
    const task = await client.sendMessage(submission(c, rid('submit'))) as { id: string }
    const polled = await client.getTask({ tenant: '', id: task.id, historyLength: 0 })
    expect(polled.id).toBe(task.id)
    expect([COMPLETED, 1, 2]).toContain(polled.status?.state)
  })
})
