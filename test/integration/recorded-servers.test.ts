// The gateway against the recorded answers of real A2A servers (shared/fixtures): the a2a-js
// SDK 1.3.0 and FastA2A 0.5. The simulator is our reading; these are the servers' own words.
import { afterEach, describe, expect, it } from 'vitest'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { recorded, startReplay, type Replay, type ReplayScript } from '../helpers/replay.js'

const SDK = 'a2a-js-sdk-1.3.0/'
const FAST = 'fasta2a-0.5/'
let up: Replay | undefined
let gw: TestGateway | undefined
afterEach(async () => { await gw?.close(); await up?.close(); gw = undefined; up = undefined })

// The recorded card is a dual server's (v1.0 with v0.3 compatibility, answering without an
// A2A-Version header): it lists a v1.0 interface, which the gateway now prefers. The recorded
// answers are v0.3's, so the card is served as a v0.3-only server would serve it; the v1.0 side
// of the same SDK is tested live (test/interop/a2a-js-sdk.test.ts).
const v03Only = (card: Record<string, unknown>): Record<string, unknown> => {
  const { supportedInterfaces: _v1, ...rest } = card
  return rest
}

async function setup (script: ReplayScript): Promise<TestGateway> {
  up = await startReplay({ card: v03Only, ...script })
  gw = await startGateway({ upstreamUrl: up.url, env: { SPYNEL_AGENT_ZERO_API_KEY: 'replay-secret-1234' } })
  return gw
}
const sdkCards = { '/.well-known/agent-card.json': `${SDK}agent-card.json`, '/.well-known/agent.json': 404 }
// FastA2A serves only agent.json; its card here is the SDK's (same A2A 0.3 shape, Argus skills)
const fastCards = { '/.well-known/agent-card.json': 404, '/.well-known/agent.json': `${SDK}agent-card.json` }
const get = async (g: TestGateway, path: string) => await call(`${g.url}${path}`, { token: g.tokens.reader })

describe('a2a-js SDK 1.3.0', () => {
  it('its recorded (dual) card, as served, chooses A2A 1.0 over 0.3', async () => {
    const g = await setup({ cards: sdkCards, rpc: {}, card: (c) => c })
    const u = (await get(g, '/v1/upstream')).body
    expect(u.protocol.version).toBe('1.0')
    expect(u.protocol.interfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).toEqual(['1.0', '0.3'])
    // v0.3-only, the same card is spoken as 0.3
    await gw!.close(); await up!.close()
    const g2 = await setup({ cards: sdkCards, rpc: {} })
    expect((await get(g2, '/v1/upstream')).body.protocol).toMatchObject({ version: '0.3', interfaces: [] })
  })

  it('reads the Argus payload from a completed task, and flags the card url naming another origin', async () => {
    const g = await setup({ cards: sdkCards, rpc: { 'message/send': [`${SDK}response-message-send-argus-health.json`] } })
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(200)
    const fixture = JSON.parse(recorded(`${SDK}response-message-send-argus-health.json`))
    expect(res.body.result).toEqual(fixture.result.artifacts[0].parts[0].data)
    const u = (await get(g, '/v1/upstream')).body
    expect(u.cardUrlMismatch).toBe(true)
    expect(up!.calls).toHaveLength(1)
  })

  it('projects a task that has no history key', async () => {
    const g = await setup({ cards: sdkCards, rpc: { 'tasks/get': [`${SDK}response-tasks-get-historyLength-0.json`] } })
    const fixture = JSON.parse(recorded(`${SDK}response-tasks-get-historyLength-0.json`)).result
    const res = await get(g, `/v1/tasks/${fixture.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ taskId: fixture.id, contextId: fixture.contextId, state: 'completed', outcomeScope: 'attempt', artifactsTruncated: false })
    expect(res.body.supervisor).toEqual({ revision: 7, stage: 'train', runId: 'run-sdk', attemptId: 'att-1', sourceSha: 'abc123', evidenceRevision: 3, evidenceRef: 'ev/1', blocked: false })
    expect(res.body.artifacts).toEqual([{ artifactId: 'a-1', name: 'result', parts: fixture.artifacts[0].parts }])
    expect(res.text).not.toContain('loss')
  })

  it('maps its error answers: -32001 → 404, -32601 → 503, -32602 → 502, -32700 with a null id → 502', async () => {
    const g = await setup({
      cards: sdkCards,
      rpc: {
        'tasks/get': [`${SDK}response-task-not-found.json`, `${SDK}response-parse-error.json`],
        'message/send': [`${SDK}response-invalid-params.json`, `${SDK}response-method-not-found.json`]
      }
    })
    expect((await get(g, '/v1/tasks/does-not-exist')).body.error.code).toBe('not_found')
    expect((await get(g, '/v1/tasks/x-1')).body.error.code).toBe('upstream_invalid_response')
    const invalid = await get(g, '/v1/supervisor/health')
    expect(invalid.status).toBe(502)
    expect(invalid.body.error.code).toBe('upstream_rejected')
    expect(invalid.text).not.toContain('must be an object')
    const missing = await get(g, '/v1/supervisor/status')
    expect(missing.status).toBe(503)
    expect(missing.body.error.code).toBe('capability_unavailable')
    expect((await get(g, '/v1/upstream')).body.capabilities['argus.supervisor.status'].state).toBe('unavailable')
  })
})

describe('FastA2A 0.5', () => {
  it('falls back to agent.json, polls the submitted task and reads the completed artifact', async () => {
    const g = await setup({
      cards: fastCards,
      rpc: { 'message/send': [`${FAST}response-message-send-submitted.json`], 'tasks/get': [`${FAST}response-tasks-get-completed.json`] }
    })
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(200)
    expect(res.body.result).toEqual({ status: 'ok' })
    expect(up!.calls.map((c) => c.method)).toEqual(['message/send', 'tasks/get'])
    expect(up!.calls[1]!.params).toEqual({ id: '6f1c2c3e-0000-4000-8000-000000000001', historyLength: 0 })
    // the request FastA2A accepted is the one the gateway sent (its parsed form, minus the id)
    const parsed = JSON.parse(recorded(`${FAST}request-argus-health.as-parsed.json`))
    const sent = up!.calls[0]!.params as { message: { messageId: string; metadata: Record<string, { requestId: string }> } }
    const rid = sent.message.messageId
    parsed.params.message.messageId = rid
    parsed.params.message.metadata['urn:openoperator:argus-supervisor:v1'].requestId = rid
    expect(sent).toEqual(parsed.params)
  })

  it('projects its completed task, full history dropped', async () => {
    const g = await setup({ cards: fastCards, rpc: { 'tasks/get': [`${FAST}response-tasks-get-completed.json`] } })
    const res = await get(g, '/v1/tasks/6f1c2c3e-0000-4000-8000-000000000001')
    expect(res.status).toBe(200)
    expect(res.body.supervisor.sourceSha).toBe('0123456789abcdef0123456789abcdef01234567')
    expect(res.text).not.toContain('history')
  })

  it('-32001 is 404; its plain-text 500 for an unknown method is upstream_unavailable', async () => {
    const g = await setup({ cards: fastCards, rpc: { 'tasks/get': [`${FAST}response-task-not-found.json`], 'message/send': [`${FAST}response-unknown-method.http`] } })
    expect((await get(g, '/v1/tasks/nope')).status).toBe(404)
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(503)
    expect(res.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true })
  })
})
