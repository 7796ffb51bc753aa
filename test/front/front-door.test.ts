// The A2A front door over real sockets (docs/api.md#a2a-front-door): the gateway's card, strict
// JSON-RPC framing, snake_case and v1.0 normalised, refusals with the spec's codes, the Argus
// reads through the same reader, and submissions, cancels and the campaign methods through the
// control pipeline: de-duplicated by (caller, message id), single-shot, tasks scoped to their caller.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { call, frontRpc } from '../helpers/http.js'
import { rawExchange } from '../helpers/raw-http.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import type { TestGateway } from '../helpers/gateway.js'

const URN = 'urn:openoperator:argus-supervisor:v1'
const rpc = async (g: TestGateway, token: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  await frontRpc(g.url, token, method, params, headers)
const raw = async (g: TestGateway, token: string, rawBody: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  await call(`${g.url}/a2a/`, { method: 'POST', token, rawBody, headers })

const argusSend = (operation: string, messageId = rid('msg'), extra: Record<string, unknown> = {}) => ({
  configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation, requestId: messageId, ...extra } }, parts: [{ kind: 'data', data: { params: {} } }] }
})
const submitSend = (campaignId: string, messageId: string, text = 'train it') => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text }] }
})

describe('discovery', () => {
  it('serves its own card: its URL, bearer security, the Argus skills, both interfaces; no campaign control in observer mode; no secret', async ({ sim, gw }) => {
    const v03 = await call(`${gw.url}/a2a/.well-known/agent-card.json`)
    expect(v03.status).toBe(200)
    expect(v03.body).toMatchObject({ url: `${gw.url}/a2a/`, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC', security: [{ bearer: [] }] })
    expect(v03.body.skills.map((s: { id: string }) => s.id)).toEqual(['argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'])
    expect(v03.body.supportedInterfaces).toEqual([{ url: `${gw.url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url: `${gw.url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }])
    expect(v03.body.capabilities.extensions.map((e: { uri: string }) => e.uri)).toEqual([URN])
    expect(v03.text).not.toContain(sim.secret!)
    const v1 = await call(`${gw.url}/a2a/.well-known/agent.json`, { headers: { 'a2a-version': '1.0' } })
    expect(v1.body.url).toBeUndefined()
    expect(v1.body.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: expect.any(String) } } })
    expect(v1.headers.vary).toContain('A2A-Version')
    expect((await call(`${gw.url}/a2a/.well-known/jwks.json`)).status).toBe(404)
    // the header the document describes is read by the core, not validated: two of them are v0.3's card, not a 400
    const twice = await rawExchange(gw.url, 'GET /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\r\nA2A-Version: 0.3\r\nConnection: close\r\n\r\n')
    expect(twice.status).toBe(200)
    expect(twice.body.protocolVersion).toBe('0.3.0')
  })
})

describe('framing and refusals', () => {
  it('every bad input is a JSON-RPC error with a stable code, never a 500', async ({ gw }) => {
    const t = gw.tokens.reader
    const cases: Array<[string, number]> = [
      ['{', -32700],
      ['[]', -32600],
      ['"x"', -32600],
      ['{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{}}', -32600],
      ['{"jsonrpc":"2.0","method":"tasks/get","params":{}}', -32600],
      ['{"jsonrpc":"2.0","id":1.5,"method":"tasks/get","params":{}}', -32600],
      ['{"jsonrpc":"2.0","id":null,"method":"tasks/get","params":{}}', -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{},"extra":1}', -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":[1]}', -32602],
      ['{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}', -32601],
      ['{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}', -32004],
      ['{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"x"}}', -32004],
      ['{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{}}', -32003],
      ['{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard","params":{}}', -32007],
      ['{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m-1234567","parts":[{"kind":"text","text":"hi"}]}}}', -32004],
      ['{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":"x"}}', -32602],
      ['{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"someone-elses"}}', -32001]
    ]
    for (const [body, code] of cases) {
      const res = await raw(gw, t, body)
      expect(res.status, body).toBe(200)
      expect(res.body.jsonrpc, body).toBe('2.0')
      expect(res.body.error?.code, body).toBe(code)
    }
    // the other version's name is answered with the canonical one
    const v1name = await raw(gw, t, '{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{}}')
    expect(v1name.body).toMatchObject({ id: 7, error: { code: -32601, data: { canonical: 'message/send' } } })
    const v03name = await raw(gw, t, '{"jsonrpc":"2.0","id":8,"method":"message/send","params":{}}', { 'content-type': 'application/json', 'a2a-version': '1.0' })
    // to A2A-Version 1.0 the data is v1.0's: an ErrorInfo whose metadata holds the same fields as strings
    expect(v03name.body.error).toMatchObject({ code: -32601, data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'METHOD_NOT_FOUND', metadata: { code: 'not_found', canonical: 'SendMessage' } }] })
    expect((await raw(gw, t, '{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{}}', { 'content-type': 'application/json', 'a2a-version': '2.0' })).body.error.code).toBe(-32009)
    expect((await raw(gw, t, '{}', { 'content-type': 'text/plain' })).body.error.code).toBe(-32600)
    // a method sent as a path
    const path = await call(`${gw.url}/a2a/message/send`, { method: 'POST', token: t, body: {} })
    expect(path.status).toBe(404)
    expect(path.body.error.code).toBe(-32601)
    expect(path.body.error.message).toContain('POST')
    expect(path.body.error.data).toEqual({ code: 'not_found', retryable: false, endpoint: '/a2a/', method: 'message/send' })
    // no token: the REST 401
    expect((await call(`${gw.url}/a2a/`, { method: 'POST', body: {} })).status).toBe(401)
  })
})

