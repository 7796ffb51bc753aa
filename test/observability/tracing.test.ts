// Tracing end to end (docs/design.md#tracing): the gateway with OTEL_EXPORTER_OTLP_ENDPOINT set
// exports to an in-process OTLP/HTTP receiver on loopback (JSON protocol). A server span per
// request, a client span per upstream call as its child with the A2A attributes, `traceparent`
// at the simulator naming that client span, the caller's own trace continued, `traceId` on the
// log lines — and no token, upstream secret, query value or request param anywhere in what
// was exported.
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { Writable } from 'node:stream'
import type pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/index.js'
import { createLogger } from '../../src/core/logger.js'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startGatewayServer, type RunningGateway } from '../../src/server.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { traceIdMixin } from '../../src/tracing/log.js'
import { call } from '../helpers/http.js'

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: Array<{ key: string; value: OtlpValue }>
  status?: { code?: number; message?: string }
}
const SERVER = 2
const CLIENT = 3

const bodies: string[] = []
const spans: OtlpSpan[] = []
let receiver: Server
let sim: Simulator
let gw: RunningGateway
const logs: string[] = []
const tok = (): string => `tok-${randomBytes(18).toString('base64url')}`
const tokens = { reader: tok(), controller: tok() }
const PLANTED_PARAM = `planted-param-${randomBytes(8).toString('hex')}`
const PLANTED_QUERY = `planted-query-${randomBytes(8).toString('hex')}`

function attrs (s: OtlpSpan): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of s.attributes ?? []) out[a.key] = a.value.stringValue ?? (a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.boolValue ?? a.value.doubleValue)
  return out
}

async function waitFor<T> (what: string, find: () => T | undefined, ms = 5000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = find()
    if (v !== undefined) return v
    if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms; spans: ${spans.map((s) => s.name).join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const serverSpan = (route: string, status: number): OtlpSpan | undefined =>
  spans.find((s) => s.kind === SERVER && attrs(s)['http.route'] === route && attrs(s)['http.response.status_code'] === status)
const childOf = (parent: OtlpSpan, op: string): OtlpSpan | undefined =>
  spans.find((s) => s.kind === CLIENT && s.parentSpanId === parent.spanId && attrs(s)['a2a.method'] === op)

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(text)
        const doc = JSON.parse(text) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> }
        for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const { port } = receiver.address() as { port: number }
  // the SDK reads the OpenTelemetry variables from the process environment when it starts
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: 'gateway-under-test'
  })

  sim = await startSimulator({ profile: 'campaign-control' })
  const callers = [
    { name: 'reader', tokenSha256: sha256Hex(tokens.reader), scopes: ['read'] },
    { name: 'controller', tokenSha256: sha256Hex(tokens.controller), scopes: ['read', 'control'], controllerId: 'ctl-1' }
  ]
  const config = loadConfig({
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: sim.secret,
    GATEWAY_CALLERS: JSON.stringify(callers),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT
  })
  expect(config.tracing).toBe(true)
  const sink = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  // no secrets handed to the scrubber: a leak must be absent at the source
  const logger = createLogger({ level: 'trace', secrets: new Set(), destination: sink as unknown as pino.DestinationStream, mixin: traceIdMixin })
  gw = await startGatewayServer(config, { logger })
})

afterAll(async () => {
  await gw?.close()
  await sim?.close()
  await new Promise((resolve) => receiver?.close(resolve))
})

