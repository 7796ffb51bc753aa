// Tracing end to end (docs/design.md#tracing): the gateway with OTEL_EXPORTER_OTLP_ENDPOINT set
// exports to an in-process OTLP/HTTP receiver on loopback (JSON protocol, test/helpers/otlp.ts).
// A server span per request, a client span per upstream call as its child in OpenTelemetry's A2A
// conventions, `traceparent` at the simulator naming that client span, the caller's own trace
// continued, `traceId` on the log lines — and no token, upstream secret, query value or request
// param anywhere in what was exported. The A2A front door's spans: a2a-tracing.test.ts.
import { randomBytes } from 'node:crypto'
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
import { attrs, CLIENT, SERVER, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from '../helpers/otlp.js'

let otlp: OtlpReceiver
let sim: Simulator
let gw: RunningGateway
const logs: string[] = []
const tok = (): string => `tok-${randomBytes(18).toString('base64url')}`
const tokens = { reader: tok(), controller: tok() }
const PLANTED_PARAM = `planted-param-${randomBytes(8).toString('hex')}`
const PLANTED_QUERY = `planted-query-${randomBytes(8).toString('hex')}`

const waitFor = async (what: string, find: (s: OtlpSpan) => boolean): Promise<OtlpSpan> => await otlp.waitFor(what, find)
const serverSpan = (route: string, status: number) => (s: OtlpSpan): boolean =>
  s.kind === SERVER && attrs(s)['http.route'] === route && attrs(s)['http.response.status_code'] === status
const childOf = (parent: OtlpSpan, op: string) => (s: OtlpSpan): boolean =>
  s.kind === CLIENT && s.parentSpanId === parent.spanId && attrs(s)['gateway.upstream.operation'] === op

beforeAll(async () => {
  otlp = await startOtlpReceiver()
  // the SDK reads the OpenTelemetry variables from the process environment when it starts
  Object.assign(process.env, otlp.otelEnv, { OTEL_SERVICE_NAME: 'gateway-under-test' })

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
  await otlp?.close()
})

describe('tracing with an OTLP endpoint set', () => {
  it('a read: the server span, its upstream client span in the A2A conventions, traceparent at the remote', async () => {
    const res = await call(`${gw.url}/v1/supervisor/health`, { token: tokens.reader })
    expect(res.status).toBe(200)
    const server = await waitFor('server span', serverSpan('/v1/supervisor/health', 200))
    expect(server.name).toBe('GET /v1/supervisor/health')
    expect(attrs(server)).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/v1/supervisor/health', 'gateway.caller': 'reader' })

    const client = await waitFor('client span', childOf(server, 'supervisor.health'))
    expect(client.traceId).toBe(server.traceId)
    expect(client.name).toBe('SendMessage')
    expect(attrs(client)).toMatchObject({
      'a2a.method.name': 'SendMessage',
      'a2a.message.id': res.body.requestId,
      'a2a.protocol.version': '0.3',
      'gen_ai.agent.name': 'OpenOperator',
      'gateway.request_id': res.body.requestId,
      'gateway.upstream.kind': 'read',
      'gateway.upstream.outcome': 'ok',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(sim.url).port)
    })

    // the remote saw the client span as its parent
    const sent = sim.received.filter((r) => r.headers.traceparent !== undefined)
    expect(sent.map((r) => r.headers.traceparent)).toContain(`00-${server.traceId}-${client.spanId}-01`)
  })

  it('a task read carries the task id; a caller\'s traceparent is continued', async () => {
    const callerTrace = randomBytes(16).toString('hex')
    const callerSpan = randomBytes(8).toString('hex')
    const res = await call(`${gw.url}/v1/tasks/task-demo-1`, { token: tokens.reader, headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` } })
    expect(res.status).toBe(200)
    const server = await waitFor('server span', serverSpan('/v1/tasks/:taskId', 200))
    expect(server.traceId).toBe(callerTrace)
    expect(server.parentSpanId).toBe(callerSpan)
    const client = await waitFor('client span', childOf(server, 'tasks.get'))
    expect(client.name).toBe('GetTask')
    expect(attrs(client)).toMatchObject({ 'a2a.task.id': 'task-demo-1', 'gen_ai.conversation.id': 'ctx-demo-1' })
    expect(attrs(client)['a2a.task.state']).toMatch(/^TASK_STATE_/)
    expect(attrs(client)['gateway.request_id']).toBeUndefined()
  })

  it('a mutation: request id and outcome class on the client span, traceId on its log line', async () => {
    const c = `camp-${randomBytes(4).toString('hex')}`
    const claimId = `claim-${randomBytes(6).toString('hex')}`
    const claimed = await call(`${gw.url}/v1/campaigns/${c}/control/claim`, { method: 'POST', token: tokens.controller, body: { requestId: claimId, ttlSeconds: 300 } })
    expect(claimed.status, claimed.text).toBe(200)
    const ivId = `iv-${randomBytes(6).toString('hex')}`
    const iv = await call(`${gw.url}/v1/campaigns/${c}/interventions`, { method: 'POST', token: tokens.controller, body: { requestId: ivId, intervention: { note: PLANTED_PARAM } } })
    expect(iv.status, iv.text).toBe(200)

    const server = await waitFor('server span', (s) => s.kind === SERVER && attrs(s)['http.route'] === '/v1/campaigns/:campaignId/interventions')
    expect(attrs(server)).toMatchObject({ 'gateway.caller': 'controller', 'http.response.status_code': 200, 'http.request.method': 'POST' })
    const client = await waitFor('client span', childOf(server, 'intervene'))
    expect(client.name).toBe('campaign/intervene')
    expect(attrs(client)).toMatchObject({ 'a2a.method.name': 'campaign/intervene', 'gateway.request_id': ivId, 'gateway.campaign_id': c, 'gateway.mutation.outcome': 'applied', 'gateway.upstream.kind': 'mutation' })
    const claimSpan = await waitFor('claim span', (s) => attrs(s)['gateway.request_id'] === claimId)
    expect(attrs(claimSpan)).toMatchObject({ 'a2a.method.name': 'campaign/claim_control', 'gateway.upstream.operation': 'claim_control', 'gateway.mutation.outcome': 'applied' })

    const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'mutation' && l.requestId === ivId)
    expect(line?.traceId).toBe(server.traceId)
  })

  it('a refused request: the path without its query, the status without the error\'s message', async () => {
    const res = await call(`${gw.url}/v1/supervisor/health?token=${PLANTED_QUERY}`, { token: tokens.reader })
    expect(res.status).toBe(400)
    const server = await waitFor('server span', serverSpan('/v1/supervisor/health', 400))
    expect(attrs(server)['url.path']).toBe('/v1/supervisor/health')
    expect(server.status?.message ?? '').not.toMatch(/querystring|token/i)
  })

  it('no token, upstream secret, query value or request param in anything exported', async () => {
    await gw.app.close().catch(() => {})
    expect(otlp.bodies.length).toBeGreaterThan(0)
    const all = otlp.bodies.join('\n')
    for (const secret of [tokens.reader, tokens.controller, sim.secret, PLANTED_PARAM, PLANTED_QUERY]) expect(all).not.toContain(secret)
    // the exported resource follows OTEL_SERVICE_NAME
    expect(all).toContain('gateway-under-test')
  })
})