describe('the Argus reads', () => {
  it('answer a message with the payload, snake_case and the legacy request_id accepted, through the same reader', async ({ sim, gw }) => {
    const t = gw.tokens.reader
    const res = await rpc(gw, t, 'message/send', argusSend('supervisor.health'))
    expect(res.body.result).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'data', data: { ok: true, operation: 'supervisor.health' } }] })
    expect(res.body.result.metadata[URN].operation).toBe('supervisor.health')
    const id = rid('msg')
    const snake = {
      configuration: { blocking: true, accepted_output_modes: ['application/json'] },
      message: { role: 'user', kind: 'message', message_id: id, extensions: [URN], metadata: { [URN]: { operation: 'campaign.list', request_id: id } }, parts: [{ kind: 'data', data: { params: {} } }] }
    }
    const list = await rpc(gw, t, 'message/send', snake)
    expect(Array.isArray(list.body.result.parts[0].data.campaigns)).toBe(true)
    // upstream: camelCase only, fresh ids, the seed's envelope
    const sends = sim.rpcCalls().filter((c) => c.method === 'message/send')
    expect(sends).toHaveLength(2)
    expect(JSON.stringify(sends)).not.toMatch(/message_id|request_id|accepted_output_modes/)
    // the same message id and content replays the first answer without a read; other content is refused
    const again = await rpc(gw, t, 'message/send', snake)
    expect(again.body.result).toEqual(list.body.result)
    expect(sim.rpcCalls().filter((c) => c.method === 'message/send')).toHaveLength(2)
    const other = await rpc(gw, t, 'message/send', { ...snake, message: { ...snake.message, metadata: { [URN]: { operation: 'supervisor.status' } } } })
    expect(other.body.error).toMatchObject({ code: -32011, data: { code: 'idempotency_key_mismatch' } })
    // both spellings that disagree
    const both = await rpc(gw, t, 'message/send', { ...snake, message: { ...snake.message, messageId: 'other-12345' } })
    expect(both.body.error).toMatchObject({ code: -32602, data: { code: 'conflicting_fields' } })
    // the Argus codes with safe data
    const unsupported = await rpc(gw, t, 'message/send', argusSend('campaign.claim'))
    expect(unsupported.body.error).toMatchObject({ code: -32022, data: { code: 'unsupported_argus_operation', retryable: false } })
    const bad = await rpc(gw, t, 'message/send', argusSend('supervisor.health', rid('msg'), { operation: 7 }))
    expect(bad.body.error).toMatchObject({ code: -32020, data: { code: 'invalid_argus_envelope' } })
  })

  it('a disabled supervisor is its Argus code, never the remote\'s text', async ({ startPair }) => {
    const { gw } = await startPair({ sim: { argusEnabled: false } })
    const res = await rpc(gw, gw.tokens.reader, 'message/send', argusSend('supervisor.health'))
    expect(res.body.error.data.code).toMatch(/capability_unavailable|argus_supervisor_disabled/)
    expect(res.status).toBe(200)
  })
})

