// The front door held to A2A v1.0's own text (the specification in the a2aproject/A2A
// repository, at tag v1.0.0; docs/api.md#a2a-front-door): every MUST of §3.3 (errors, capability validation), §3.4.1 (the
// context a task is given), §3.6 (versioning), §5.4 (error codes), §8 (the card and its
// signature) and §9 (the JSON-RPC binding) that applies to a door serving SendMessage, GetTask and
// CancelTask and refusing the rest — each test names its section — over real sockets, in v1.0 and,
// where the section applies to it, v0.3 (no A2A-Version).
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import { verifyAgentCardSignature } from '@a2a-js/sdk'
import { describe, expect, vi } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { call, frontRpc, type JsonResponse } from '../helpers/http.js'
import { rawExchange, type RawAnswer } from '../helpers/raw-http.js'
import { claim, rid } from '../helpers/control.js'
import type { TestGateway } from '../helpers/gateway.js'
import { specVerifiedSignatures } from '../helpers/a2a-spec-card.js'

const URN = 'urn:openoperator:argus-supervisor:v1'
const V1 = { 'a2a-version': '1.0' }
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest'

const rpc = async (g: TestGateway, token: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> =>
  await frontRpc(g.url, token, method, params, headers)
const raw = async (g: TestGateway, token: string, body: string, headers: Record<string, string> = {}): Promise<JsonResponse> =>
  await call(`${g.url}/a2a/`, { method: 'POST', token, rawBody: body, headers: { 'content-type': 'application/json', ...headers } })
/** a POST written byte by byte, with exactly the header lines given (an empty A2A-Version, an odd casing) */
const rawPost = async (g: TestGateway, token: string, body: unknown, headerLines: string): Promise<RawAnswer> => {
  const text = JSON.stringify(body)
  return await rawExchange(g.url, `POST /a2a/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${headerLines}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`)
}

/** §9.5: v1.0's error.data, each entry a @type object, and its ErrorInfo */
function v1Details (error: { data?: unknown }): { info: Record<string, any>; all: Array<Record<string, any>> } { // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(Array.isArray(error.data), JSON.stringify(error)).toBe(true)
  const all = error.data as Array<Record<string, any>> // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const d of all) expect(typeof d['@type'], JSON.stringify(d)).toBe('string')
  const info = all.find((d) => d['@type'] === ERROR_INFO)
  expect(info, JSON.stringify(all)).toBeDefined()
  expect(info!.reason).toMatch(/^[A-Z][A-Z0-9_]*$/)
  for (const v of Object.values(info!.metadata ?? {})) expect(typeof v).toBe('string')
  return { info: info!, all }
}

const v1Send = (messageId = rid('msg')) => ({
  message: { role: 'ROLE_USER', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: messageId } }, parts: [{ data: { params: {} } }] }
})
const v03Send = (messageId = rid('msg')) => ({
  configuration: { blocking: true },
  message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] }
})
const submitV1 = (campaignId: string, messageId: string, extra: Record<string, unknown> = {}) => ({
  configuration: { returnImmediately: true },
  message: { role: 'ROLE_USER', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ text: 'train it' }], ...extra }
})
const submitV03 = (campaignId: string, messageId: string, extra: Record<string, unknown> = {}) => ({
  configuration: { blocking: false },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text: 'train it' }], ...extra }
})

