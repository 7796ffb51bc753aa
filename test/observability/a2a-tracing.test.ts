// The A2A front door traced in OpenTelemetry's A2A conventions (docs/design.md#tracing;
// semantic-conventions-genai's A2A page, status Development, quoted in
// docs/operating.md#tracing): each front-door request is a SERVER span named `{a2a.method.name}`
// (v1.0's names whatever the caller spoke, the extension's `campaign/*` as named) under the HTTP
// server span, and each call it makes to the remote a CLIENT span of the same shape beneath it —
// the method, message, task, state, protocol version, the card's agent name and version (the
// gateway's own on the SERVER side, the remote's on the CLIENT side), the context id, the
// endpoint, and `error.type` the JSON-RPC code as text on failure. The gateway's own facts keep
// the `gateway.` prefix. Spans are taken from the SDK's own exporter (OTLP/HTTP JSON), received
// in memory on loopback.
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { rid } from '../helpers/control.js'
import { call, frontRpc } from '../helpers/http.js'
import { attrs, CLIENT, descendsFrom, SERVER, startOtlpReceiver, STATUS_ERROR, type OtlpReceiver, type OtlpSpan } from '../helpers/otlp.js'

const V1 = { 'a2a-version': '1.0' }
const URN = 'urn:openoperator:argus-supervisor:v1'
/** the attributes the conventions rename: none of them may be exported any more */
const OLD_NAMES = ['a2a.method', 'a2a.kind', 'a2a.request_id', 'a2a.task_id', 'a2a.outcome', 'rpc.system', 'rpc.method', 'rpc.jsonrpc.error_code']

let otlp: OtlpReceiver
const tokens: string[] = []
const secrets: string[] = []
/** planted in what callers send: never in a span */
const planted: string[] = []

beforeAll(async () => {
  otlp = await startOtlpReceiver()
  // the SDK reads these from the process environment when the first gateway starts tracing
  Object.assign(process.env, otlp.otelEnv)
})
afterAll(async () => { await otlp?.close() })

const portOf = (url: string): number => Number(new URL(url).port)
const serverSpan = (pick: (a: Record<string, unknown>) => boolean) => (s: OtlpSpan): boolean => s.kind === SERVER && attrs(s)['a2a.method.name'] !== undefined && pick(attrs(s))
const clientSpan = (pick: (a: Record<string, unknown>) => boolean) => (s: OtlpSpan): boolean => s.kind === CLIENT && pick(attrs(s))

