// The agent card of the v1.0 and dual protocols as an @a2a-js/sdk 1.x server serves it, and
// card caching (A2A v1.0 §8.6): ETag, Cache-Control, 304, Vary, the answer counts.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { CONTROL_URN } from '../../src/simulator/index.js'
import { call, useSimulator } from './helpers.js'
import { SEED_OPERATIONS } from './control-helpers.js'
import { CARD_PATH, V1, card } from './v1-helpers.js'

const start = useSimulator()
const AGENT_JSON = '/a2a/.well-known/agent.json'
const SKILLS = ['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list']
const etagOf = (body: string): string => `W/"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`

describe('v1.0 card', () => {
  it('has supportedInterfaces instead of url, preferredTransport and protocolVersion, and the SDK\'s caching headers', async () => {
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
    expect(answer.headers['cache-control']).toBe('public, max-age=3600')
    expect(answer.headers.etag).toBe(etagOf(answer.text))
    expect(answer.headers.vary).toBeUndefined()
    // the v0.2 path is gone on a v1.0 server, whatever the profile
    expect((await call(s, 'GET', AGENT_JSON)).status).toBe(404)
    expect(s.cardRequests()).toEqual({ [CARD_PATH]: { 200: 1 }, [AGENT_JSON]: { 404: 1 } })
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
      expect(answer.headers['cache-control']).toBe('public, max-age=3600')
      expect(answer.headers.etag).toBe(etagOf(answer.text))
    }
    expect(current.headers.etag).not.toBe(legacy.headers.etag)
    expect((await call(s, 'GET', AGENT_JSON)).status).toBe(404)
  })
})

describe('card caching', () => {
  it('answers 304 with no body for the current ETag, per version, and counts answers by status per path', async () => {
    const s = await start({ protocol: 'dual' })
    const legacy = await card(s)
    const current = await card(s, V1)
    const again = await card(s, { 'If-None-Match': legacy.headers.etag as string })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.etag).toBe(legacy.headers.etag)
    expect(again.headers['cache-control']).toBe('public, max-age=3600')
    expect(again.headers.vary).toBe('A2A-Version')
    // a list, a strong form of the same tag, and *
    expect((await card(s, { ...V1, 'If-None-Match': `"nope", ${current.headers.etag as string}` })).status).toBe(304)
    expect((await card(s, { ...V1, 'If-None-Match': (current.headers.etag as string).replace(/^W\//, '') })).status).toBe(304)
    expect((await card(s, { 'If-None-Match': '*' })).status).toBe(304)
    // the other version's tag is not this one's
    expect((await card(s, { ...V1, 'If-None-Match': legacy.headers.etag as string })).status).toBe(200)
    expect(s.cardRequests()).toEqual({ [CARD_PATH]: { 200: 3, 304: 4 } })
  })

  it('a changed card gets a new ETag, so the old one no longer matches', async () => {
    const s = await start({ protocol: 'v1.0' })
    const first = await card(s)
    s.setCard((c) => ({ ...c, description: 'changed' }))
    const changed = await card(s, { 'If-None-Match': first.headers.etag as string })
    expect(changed.status).toBe(200)
    expect(changed.headers.etag).not.toBe(first.headers.etag)
    expect(changed.headers.etag).toBe(etagOf(changed.text))
  })

  it('is off by default on v0.3 (today), and on with cardCache; maxAgeSeconds 0 is no-cache, etag false sends none', async () => {
    const today = await start()
    const plain = await card(today)
    expect(plain.headers.etag).toBeUndefined()
    expect(plain.headers['cache-control']).toBeUndefined()
    expect((await card(today, { 'If-None-Match': '*' })).status).toBe(200)
    await today.close()

    const cached = await start({ cardCache: { maxAgeSeconds: 60 } })
    for (const path of [CARD_PATH, AGENT_JSON]) {
      const answer = await call(cached, 'GET', path)
      expect(answer.headers['cache-control']).toBe('public, max-age=60')
      expect((await call(cached, 'GET', path, { headers: { 'If-None-Match': answer.headers.etag as string } })).status).toBe(304)
    }
    expect(cached.cardRequests()).toEqual({ [CARD_PATH]: { 200: 1, 304: 1 }, [AGENT_JSON]: { 200: 1, 304: 1 } })
    cached.reset()
    expect(cached.cardRequests()).toEqual({})
    await cached.close()

    const noStore = await start({ protocol: 'v1.0', cardCache: { maxAgeSeconds: 0, etag: false } })
    const answer = await card(noStore, { 'If-None-Match': '*' })
    expect(answer.status).toBe(200)
    expect(answer.headers['cache-control']).toBe('no-cache')
    expect(answer.headers.etag).toBeUndefined()
  })

  it('refuses a bad maxAgeSeconds and an unknown protocol', async () => {
    await expect(start({ cardCache: { maxAgeSeconds: -1 } })).rejects.toThrow(/maxAgeSeconds/)
    // @ts-expect-error -- not a protocol
    await expect(start({ protocol: 'v2' })).rejects.toThrow(/protocol/)
  })
})