describe('campaign control through the front door', () => {
  const claimRpc = async (p: ControlPair, token: string, campaignId: string) =>
    await rpc(p.gw, token, 'campaign/claim_control', { campaign_id: campaignId, request_id: rid('claim'), ttl_seconds: 600 })

  it('claim, submit, poll, cancel and release; every request id reached the remote once; another caller sees none of it', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = 'camp-front-1'
    const card = await call(`${p.gw.url}/a2a/.well-known/agent-card.json`)
    expect(card.body.capabilities.extensions[1]).toMatchObject({ uri: 'urn:openoperator:campaign-control:v1', params: { operations: { claim_control: 'campaign/claim_control', cancel: 'tasks/cancel' } } })
    const claimed = await claimRpc(p, t, c)
    expect(claimed.body.result.lease).toMatchObject({ controller_id: 'ctl-1', epoch: expect.any(Number), expires_at: expect.any(Number) })
    // the constraints envelope is injected and cannot be supplied
    const relax = await rpc(p.gw, t, 'campaign/renew_control', { campaign_id: c, request_id: rid('renew'), ttl_seconds: 600, constraints: { allow_merge: true } })
    expect(relax.body.error).toMatchObject({ code: -32602, data: { code: 'constraints_not_relaxable' } })
    expect(p.calls('campaign/claim_control')[0]!.params.constraints).toMatchObject({ version: 1, execution: 'remote_only', allow_merge: false })

    const messageId = rid('submit')
    const sub = await rpc(p.gw, t, 'message/send', submitSend(c, messageId))
    expect(sub.body.result).toMatchObject({ kind: 'task', status: { state: expect.any(String) } })
    const taskId = sub.body.result.id as string
    const upstream = p.calls('message/send').at(-1)!
    expect(upstream.params.message.messageId).toBe(messageId)
    expect(upstream.params.message.metadata.argus_supervisor).toMatchObject({ campaign_id: c, controller_id: 'ctl-1', request_id: messageId })
    // a repeat replays, other content with the same id is refused: never a second send
    expect((await rpc(p.gw, t, 'message/send', submitSend(c, messageId))).body.result.id).toBe(taskId)
    expect((await rpc(p.gw, t, 'message/send', submitSend(c, messageId, 'other'))).body.error.data.code).toBe('idempotency_key_mismatch')
    expect(p.calls('message/send').filter((x) => x.params.message.messageId === messageId)).toHaveLength(1)

    const got = await rpc(p.gw, t, 'tasks/get', { id: taskId, history_length: 0 })
    expect(got.body.result).toMatchObject({ kind: 'task', id: taskId, metadata: { outcomeScope: 'attempt' } })
    expect(got.body.result.history).toBeUndefined()
    // the other caller: the task does not exist for them, and they cannot cancel it
    const other = p.gw.tokens.all
    expect((await rpc(p.gw, other, 'tasks/get', { id: taskId })).body.error.code).toBe(-32001)
    expect((await rpc(p.gw, other, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: rid('cancel') } } })).body.error.code).toBe(-32001)
    // a reader cannot submit
    expect((await rpc(p.gw, p.gw.tokens.reader, 'message/send', submitSend(c, rid('submit')))).body.error).toMatchObject({ code: -32010, data: { code: 'forbidden' } })

    const cancelId = rid('cancel')
    const canceled = await rpc(p.gw, t, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: cancelId } } })
    expect(canceled.body.result).toMatchObject({ id: taskId, status: { state: 'canceled' } })
    expect((await rpc(p.gw, t, 'tasks/cancel', { id: taskId })).body.error.code).toBe(-32602)
    const released = await rpc(p.gw, t, 'campaign/release_control', { campaign_id: c, request_id: rid('release') })
    expect(released.body.result).toEqual({ released: true })
    expect((await rpc(p.gw, t, 'campaign/read_control', { campaign_id: c })).body.result).toEqual({ lease: null })
  })

  it('an ambiguous outcome is a JSON-RPC error with a stable code and the request id', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = 'camp-front-amb'
    await claim(p, t, c)
    p.sim.inject({ rpcMethod: 'campaign/release_control' }, { kind: 'drop' }, 1)
    const id = rid('release')
    const res = await rpc(p.gw, t, 'campaign/release_control', { campaign_id: c, request_id: id })
    expect(res.body.error).toMatchObject({ code: -32012, data: { code: 'ambiguous_write', requestId: id, retryable: false, reconcile: expect.stringContaining(id) } })
    // the REST twin sees the same record
    expect((await p.get(t, `/v1/campaigns/${c}/requests/${id}`)).body.state).toBe('ambiguous')
  })
})
