// The agent card of the v1.0 and dual protocols as an @a2a-js/sdk 1.x server serves it.
import { describe, expect, it } from 'vitest'
import { CONTROL_URN } from '../../src/simulator/index.js'
import { call, useSimulator } from './helpers.js'
import { SEED_OPERATIONS } from './control-helpers.js'
import { V1, card } from './v1-helpers.js'

const start = useSimulator()
const AGENT_JSON = '/a2a/.well-known/agent.json'
const SKILLS = ['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list']

describe('v1.0 card', () => {
  it('has supportedInterfaces instead of url, preferredTransport and protocolVersion', async () => {
    const s = await start({ protocol: 'v1.0' })
    const answer = await card(s)
    expect(answer.status).toBe(200)
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    const c = answer.json
    expect(c).not.toHaveProperty('url')
    expect(c).not.toHaveProperty('preferredTransport')
    expect(c).not.toHaveProperty('protocolVersion')
    expect(c.supportedInterfaces).toEqual([{ url: `${s.url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }])
    expect(c).toMatchObject({ name: 'OpenOperator', version: expect.any(String), description: expect.any(String), capabilities: { streaming: false }, defaultInputModes: ['application/json'], defaultOutputModes: ['application/json'] })
    expect(c.skills.map((sk: { id: string }) => sk.id)).toEqual(SKILLS)
    expect(JSON.stringify(c)).not.toContain('"kind"')
    expect(answer.headers.vary).toBeUndefined()
    // the v0.2 path is gone on a v1.0 server, whatever the profile
    expect((await call(s, 'GET', AGENT_JSON)).status).toBe(404)
  })

  it('answers the v1.0 card whatever A2A-Version asks, and serves agent-card.json on the fasta2a profile too', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'fasta2a' })
    for (const headers of [{}, { 'A2A-Version': '0.3' }, V1]) expect((await card(s, headers)).json.supportedInterfaces).toHaveLength(1)
  })

  it('carries the campaign-control extension as today, advertising CancelTask for cancel (still overridable)', async () => {
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control' })
    expect((await card(s)).json.capabilities).toEqual({
      streaming: false,
      extensions: [{ uri: CONTROL_URN, params: { lease_epoch_enforced: true, policy_enforced: true, project_selection: true, operations: { ...SEED_OPERATIONS, cancel: 'CancelTask' } } }]
    })
    await s.close()
    const renamed = await start({ protocol: 'v1.0', campaignControl: { operations: { cancel: 'campaign/cancel' } } })
    expect((await card(renamed)).json.capabilities.extensions[0].params.operations.cancel).toBe('campaign/cancel')
  })

  it('declares security in the v1.0 shape when the deployment has a secret; Argus off leaves one skill', async () => {
    const s = await start({ protocol: 'v1.0', secret: 's3cret', argusEnabled: false })
    const c = (await card(s)).json
    expect(c.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } }, apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-KEY' } } })
    expect(c.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }])
    expect(c).not.toHaveProperty('security')
    expect(c.skills.map((sk: { id: string }) => sk.id)).toEqual(['general_assistance'])
  })

  it('applies the card transform to the v1.0 card', async () => {
    const s = await start({ protocol: 'v1.0', card: (c) => ({ ...c, name: 'Transformed' }) })
    expect((await card(s)).json.name).toBe('Transformed')
  })
})

describe('dual card', () => {
  it('without A2A-Version (or with a 0.x) serves the v0.3 card listing both interfaces; with 1.0 the v1.0 card', async () => {
    const s = await start({ protocol: 'dual', profile: 'campaign-control' })
    const both = [
      { url: `${s.url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${s.url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }
    ]
    const legacy = await card(s)
    expect(legacy.json).toMatchObject({ url: `${s.url}/a2a/`, preferredTransport: 'JSONRPC', protocolVersion: '0.3', supportedInterfaces: both })
    expect(legacy.json.skills.map((sk: { id: string }) => sk.id)).toEqual(SKILLS)
    expect(legacy.json.capabilities.extensions[0].params.operations.cancel).toBe('CancelTask')
    expect((await card(s, { 'A2A-Version': '0.3' })).json.protocolVersion).toBe('0.3')
    expect((await card(s, { 'A2A-Version': '0.5' })).json.protocolVersion).toBe('0.3')

    const current = await card(s, V1)
    expect(current.json).not.toHaveProperty('url')
    expect(current.json.supportedInterfaces).toEqual(both)
    for (const answer of [legacy, current]) {
      expect(answer.headers.vary).toBe('A2A-Version')
    }
    expect((await call(s, 'GET', AGENT_JSON)).status).toBe(404)
  })
})
