// Both ends real (docs/api.md#a2a-front-door): an unmodified @a2a-js/sdk 1.3.0 client drives the
// gateway's front door while the gateway's remote is a real @a2a-js/sdk 1.3.0 server, v1.0 only
// and dual. The SDK server is no OpenOperator: no campaign-control extension, so the gateway is an
// observer. What that leaves is shown end to end: the card (the server's Argus skills, bearer
// security, no campaign control), the Argus reads through the same reader (de-duplicated per caller
// and message id, each caller's own), the SDK client's v0.3 transport against the same endpoint,
// and the refusals — a task the caller's own submission did not make does not exist for them, a
// submission and a claim are refused in observer mode, streaming is refused — with nothing of a
// refusal reaching the server.
import { describe, expect, it, onTestFinished } from 'vitest'
import { Client } from '@a2a-js/sdk/client'
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client'
import { startSdkServer, type SdkServer } from '../helpers/a2a-js-server.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { frontRpc } from '../helpers/http.js'
import { rid } from '../helpers/control.js'
import { argusRead, authed, message, sdkClient, textPart, URN } from '../helpers/front-sdk.js'

type Payload = { parts: Array<{ content: { $case: string; value: Record<string, unknown> } }> }

async function rig (mode: 'v1.0' | 'dual'): Promise<{ server: SdkServer; g: TestGateway }> {
  const server = await startSdkServer({ mode })
  onTestFinished(async () => { await server.close() })
  const g = await startGateway({ upstreamUrl: server.url, env: { SPYNEL_AGENT_ZERO_API_KEY: 'interop-secret-12345' } })
  return { server, g }
}

describe.each(['v1.0', 'dual'] as const)('the SDK client at the front door, the SDK server behind it (%s)', (mode) => {
  it('the card, the Argus reads per caller and message id, and the refusals, nothing of which reaches the server', async () => {
    const { server, g } = await rig(mode)
    const client = await sdkClient(g, g.tokens.controller)
    expect(client.protocolVersion).toBe('1.0')
    const card = await client.getAgentCard() as unknown as { skills: Array<{ id: string }>; capabilities: { extensions: Array<{ uri: string }>; streaming: boolean }; securitySchemes: Record<string, unknown> }
    // the remote's Argus skills, the gateway's bearer, no campaign control: the SDK server is no OpenOperator
    expect(card.skills.map((s) => s.id)).toEqual(['argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'])
    expect(card.capabilities.extensions.map((e) => e.uri)).toEqual([URN])
    expect(Object.keys(card.securitySchemes)).toEqual(['bearer'])
    expect(JSON.stringify(card)).not.toContain('interop-secret-12345')

    // the Argus reads, through the same reader, the SDK server answering them on its own v1.0 wire
    const id = rid('read')
    const health = await client.sendMessage(argusRead('supervisor.health', id)) as Payload
    expect(health.parts[0]!.content).toEqual({ $case: 'data', value: { status: 'ok', interop: 'a2a-js' } })
    const list = await client.sendMessage(argusRead('campaign.list')) as Payload
    expect(list.parts[0]!.content.value).toEqual({ campaigns: [{ id: 'camp-1' }], interop: 'a2a-js' })
    expect(server.rpc).toEqual([{ method: 'SendMessage', version: '1.0' }, { method: 'SendMessage', version: '1.0' }])
    // the same message id and content: the first answer, no second read; another caller's is its own
    expect(await client.sendMessage(argusRead('supervisor.health', id))).toEqual(health)
    expect(server.rpc).toHaveLength(2)
    const other = await sdkClient(g, g.tokens.reader)
    expect((await other.sendMessage(argusRead('supervisor.health', id)) as Payload).parts[0]!.content.value.interop).toBe('a2a-js')
    expect(server.rpc).toHaveLength(3)

    // a task the server made for a read is no caller's own: TaskNotFound, and no GetTask reaches the server
    const readTask = server.tasks[0]!
    await expect(client.getTask({ tenant: '', id: readTask, historyLength: 0 })).rejects.toMatchObject({ name: expect.stringMatching(/TaskNotFound/) })
    await expect(client.cancelTask({ tenant: '', id: readTask, metadata: { argus_supervisor: { request_id: rid('cancel') } } })).rejects.toMatchObject({ name: expect.stringMatching(/TaskNotFound/) })
    // observer mode: a submission and a claim are refused with the contract's code, nothing sent
    const submit = client.sendMessage({
      tenant: '',
      message: message(rid('submit'), [textPart('train it')], { argus_supervisor: { campaign_id: 'camp-1' } }),
      configuration: { acceptedOutputModes: ['application/json'], taskPushNotificationConfig: undefined, returnImmediately: true } as never,
      metadata: undefined
    })
    await expect(submit).rejects.toThrow()
    const ext = client.transport as unknown as { callExtensionMethod: (m: string, p: unknown) => Promise<unknown> }
    await expect(ext.callExtensionMethod('campaign/claim_control', { campaign_id: 'camp-1', request_id: rid('claim'), ttl_seconds: 600 })).rejects.toThrow()
    // the same refusals on the wire: their codes and contract codes
    const rpc = async (method: string, params: unknown, version = '1.0') => (await frontRpc(g.url, g.tokens.controller, method, params, { 'a2a-version': version })).body
    const claim = await rpc('campaign/claim_control', { campaign_id: 'camp-1', request_id: rid('claim'), ttl_seconds: 600 })
    // to A2A-Version 1.0, v1.0's error details: an ErrorInfo in the gateway's domain, the contract fields as strings
    expect(claim.error).toMatchObject({ code: -32015, data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CAPABILITY_UNAVAILABLE', domain: 'openoperator-gateway', metadata: { code: 'capability_unavailable', missingPrerequisites: expect.stringMatching(/^\[/) } }] })
    expect((await rpc('SendStreamingMessage', argusRead('supervisor.health'))).error.code).toBe(-32004)
    expect((await rpc('GetTask', { id: readTask })).error.code).toBe(-32001)
    expect(server.rpc).toHaveLength(3)
    expect(server.rpc.every((r) => r.method === 'SendMessage')).toBe(true)
  })

  it('the SDK client\'s v0.3 transport reads through the same endpoint; the gateway speaks v1.0 to the server', async () => {
    const { server, g } = await rig(mode)
    const card = await (await sdkClient(g, g.tokens.reader)).getAgentCard()
    const client = new Client(new LegacyJsonRpcTransport({ endpoint: `${g.url}/a2a/`, fetchImpl: authed(g.tokens.reader) }), card)
    expect(client.protocolVersion).toBe('0.3')
    const status = await client.sendMessage(argusRead('supervisor.status')) as Payload
    expect(status.parts[0]!.content.value).toEqual({ campaigns: 1, interop: 'a2a-js' })
    await expect(client.getTask({ tenant: '', id: server.tasks[0]!, historyLength: 0 })).rejects.toMatchObject({ name: expect.stringMatching(/TaskNotFound/) })
    expect(server.rpc).toEqual([{ method: 'SendMessage', version: '1.0' }])
  })
})