describe('§3.3.2 error handling', () => {
  it('v1.0: error.data is a list of @type objects — an ErrorInfo (reason, domain, string metadata with the contract code), a BadRequest for -32602; v0.3 keeps its object', async ({ gw }) => {
    const t = gw.tokens.reader
    // an A2A error: TASK_NOT_FOUND in A2A's domain, the contract's code and retryable as strings
    const missing = (await rpc(gw, t, 'GetTask', { id: 'task-none-1' }, V1)).body.error
    expect(missing.code).toBe(-32001)
    const { info } = v1Details(missing)
    expect(info).toEqual({ '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { code: 'not_found', retryable: 'false' } })
    // invalid params: INVALID_PARAMS and a BadRequest naming the field
    const noId = (await rpc(gw, t, 'GetTask', {}, V1)).body.error
    expect(noId.code).toBe(-32602)
    const bad = v1Details(noId)
    expect(bad.info).toMatchObject({ reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org', metadata: { code: 'invalid_request' } })
    expect(bad.all).toContainEqual({ '@type': BAD_REQUEST, fieldViolations: [{ field: 'params.id', description: 'params.id must be the task id.' }] })
    // the gateway's own code: its domain, the contract code as the reason
    const forbidden = (await rpc(gw, t, 'SendMessage', submitV1('camp-1', rid('submit')), V1)).body.error
    expect(forbidden.code).toBe(-32010)
    expect(v1Details(forbidden).info).toEqual({ '@type': ERROR_INFO, reason: 'FORBIDDEN', domain: 'openoperator-gateway', metadata: { code: 'forbidden', retryable: 'false' } })
    // v0.3: the object, as before
    expect((await rpc(gw, t, 'tasks/get', { id: 'task-none-1' })).body.error).toEqual({ code: -32001, message: 'Task not found.', data: { code: 'not_found', retryable: false } })
    expect((await rpc(gw, t, 'tasks/get', {})).body.error).toEqual({ code: -32602, message: 'params.id must be the task id.', data: { code: 'invalid_request', retryable: false } })
  })

  it('authentication: a request without credentials, or with credentials the gateway does not know, is refused', async ({ gw }) => {
    for (const headers of [{}, V1]) {
      const none = await call(`${gw.url}/a2a/`, { method: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }, headers })
      expect(none.status).toBe(401)
      const wrong = await call(`${gw.url}/a2a/`, { method: 'POST', token: 'tok-not-a-caller', body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }, headers })
      expect(wrong.status).toBe(401)
    }
  })

  it('authorization: a task another caller made does not exist for this one — the same answer as a task that does not exist, in both versions', async ({ controlPair: p }) => {
    const c = 'camp-conf-owner'
    await claim(p, p.gw.tokens.controller, c)
    const made = await rpc(p.gw, p.gw.tokens.controller, 'SendMessage', submitV1(c, rid('submit')), V1)
    const taskId = made.body.result.task.id as string
    const other = p.gw.tokens.all
    for (const [method, headers] of [['GetTask', V1], ['tasks/get', {}]] as const) {
      const theirs = (await rpc(p.gw, other, method, { id: taskId }, headers)).body.error
      const none = (await rpc(p.gw, other, method, { id: 'task-that-never-was' }, headers)).body.error
      expect(theirs.code).toBe(-32001)
      expect(theirs).toEqual(none)
    }
  })

  it('validation: parameters are checked before anything is processed — nothing reaches the remote', async ({ sim, gw }) => {
    const before = sim.rpcCalls().length
    const v1 = v1Send()
    const v03 = v03Send()
    const bad1 = (await rpc(gw, gw.tokens.reader, 'SendMessage', { ...v1, message: { ...v1.message, parts: 'not a list' } }, V1)).body.error
    expect(bad1.code).toBe(-32602)
    expect(v1Details(bad1).all).toContainEqual({ '@type': BAD_REQUEST, fieldViolations: [{ field: 'params.message.parts', description: expect.any(String) }] })
    expect((await rpc(gw, gw.tokens.reader, 'message/send', { ...v03, message: { ...v03.message, parts: 'not a list' } })).body.error).toMatchObject({ code: -32602, data: { code: 'invalid_request' } })
    expect(sim.rpcCalls().length).toBe(before)
  })
})

describe('§3.3.4 capability validation', () => {
  it('push notifications: the card says pushNotifications false, and every push configuration method is PushNotificationNotSupportedError (-32003)', async ({ gw }) => {
    const t = gw.tokens.reader
    for (const v of ['1.0', '0.3'] as const) {
      const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers: v === '1.0' ? V1 : {} })).body
      expect(card.capabilities.pushNotifications).toBe(false)
    }
    for (const m of ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig']) {
      const e = (await rpc(gw, t, m, { taskId: 'x' }, V1)).body.error
      expect(e.code, m).toBe(-32003)
      expect(v1Details(e).info).toMatchObject({ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', domain: 'a2a-protocol.org' })
    }
    for (const m of ['tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get', 'tasks/pushNotificationConfig/list', 'tasks/pushNotificationConfig/delete']) {
      expect((await rpc(gw, t, m, { id: 'x' })).body.error.code, m).toBe(-32003)
    }
  })

  it('streaming: the card says streaming false, and SendStreamingMessage and SubscribeToTask are UnsupportedOperationError (-32004)', async ({ gw }) => {
    const t = gw.tokens.reader
    expect((await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers: V1 })).body.capabilities.streaming).toBe(false)
    for (const m of ['SendStreamingMessage', 'SubscribeToTask']) {
      const e = (await rpc(gw, t, m, m === 'SubscribeToTask' ? { id: 'x' } : v1Send(), V1)).body.error
      expect(e.code, m).toBe(-32004)
      expect(v1Details(e).info.reason).toBe('UNSUPPORTED_OPERATION')
    }
    for (const m of ['message/stream', 'tasks/resubscribe']) expect((await rpc(gw, t, m, m === 'tasks/resubscribe' ? { id: 'x' } : v03Send())).body.error.code, m).toBe(-32004)
  })

  it('the extended card: the card does not declare capabilities.extendedAgentCard, so GetExtendedAgentCard is UnsupportedOperationError (-32004); v0.3\'s method -32007', async ({ gw }) => {
    const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers: V1 })).body
    expect(card.capabilities.extendedAgentCard ?? false).toBe(false)
    const e = (await raw(gw, gw.tokens.reader, '{"jsonrpc":"2.0","id":6,"method":"GetExtendedAgentCard"}', V1)).body.error
    expect(e.code).toBe(-32004)
    expect(v1Details(e).info).toMatchObject({ reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' })
    const v03card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`)).body
    expect(v03card.supportsAuthenticatedExtendedCard ?? false).toBe(false)
    expect((await rpc(gw, gw.tokens.reader, 'agent/getAuthenticatedExtendedCard', {})).body.error.code).toBe(-32007)
  })

  it('extensions: no extension the card declares is required: true, so no request is refused for not declaring one (no -32008)', async ({ controlPair: p }) => {
    for (const headers of [{}, V1]) {
      const card = (await call(`${p.gw.url}/a2a/.well-known/agent-card.json`, { headers })).body
      expect(card.capabilities.extensions.length).toBeGreaterThan(1)
      for (const ext of card.capabilities.extensions) expect(ext.required ?? false, ext.uri).toBe(false)
    }
    // a campaign method sent without any A2A-Extensions header is served
    expect((await rpc(p.gw, p.gw.tokens.controller, 'campaign/read_control', { campaign_id: 'camp-conf-ext' }, V1)).body.result).toEqual({ lease: null })
  })
})

describe('§3.4.1 context identifiers', () => {
  it('the context the remote gave a new task is in the answer, the same GetTask shows; a context the caller names for a new task is refused, never replaced', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = 'camp-conf-ctx'
    await claim(p, t, c)
    for (const v of ['1.0', '0.3'] as const) {
      const sent = v === '1.0'
        ? (await rpc(p.gw, t, 'SendMessage', submitV1(c, rid('submit')), V1)).body.result.task
        : (await rpc(p.gw, t, 'message/send', submitV03(c, rid('submit')))).body.result
      expect(sent.contextId, JSON.stringify(sent)).toMatch(/\S/)
      const got = v === '1.0' ? (await rpc(p.gw, t, 'GetTask', { id: sent.id }, V1)).body.result : (await rpc(p.gw, t, 'tasks/get', { id: sent.id })).body.result
      expect(got.contextId).toBe(sent.contextId)
    }
    const before = p.calls('message/send').length
    const named = await rpc(p.gw, t, 'SendMessage', submitV1(c, rid('submit'), { contextId: 'ctx-mine' }), V1)
    expect(named.body.error.code).toBe(-32602)
    expect(v1Details(named.body.error).all).toContainEqual({ '@type': BAD_REQUEST, fieldViolations: [{ field: 'params.message.contextId', description: expect.any(String) }] })
    expect(p.calls('message/send')).toHaveLength(before)
  })
})

describe('§3.6 versioning', () => {
  it('an empty A2A-Version is 0.3 (§3.6.2): v0.3\'s names and shapes, with the header absent or empty', async ({ gw }) => {
    for (const h of ['', 'A2A-Version: \r\n', 'A2A-Version:    \r\n']) {
      const v1name = await rawPost(gw, gw.tokens.reader, { jsonrpc: '2.0', id: 'e-1', method: 'GetTask', params: { id: 'x' } }, h)
      expect(v1name.body.error, h).toMatchObject({ code: -32601, data: { code: 'not_found', canonical: 'tasks/get' } })
      const read = await rawPost(gw, gw.tokens.reader, { jsonrpc: '2.0', id: 'e-2', method: 'message/send', params: v03Send() }, h)
      expect(read.body.result, h).toMatchObject({ kind: 'message', role: 'agent' })
    }
  })

  it('a request is served in the semantics of the version it asks for (§3.6.2): 1.0\'s names, roles, parts and its {message} wrapper; 0.3\'s otherwise', async ({ gw }) => {
    const v1 = (await rpc(gw, gw.tokens.reader, 'SendMessage', v1Send(), V1)).body.result
    expect(Object.keys(v1)).toEqual(['message'])
    expect(v1.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ data: expect.any(Object) }] })
    expect(v1.message.kind).toBeUndefined()
    const v03 = (await rpc(gw, gw.tokens.reader, 'message/send', v03Send())).body.result
    expect(v03).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'data' }] })
  })

  it('patch versions are not considered (§3.6): 1.0.7 is 1.0, 0.3.0 is 0.3', async ({ gw }) => {
    expect((await rpc(gw, gw.tokens.reader, 'SendMessage', v1Send(), { 'a2a-version': '1.0.7' })).body.result.message.role).toBe('ROLE_AGENT')
    expect((await rpc(gw, gw.tokens.reader, 'message/send', v03Send(), { 'a2a-version': '0.3.0' })).body.result.role).toBe('agent')
  })

  it('a version the door does not speak is VersionNotSupportedError (§3.6.2, §5.4: -32009)', async ({ gw }) => {
    for (const version of ['2.0', '0.2', '1']) {
      const e = (await rpc(gw, gw.tokens.reader, 'GetTask', { id: 'x' }, { 'a2a-version': version })).body.error
      expect(e.code, version).toBe(-32009)
      expect(v1Details(e).info).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED', domain: 'a2a-protocol.org', metadata: { supportedVersions: '["1.0","0.3"]' } })
    }
  })
})

describe('§5.4 error code mappings', () => {
  it('each A2A error the door can give has its JSON-RPC code, and to v1.0 its ErrorInfo reason', async ({ gw }) => {
    const t = gw.tokens.reader
    const cases: Array<[string, unknown, number, string]> = [
      ['GetTask', { id: 'task-none' }, -32001, 'TASK_NOT_FOUND'],
      ['CreateTaskPushNotificationConfig', {}, -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
      ['SendStreamingMessage', v1Send(), -32004, 'UNSUPPORTED_OPERATION'],
      ['ListTasks', {}, -32004, 'UNSUPPORTED_OPERATION']
    ]
    for (const [method, params, code, reason] of cases) {
      const e = (await rpc(gw, t, method, params, V1)).body.error
      expect(e.code, method).toBe(code)
      expect(v1Details(e).info.reason, method).toBe(reason)
    }
    expect((await rpc(gw, t, 'GetTask', { id: 'x' }, { 'a2a-version': '9.9' })).body.error.code).toBe(-32009)
    expect((await rpc(gw, t, 'agent/getAuthenticatedExtendedCard', {})).body.error.code).toBe(-32007)
  })

  it('TaskNotCancelableError is -32002: a task already canceled, in both versions', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const c = 'camp-conf-cancel'
    await claim(p, t, c)
    const taskId = (await rpc(p.gw, t, 'SendMessage', submitV1(c, rid('submit')), V1)).body.result.task.id as string
    const cancel = (id: string) => ({ id: taskId, metadata: { argus_supervisor: { request_id: id } } })
    expect((await rpc(p.gw, t, 'CancelTask', cancel(rid('cancel')), V1)).body.result.status.state).toBe('TASK_STATE_CANCELED')
    const again = (await rpc(p.gw, t, 'CancelTask', cancel(rid('cancel')), V1)).body.error
    expect(again.code).toBe(-32002)
    expect(v1Details(again).info).toMatchObject({ reason: 'TASK_NOT_CANCELABLE', domain: 'a2a-protocol.org', metadata: { code: 'task_not_cancelable' } })
    expect((await rpc(p.gw, t, 'tasks/cancel', cancel(rid('cancel')))).body.error).toMatchObject({ code: -32002, data: { code: 'task_not_cancelable' } })
  })
})

async function signingKey (): Promise<{ jwk: JWK; env: Record<string, string> }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: 'conf-card-1', alg: 'ES256' }
  return { jwk, env: { GATEWAY_CARD_SIGNING_KEY: JSON.stringify(jwk), GATEWAY_PUBLIC_URL: 'https://gateway.example' } }
}

describe('§8 the agent card', () => {
  it('is served without a token at the well-known path (§8.1, §8.2); each interface it declares answers at its URL in its protocol version (§8.3.1)', async ({ gw }) => {
    for (const headers of [{}, V1]) {
      const card = await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers })
      expect(card.status).toBe(200)
      expect(card.body.supportedInterfaces.length).toBeGreaterThan(0)
      for (const i of card.body.supportedInterfaces as Array<{ url: string; protocolBinding: string; protocolVersion: string }>) {
        expect(i.protocolBinding).toBe('JSONRPC')
        const method = i.protocolVersion === '1.0' ? 'GetTask' : 'tasks/get'
        const res = await call(i.url, { method: 'POST', token: gw.tokens.reader, body: { jsonrpc: '2.0', id: 1, method, params: { id: 'x' } }, headers: { 'a2a-version': i.protocolVersion } })
        expect(res.body.error.code, `${i.url} ${i.protocolVersion}`).toBe(-32001)
      }
    }
  })

  it('a signed card verifies over its §8.4.1 canonical form — ProtoJSON, defaults omitted, signatures excluded, RFC 8785 — with the published key, in both shapes; §8.4.2\'s header', async ({ startPair }) => {
    const key = await signingKey()
    const { gw } = await startPair({ env: key.env })
    const published = (await call(`${gw.url}/a2a/.well-known/jwks.json`)).body.keys[0] as JWK
    for (const headers of [{}, V1]) {
      const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers })).body
      expect(await specVerifiedSignatures(card, published), JSON.stringify(headers)).toBeGreaterThanOrEqual(1)
      // a field holding its default is not signed: the card does not carry it (an extension's required: false)
      for (const ext of card.capabilities.extensions) expect(ext.required).toBeUndefined()
      expect(await specVerifiedSignatures({ ...card, description: `${card.description as string}!` }, published)).toBe(0)
    }
  })

  it('a signed card verifies with @a2a-js/sdk\'s verifyAgentCardSignature, in both shapes; a tampered one does not (§8.4.3)', async ({ startPair }) => {
    const key = await signingKey()
    const { gw } = await startPair({ env: key.env })
    const published = (await call(`${gw.url}/a2a/.well-known/jwks.json`)).body.keys[0] as JWK
    // the SDK reports each signature it could not use on console.debug
    const quiet = vi.spyOn(console, 'debug').mockImplementation(() => {})
    try {
      const verify = verifyAgentCardSignature(async (kid) => {
        expect(kid).toBe('conf-card-1')
        return published
      })
      for (const headers of [{}, V1]) {
        const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers })).body
        await expect(verify(card)).resolves.toBeUndefined()
        await expect(verify({ ...card, name: 'someone else' })).rejects.toThrow(/No valid signatures/)
      }
    } finally {
      quiet.mockRestore()
    }
  })
})

describe('§9 the JSON-RPC binding', () => {
  it('§9.1: answers are application/json; a request that is not application/json is refused (-32600), in the caller\'s shape', async ({ gw }) => {
    const ok = await rpc(gw, gw.tokens.reader, 'GetTask', { id: 'x' }, V1)
    expect(ok.headers['content-type']).toMatch(/^application\/json/)
    const text = await call(`${gw.url}/a2a/`, { method: 'POST', token: gw.tokens.reader, rawBody: '{}', headers: { 'content-type': 'text/plain', ...V1 } })
    expect(text.headers['content-type']).toMatch(/^application\/json/)
    expect(text.body.error.code).toBe(-32600)
    expect(v1Details(text.body.error).info).toMatchObject({ reason: 'INVALID_REQUEST', metadata: { code: 'invalid_request' } })
    const v03 = await call(`${gw.url}/a2a/`, { method: 'POST', token: gw.tokens.reader, rawBody: '{}', headers: { 'content-type': 'text/plain' } })
    expect(v03.body.error).toEqual({ code: -32600, message: 'Content-Type must be application/json.', data: { code: 'invalid_request', retryable: false } })
  })

  it('§9.1, §5.3: PascalCase method names under 1.0 (SendMessage, GetTask, CancelTask); the other generation\'s names are -32601 naming the right one', async ({ gw }) => {
    const t = gw.tokens.reader
    expect((await rpc(gw, t, 'SendMessage', v1Send(), V1)).body.result.message).toBeDefined()
    expect((await rpc(gw, t, 'GetTask', { id: 'x' }, V1)).body.error.code).toBe(-32001)
    expect((await rpc(gw, t, 'CancelTask', { id: 'x' }, V1)).body.error.code).toBe(-32010)
    const old = (await rpc(gw, t, 'tasks/get', { id: 'x' }, V1)).body.error
    expect(old.code).toBe(-32601)
    expect(v1Details(old).info.metadata).toMatchObject({ canonical: 'GetTask' })
  })

  it('§9.2: A2A-Version is an HTTP header, its name case-insensitive', async ({ gw }) => {
    const res = await rawPost(gw, gw.tokens.reader, { jsonrpc: '2.0', id: 'h-1', method: 'GetTask', params: { id: 'x' } }, 'a2A-vErSiOn: 1.0\r\n')
    expect(res.body.error.code).toBe(-32001)
    expect(v1Details(res.body.error).info.reason).toBe('TASK_NOT_FOUND')
  })

  it('§9.3: a request that is not JSON-RPC 2.0 is refused with JSON-RPC\'s codes, the id echoed where it could be read', async ({ gw }) => {
    const t = gw.tokens.reader
    for (const headers of [{}, V1]) {
      const notJson = (await raw(gw, t, '{', headers)).body
      expect(notJson).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
      const wrong = (await raw(gw, t, '{"jsonrpc":"1.0","id":"r-9","method":"GetTask","params":{}}', headers)).body
      expect(wrong).toMatchObject({ jsonrpc: '2.0', id: 'r-9', error: { code: -32600 } })
    }
    expect(v1Details((await raw(gw, t, '{', V1)).body.error).info).toMatchObject({ reason: 'JSON_PARSE', metadata: { code: 'invalid_request' } })
  })

  it('§9.5: to A2A-Version 1.0 every error\'s data is a list of @type objects with an ErrorInfo, whatever refused it', async ({ gw }) => {
    const t = gw.tokens.reader
    const bodies = [
      '{',
      '[]',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}',
      '{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod","params":{}}',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"x"}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}',
      '{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}'
    ]
    for (const body of bodies) {
      const e = (await raw(gw, t, body, V1)).body.error
      expect(e, body).toBeDefined()
      v1Details(e)
    }
    // a method sent as a URL path: 404, its error in the caller's shape too
    const path = await call(`${gw.url}/a2a/SendMessage`, { method: 'POST', token: t, body: {}, headers: V1 })
    expect(path.status).toBe(404)
    expect(v1Details(path.body.error).info).toMatchObject({ reason: 'METHOD_NOT_FOUND', metadata: { method: 'SendMessage', endpoint: '/a2a/' } })
  })
})