describe('tracing with an OTLP endpoint set', () => {
  it('a read: the server span, its upstream client span with the A2A attributes, traceparent at the remote', async () => {
    const res = await call(`${gw.url}/v1/supervisor/health`, { token: tokens.reader })
    expect(res.status).toBe(200)
    const server = await waitFor('server span', () => serverSpan('/v1/supervisor/health', 200))
    expect(server.name).toBe('GET /v1/supervisor/health')
    expect(attrs(server)).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/v1/supervisor/health', 'gateway.caller': 'reader' })

    const client = await waitFor('client span', () => childOf(server, 'supervisor.health'))
    expect(client.traceId).toBe(server.traceId)
    expect(client.name).toBe('A2A supervisor.health')
    expect(attrs(client)).toMatchObject({ 'a2a.request_id': res.body.requestId, 'rpc.method': 'message/send', 'gateway.upstream.outcome': 'ok', 'http.response.status_code': 200 })

    // the remote saw the client span as its parent
    const sent = sim.received.filter((r) => r.headers.traceparent !== undefined)
    expect(sent.map((r) => r.headers.traceparent)).toContain(`00-${server.traceId}-${client.spanId}-01`)
  })

  it('a task read carries the task id; a caller\'s traceparent is continued', async () => {
    const callerTrace = randomBytes(16).toString('hex')
    const callerSpan = randomBytes(8).toString('hex')
    const res = await call(`${gw.url}/v1/tasks/task-demo-1`, { token: tokens.reader, headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` } })
    expect(res.status).toBe(200)
    const server = await waitFor('server span', () => serverSpan('/v1/tasks/:taskId', 200))
    expect(server.traceId).toBe(callerTrace)
    expect(server.parentSpanId).toBe(callerSpan)
    const client = await waitFor('client span', () => childOf(server, 'tasks.get'))
    expect(attrs(client)['a2a.task_id']).toBe('task-demo-1')
    expect(attrs(client)['a2a.request_id']).toBeUndefined()
  })

  it('a mutation: request id and outcome class on the client span, traceId on its log line', async () => {
    const c = `camp-${randomBytes(4).toString('hex')}`
    const claimId = `claim-${randomBytes(6).toString('hex')}`
    const claimed = await call(`${gw.url}/v1/campaigns/${c}/control/claim`, { method: 'POST', token: tokens.controller, body: { requestId: claimId, ttlSeconds: 300 } })
    expect(claimed.status, claimed.text).toBe(200)
    const ivId = `iv-${randomBytes(6).toString('hex')}`
    const iv = await call(`${gw.url}/v1/campaigns/${c}/interventions`, { method: 'POST', token: tokens.controller, body: { requestId: ivId, intervention: { note: PLANTED_PARAM } } })
    expect(iv.status, iv.text).toBe(200)

    const server = await waitFor('server span', () => spans.find((s) => s.kind === SERVER && attrs(s)['http.route'] === '/v1/campaigns/:campaignId/interventions'))
    expect(attrs(server)).toMatchObject({ 'gateway.caller': 'controller', 'http.response.status_code': 200, 'http.request.method': 'POST' })
    const client = await waitFor('client span', () => childOf(server, 'intervene'))
    expect(attrs(client)).toMatchObject({ 'a2a.request_id': ivId, 'a2a.outcome': 'applied', 'a2a.kind': 'mutation' })
    const claimSpan = await waitFor('claim span', () => spans.find((s) => attrs(s)['a2a.request_id'] === claimId))
    expect(attrs(claimSpan)).toMatchObject({ 'a2a.method': 'claim_control', 'a2a.outcome': 'applied' })

    const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'mutation' && l.requestId === ivId)
    expect(line?.traceId).toBe(server.traceId)
  })

  it('a refused request: the path without its query, the status without the error\'s message', async () => {
    const res = await call(`${gw.url}/v1/supervisor/health?token=${PLANTED_QUERY}`, { token: tokens.reader })
    expect(res.status).toBe(400)
    const server = await waitFor('server span', () => serverSpan('/v1/supervisor/health', 400))
    expect(attrs(server)['url.path']).toBe('/v1/supervisor/health')
    expect(server.status?.message ?? '').not.toMatch(/querystring|token/i)
  })

  it('the A2A front door: rpc.method and the outcome on the server span, the upstream call its child; a refusal\'s JSON-RPC code', async () => {
    const id = `read-${randomBytes(6).toString('hex')}`
    const URN = 'urn:openoperator:argus-supervisor:v1'
    const send = {
      configuration: { blocking: true },
      message: { role: 'user', kind: 'message', messageId: id, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.status', requestId: id, note: PLANTED_PARAM } }, parts: [{ kind: 'data', data: { params: {} } }] }
    }
    const res = await call(`${gw.url}/a2a/`, { method: 'POST', token: tokens.reader, body: { jsonrpc: '2.0', id: PLANTED_PARAM, method: 'message/send', params: send } })
    expect(res.body.result.kind, res.text).toBe('message')
    const server = await waitFor('server span', () => spans.find((s) => s.kind === SERVER && attrs(s)['http.route'] === '/a2a/' && attrs(s)['gateway.a2a.outcome'] === 'ok'))
    expect(server.name).toBe('POST /a2a/')
    expect(attrs(server)).toMatchObject({ 'rpc.system': 'jsonrpc', 'rpc.method': 'message/send', 'gateway.caller': 'reader', 'http.response.status_code': 200 })
    expect(attrs(server)['rpc.jsonrpc.error_code']).toBeUndefined()
    const client = await waitFor('client span', () => childOf(server, 'supervisor.status'))
    expect(attrs(client)).toMatchObject({ 'rpc.method': 'message/send', 'gateway.upstream.outcome': 'ok' })

    const refused = await call(`${gw.url}/a2a/`, { method: 'POST', token: tokens.reader, body: { jsonrpc: '2.0', id: 1, method: 'tasks/pushNotificationConfig/set', params: {} } })
    expect(refused.body.error.code).toBe(-32003)
    const refusal = await waitFor('refused span', () => spans.find((s) => s.kind === SERVER && attrs(s)['http.route'] === '/a2a/' && attrs(s)['rpc.jsonrpc.error_code'] === -32003))
    expect(attrs(refusal)).toMatchObject({ 'rpc.method': 'tasks/pushNotificationConfig/set', 'gateway.a2a.outcome': '-32003' })
    await call(`${gw.url}/a2a/`, { method: 'POST', token: tokens.reader, body: { jsonrpc: '2.0', id: 2, method: PLANTED_QUERY, params: {} } })
    const unknown = await waitFor('unknown span', () => spans.find((s) => s.kind === SERVER && attrs(s)['http.route'] === '/a2a/' && attrs(s)['rpc.method'] === 'unknown'))
    expect(attrs(unknown)['rpc.jsonrpc.error_code']).toBe(-32601)
  })

  it('no token, upstream secret, query value or request param in anything exported', async () => {
    await gw.app.close().catch(() => {})
    await waitFor('export', () => bodies.length > 0 ? true : undefined)
    const all = bodies.join('\n')
    for (const secret of [tokens.reader, tokens.controller, sim.secret, PLANTED_PARAM, PLANTED_QUERY]) expect(all).not.toContain(secret)
    // the exported resource follows OTEL_SERVICE_NAME
    expect(all).toContain('gateway-under-test')
  })
})