describe('the A2A front door in OpenTelemetry\'s A2A conventions', () => {
  it('a submission: SendMessage on both sides of the hop, the CLIENT span under the SERVER span under the HTTP span', async ({ startControlPair }) => {
    const p = await startControlPair({ env: otlp.otelEnv })
    tokens.push(p.gw.tokens.controller)
    if (p.sim.secret !== undefined) secrets.push(p.sim.secret)
    const c = `camp-otel-${rid('c').slice(2)}`
    const claimId = rid('claim')
    const claimed = await frontRpc(p.gw.url, p.gw.tokens.controller, 'campaign/claim_control', { campaign_id: c, request_id: claimId, ttl_seconds: 600 }, V1)
    expect(claimed.body.result?.lease, claimed.text).toBeDefined()
    const subId = rid('submit')
    const sent = await frontRpc(p.gw.url, p.gw.tokens.controller, 'SendMessage', {
      message: { messageId: subId, role: 'ROLE_USER', parts: [{ text: 'train it' }], metadata: { argus_supervisor: { campaign_id: c } } },
      configuration: { returnImmediately: true }
    }, V1)
    const task = sent.body.result?.task
    expect(typeof task?.id, sent.text).toBe('string')

    const server = await otlp.waitFor('the SendMessage SERVER span', serverSpan((a) => a['a2a.message.id'] === subId))
    expect(server.name).toBe('SendMessage')
    expect(attrs(server)).toMatchObject({
      'a2a.method.name': 'SendMessage',
      'a2a.message.id': subId,
      'a2a.task.id': task.id,
      'a2a.task.state': task.status.state,
      'a2a.protocol.version': '1.0',
      'gen_ai.agent.name': 'openoperator-gateway',
      'gen_ai.agent.version': '1.0.0',
      'server.address': '127.0.0.1',
      'server.port': portOf(p.gw.url),
      'gateway.request_id': subId,
      'gateway.campaign_id': c,
      'gateway.a2a.outcome': 'ok'
    })
    expect(attrs(server)['a2a.task.state']).toMatch(/^TASK_STATE_[A-Z_]+$/)
    expect(attrs(server)['error.type']).toBeUndefined()
    // the transport's span is its parent, as the conventions' "Server processing" example draws it
    const http = otlp.spans.find((s) => s.spanId === server.parentSpanId)
    expect(http?.kind).toBe(SERVER)
    expect(http?.name).toBe('POST /a2a/')

    // the call to the remote: v1.0's name though the remote speaks v0.3 (message/send on the wire)
    const client = await otlp.waitFor('the SendMessage CLIENT span', clientSpan((a) => a['a2a.method.name'] === 'SendMessage' && a['gateway.request_id'] === subId))
    expect(client.name).toBe('SendMessage')
    expect(client.traceId).toBe(server.traceId)
    expect(descendsFrom(otlp.spans, client, server)).toBe(true)
    expect(attrs(client)).toMatchObject({
      'a2a.method.name': 'SendMessage',
      'a2a.message.id': subId,
      'a2a.task.id': task.id,
      'a2a.protocol.version': '0.3',
      'gen_ai.agent.name': 'OpenOperator',
      'gen_ai.agent.version': '1.0.0',
      'server.address': '127.0.0.1',
      'server.port': portOf(p.sim.url),
      'gateway.campaign_id': c,
      'gateway.upstream.kind': 'mutation',
      'gateway.mutation.outcome': 'applied'
    })
    expect(attrs(client)['a2a.task.state']).toMatch(/^TASK_STATE_[A-Z_]+$/)
    // the remote's context id: the one tasks/get shows
    const polled = await frontRpc(p.gw.url, p.gw.tokens.controller, 'GetTask', { id: task.id }, V1)
    expect(polled.body.result?.contextId, polled.text).toMatch(/\S/)
    expect(attrs(client)['gen_ai.conversation.id']).toBe(polled.body.result.contextId)

    // the claim: the extension's method by its own name, on both sides
    const claimServer = await otlp.waitFor('the claim SERVER span', serverSpan((a) => a['gateway.request_id'] === claimId))
    expect(claimServer.name).toBe('campaign/claim_control')
    expect(attrs(claimServer)).toMatchObject({ 'a2a.method.name': 'campaign/claim_control', 'gateway.campaign_id': c, 'a2a.protocol.version': '1.0' })
    const claimClient = await otlp.waitFor('the claim CLIENT span', clientSpan((a) => a['gateway.request_id'] === claimId))
    expect(claimClient.name).toBe('campaign/claim_control')
    expect(descendsFrom(otlp.spans, claimClient, claimServer)).toBe(true)
    expect(attrs(claimClient)).toMatchObject({ 'a2a.method.name': 'campaign/claim_control', 'gateway.campaign_id': c, 'gateway.mutation.outcome': 'applied' })
  })

  it('GetTask and CancelTask asked in v0.3, sent to a v1.0 remote: the task, its state and its context on both sides', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { protocol: 'v1.0' }, env: otlp.otelEnv })
    tokens.push(p.gw.tokens.controller)
    const c = `camp-otel-${rid('c').slice(2)}`
    await frontRpc(p.gw.url, p.gw.tokens.controller, 'campaign/claim_control', { campaign_id: c, request_id: rid('claim'), ttl_seconds: 600 })
    const sent = await frontRpc(p.gw.url, p.gw.tokens.controller, 'message/send', {
      message: { kind: 'message', messageId: rid('submit'), role: 'user', parts: [{ kind: 'text', text: 'train it' }], metadata: { argus_supervisor: { campaign_id: c } } },
      configuration: { blocking: false }
    })
    const taskId = sent.body.result?.id
    expect(typeof taskId, sent.text).toBe('string')

    const polled = await frontRpc(p.gw.url, p.gw.tokens.controller, 'tasks/get', { id: taskId })
    const contextId = polled.body.result?.contextId
    expect(contextId, polled.text).toMatch(/\S/)
    const get = await otlp.waitFor('the GetTask SERVER span', serverSpan((a) => a['a2a.method.name'] === 'GetTask' && a['a2a.task.id'] === taskId))
    expect(get.name).toBe('GetTask')
    expect(attrs(get)).toMatchObject({ 'a2a.protocol.version': '0.3', 'gen_ai.conversation.id': contextId, 'a2a.task.state': `TASK_STATE_${String(polled.body.result.status.state).toUpperCase().replace('-', '_')}` })
    const getClient = await otlp.waitFor('the GetTask CLIENT span', (s) => s.kind === CLIENT && attrs(s)['a2a.method.name'] === 'GetTask' && descendsFrom(otlp.spans, s, get))
    expect(getClient.name).toBe('GetTask')
    expect(attrs(getClient)).toMatchObject({ 'a2a.task.id': taskId, 'a2a.protocol.version': '1.0', 'gen_ai.conversation.id': contextId, 'gen_ai.agent.name': 'OpenOperator' })
    expect(attrs(getClient)['a2a.task.state']).toMatch(/^TASK_STATE_[A-Z_]+$/)

    const cancelId = rid('cancel')
    const canceled = await frontRpc(p.gw.url, p.gw.tokens.controller, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: cancelId } } })
    expect(canceled.body.result?.status?.state, canceled.text).toBe('canceled')
    const cancel = await otlp.waitFor('the CancelTask SERVER span', serverSpan((a) => a['gateway.request_id'] === cancelId))
    expect(cancel.name).toBe('CancelTask')
    expect(attrs(cancel)).toMatchObject({ 'a2a.method.name': 'CancelTask', 'a2a.task.id': taskId, 'a2a.task.state': 'TASK_STATE_CANCELED', 'gateway.campaign_id': c })
    const cancelClient = await otlp.waitFor('the CancelTask CLIENT span', clientSpan((a) => a['a2a.method.name'] === 'CancelTask' && a['gateway.request_id'] === cancelId))
    expect(descendsFrom(otlp.spans, cancelClient, cancel)).toBe(true)
    expect(attrs(cancelClient)).toMatchObject({ 'a2a.task.id': taskId, 'a2a.task.state': 'TASK_STATE_CANCELED', 'a2a.protocol.version': '1.0', 'gateway.mutation.outcome': 'applied' })
  })

  it('an Argus read: the caller\'s message id on the SERVER span, the id the gateway issued on both', async ({ startControlPair }) => {
    const p = await startControlPair({ env: otlp.otelEnv })
    tokens.push(p.gw.tokens.reader)
    const mine = rid('read')
    const note = `planted-${rid('note')}`
    planted.push(note)
    const res = await frontRpc(p.gw.url, p.gw.tokens.reader, 'message/send', {
      message: { kind: 'message', role: 'user', messageId: mine, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: mine, note } }, parts: [{ kind: 'data', data: { params: {} } }] }
    })
    const issued = res.body.result?.messageId
    expect(typeof issued, res.text).toBe('string')
    expect(issued).not.toBe(mine)
    const server = await otlp.waitFor('the read\'s SERVER span', serverSpan((a) => a['a2a.message.id'] === mine))
    expect(attrs(server)).toMatchObject({ 'a2a.method.name': 'SendMessage', 'a2a.protocol.version': '0.3', 'gateway.request_id': issued })
    expect(attrs(server)['a2a.task.id']).toBeUndefined()
    const client = await otlp.waitFor('the read\'s CLIENT span', clientSpan((a) => a['gateway.request_id'] === issued))
    expect(descendsFrom(otlp.spans, client, server)).toBe(true)
    expect(attrs(client)).toMatchObject({ 'a2a.method.name': 'SendMessage', 'a2a.message.id': issued, 'gateway.upstream.operation': 'supervisor.health', 'gateway.upstream.kind': 'read' })
  })

  it('errors: error.type is the JSON-RPC code as text, on the SERVER span and on the CLIENT span the remote refused', async ({ startControlPair }) => {
    const p = await startControlPair({ env: otlp.otelEnv })
    tokens.push(p.gw.tokens.controller)
    const missing = `task-${rid('none').slice(5)}`
    const notFound = await frontRpc(p.gw.url, p.gw.tokens.controller, 'GetTask', { id: missing }, V1)
    expect(notFound.body.error?.code, notFound.text).toBe(-32001)
    const nf = await otlp.waitFor('the not-found span', serverSpan((a) => a['a2a.task.id'] === missing))
    expect(nf.name).toBe('GetTask')
    expect(attrs(nf)).toMatchObject({ 'error.type': '-32001', 'gateway.a2a.outcome': 'not_found' })
    expect(nf.status?.code).toBe(STATUS_ERROR)

    // the remote refuses the task read: its code on the CLIENT span, the door's on the SERVER span
    const c = `camp-otel-${rid('c').slice(2)}`
    await frontRpc(p.gw.url, p.gw.tokens.controller, 'campaign/claim_control', { campaign_id: c, request_id: rid('claim'), ttl_seconds: 600 })
    const sent = await frontRpc(p.gw.url, p.gw.tokens.controller, 'message/send', {
      message: { kind: 'message', messageId: rid('submit'), role: 'user', parts: [{ kind: 'text', text: 'train it' }], metadata: { argus_supervisor: { campaign_id: c } } },
      configuration: { blocking: false }
    })
    const taskId = sent.body.result?.id
    expect(typeof taskId, sent.text).toBe('string')
    p.sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'rpc-error', code: -32603, message: 'boom' }, 1)
    const failed = await frontRpc(p.gw.url, p.gw.tokens.controller, 'GetTask', { id: taskId }, V1)
    expect(failed.body.error?.code, failed.text).toBeDefined()
    const server = await otlp.waitFor('the failed GetTask span', serverSpan((a) => a['a2a.task.id'] === taskId && a['error.type'] !== undefined))
    expect(attrs(server)['error.type']).toBe(String(failed.body.error.code))
    expect(server.status?.code).toBe(STATUS_ERROR)
    const client = await otlp.waitFor('the refused CLIENT span', (s) => s.kind === CLIENT && attrs(s)['error.type'] !== undefined && descendsFrom(otlp.spans, s, server))
    expect(attrs(client)).toMatchObject({ 'a2a.method.name': 'GetTask', 'a2a.task.id': taskId, 'error.type': '-32603', 'gateway.upstream.outcome': 'rpc_error' })
    expect(client.status?.code).toBe(STATUS_ERROR)

    // what is no A2A request, or no method the door knows: `_OTHER`, never the caller's text
    const method = `planted-${rid('m')}`
    planted.push(method)
    const unknown = await frontRpc(p.gw.url, p.gw.tokens.controller, method, {}, V1)
    expect(unknown.body.error?.code).toBe(-32601)
    const bad = await call(`${p.gw.url}/a2a/`, { method: 'POST', token: p.gw.tokens.controller, rawBody: '{"jsonrpc":', headers: { 'content-type': 'application/json' } })
    expect(bad.body.error?.code).toBe(-32700)
    const notJson = await call(`${p.gw.url}/a2a/`, { method: 'POST', token: p.gw.tokens.controller, rawBody: '{}', headers: { 'content-type': 'text/plain' } })
    expect(notJson.body.error?.code).toBe(-32600)
    for (const code of ['-32601', '-32700', '-32600']) {
      const s = await otlp.waitFor(`the ${code} span`, serverSpan((a) => a['error.type'] === code))
      expect(s.name).toBe('_OTHER')
      expect(attrs(s)['a2a.method.name']).toBe('_OTHER')
    }
  })

  it('no attribute under its old name, no token, upstream secret or planted param in anything exported', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(otlp.spans.length).toBeGreaterThan(0)
    const names = new Set(otlp.spans.flatMap((s) => (s.attributes ?? []).map((a) => a.key)))
    expect(OLD_NAMES.filter((n) => names.has(n))).toEqual([])
    const all = otlp.bodies.join('\n')
    for (const secret of [...tokens, ...secrets, ...planted]) expect(all).not.toContain(secret)
  })
})
