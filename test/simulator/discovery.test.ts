import { describe, expect, it } from 'vitest'
import { call, fixture, fixtureJson, keys, useSimulator } from './helpers.js'

const start = useSimulator()

describe('discovery routes', () => {
  it('serves health with a 40-hex source sha, and the docs', async () => {
    const s = await start({ sourceSha: 'ab'.repeat(20) })
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await call(s, 'GET', '/health')
    expect(health.json).toEqual({ status: 'ok', source_sha: 'ab'.repeat(20) })
    expect((await call(s, 'GET', '/docs')).headers['content-type']).toMatch(/^text\/html/)
    expect((await call(s, 'GET', '/a2a/docs')).headers['content-type']).toMatch(/^text\/html/)
    const docs = await call(s, 'GET', '/docs/a2a.json')
    expect(docs.json.endpoint).toBe('/a2a/')
    expect(docs.json.methods).toEqual(['message/send', 'tasks/get', 'tasks/cancel'])
    expect(docs.json.extensions[0].uri).toBe('urn:openoperator:argus-supervisor:v1')
  })

  it('defaults to a fixed 40-hex source sha', async () => {
    const s = await start()
    expect((await call(s, 'GET', '/health')).json.source_sha).toMatch(/^[0-9a-f]{40}$/)
  })

  it('serves a v0.3 card shaped like the a2a-js fixture, on both paths for openoperator', async () => {
    const s = await start()
    const real = fixtureJson('a2a-js-sdk-1.3.0/agent-card.json')
    for (const path of ['/a2a/.well-known/agent-card.json', '/a2a/.well-known/agent.json']) {
      const card = (await call(s, 'GET', path)).json
      for (const key of ['name', 'description', 'version', 'url', 'protocolVersion', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills']) {
        expect(card).toHaveProperty(key)
        expect(typeof card[key]).toBe(typeof real[key])
      }
      expect(card.url).toBe(`${s.url}/a2a/`)
      expect(card.protocolVersion).toBe('0.3')
      expect(card.capabilities).toEqual({ streaming: false, pushNotifications: false })
      expect(keys(card.skills[0])).toEqual(keys(real.skills[0]))
      expect(card.skills.map((sk: { id: string }) => sk.id)).toEqual(['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'])
      // Names are not ids: a client keying on names would break.
      for (const skill of card.skills) expect(skill.name).not.toBe(skill.id)
      expect(JSON.stringify(card)).not.toContain('urn:openoperator:campaign-control:v1')
    }
  })

  it('advertises only general_assistance when Argus is disabled', async () => {
    const s = await start({ argusEnabled: false })
    const card = (await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json
    expect(card.skills.map((sk: { id: string }) => sk.id)).toEqual(['general_assistance'])
  })

  it('serves only agent.json for fasta2a and only agent-card.json for a2a-js', async () => {
    const fasta2a = await start({ profile: 'fasta2a' })
    expect((await call(fasta2a, 'GET', '/a2a/.well-known/agent.json')).status).toBe(200)
    expect((await call(fasta2a, 'GET', '/a2a/.well-known/agent-card.json')).status).toBe(404)
    await fasta2a.close()
    const a2aJs = await start({ profile: 'a2a-js' })
    expect((await call(a2aJs, 'GET', '/a2a/.well-known/agent-card.json')).status).toBe(200)
    expect(String((await call(a2aJs, 'GET', '/a2a/.well-known/agent.json')).status)).toBe(fixture('a2a-js-sdk-1.3.0/agent-json-status.txt').trim())
  })

  it('applies the card transform from options, setCard and reset', async () => {
    const extension = { uri: 'urn:openoperator:campaign-control:v1', params: { lease_epoch_enforced: true, policy_enforced: true, operations: {} } }
    const s = await start({ card: (c) => ({ ...c, name: 'Initial' }) })
    expect((await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json.name).toBe('Initial')
    s.setCard((c) => ({ ...c, capabilities: { ...(c.capabilities as object), extensions: [extension] } }))
    const card = (await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json
    expect(card.capabilities.extensions).toEqual([extension])
    expect(card.name).toBe('OpenOperator')
    s.reset()
    expect((await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json.name).toBe('Initial')
    s.setCard(undefined)
    expect((await call(s, 'GET', '/a2a/.well-known/agent-card.json')).json.name).toBe('OpenOperator')
  })

  it('answers the seed wrong routes 404 for GET and 405 for POST, and records them', async () => {
    const s = await start({ secret: 's3cret' })
    for (const path of ['/a2a/message/send', '/a2a/tasks/get', '/a2a/agent-card']) {
      expect((await call(s, 'GET', path)).status).toBe(404)
      expect((await call(s, 'POST', path, { body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(405)
    }
    expect(s.received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /a2a/message/send', 'POST /a2a/message/send',
      'GET /a2a/tasks/get', 'POST /a2a/tasks/get',
      'GET /a2a/agent-card', 'POST /a2a/agent-card'
    ])
    expect(s.received[1]?.rawBody).toBe('{}')
  })

  it('redirects POST /a2a to /a2a/ with 307, refuses GET /a2a/, 404s anything else', async () => {
    const s = await start()
    const redirect = await call(s, 'POST', '/a2a', { body: '{}' })
    expect(redirect.status).toBe(307)
    expect(redirect.headers.location).toBe(`${s.url}/a2a/`)
    expect(s.rpcCalls()).toEqual([])
    expect((await call(s, 'GET', '/a2a/')).status).toBe(405)
    const unknown = await call(s, 'GET', '/nope')
    expect(unknown.status).toBe(404)
    expect(unknown.text).toBe('Not Found')
    expect(s.received.map((r) => r.path)).toEqual(['/a2a', '/a2a/', '/nope'])
  })
})
