// The smoke against every simulator profile (docs/design.md#qualification), and the proof
// that it mutates nothing: the simulator records only reads, and applies nothing.
//
// Expected per profile:
// - openoperator (OpenOperator today) and campaign-control (the same plus the control
//   extension): every assertion PASSes; observer_chain SKIPs without --observer-task (PASS with
//   the demo task, which has argus_supervisor metadata and no controller); campaign_control
//   always SKIPs (the smoke never qualifies mutations), its reason saying whether the card
//   advertises the extension.
// - fasta2a (a plain FastA2A 0.5 server): the reads PASS after polling (answer now with a
//   submitted task, poll later), but agent_card_compat FAILs: plain FastA2A serves only
//   agent.json, and the seed promises both cards of an OpenOperator deployment.
// - a2a-js (the a2a-js SDK): agent_card FAILs, it serves only agent-card.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, generateKeyPair } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator, type SimulatorProfile } from '../../src/simulator/index.js'
import { envFor, expectOnlyReads, notPassed, qualify } from './helpers.js'

const sims: Simulator[] = []
async function sim (profile: SimulatorProfile): Promise<Simulator> {
  const s = await startSimulator({ profile, secret: `secret-${profile}-x1` })
  sims.push(s)
  return s
}
afterEach(async () => { for (const s of sims.splice(0)) await s.close() })

const EXPECTED: Record<SimulatorProfile, Record<string, string>> = {
  openoperator: { card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' },
  'campaign-control': { card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' },
  fasta2a: { agent_card_compat: 'FAIL', card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' },
  'a2a-js': { agent_card: 'FAIL', card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' }
}

describe('qualify against each simulator profile', () => {
  for (const profile of ['openoperator', 'campaign-control', 'fasta2a', 'a2a-js'] as const) {
    it(`${profile}: ${JSON.stringify(EXPECTED[profile])}, the rest PASS, and only reads reach the remote`, async () => {
      const s = await sim(profile)
      const run = await qualify(envFor(s))
      expect(notPassed(run)).toEqual(EXPECTED[profile])
      expect(Object.keys(run.status)).toHaveLength(28)
      expect(run.code).toBe(Object.values(EXPECTED[profile]).includes('FAIL') ? 1 : 0)
      expect(run.err).toMatch(/qualify: \d+ PASS, \d+ FAIL, 3 SKIP against http:\/\/127\.0\.0\.1:\d+\n/)
      expectOnlyReads(s)
    })
  }

  it.each(['v1.0', 'dual'] as const)('an A2A %s remote: protocol_version reports 1.0, the reads speak it and PASS', async (protocol) => {
    const s = await startSimulator({ profile: 'openoperator', protocol, secret: `secret-${protocol}-x1` })
    sims.push(s)
    const run = await qualify(envFor(s))
    // a v1.0 remote (as the SDK's) serves agent-card.json only: the seed's agent.json assertion FAILs, as for a2a-js
    expect(notPassed(run)).toEqual({ agent_card: 'FAIL', card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' })
    expect(run.reason.protocol_version).toMatch(/^A2A 1\.0: the card's JSON-RPC interface at http:\/\/127\.0\.0\.1:\d+\/a2a\/ speaks A2A 1\.0/)
    expect(run.reason.card_signature).toBe('the card carries no signature (none required: GATEWAY_CARD_JWKS_FILE is not set)')
    expect(s.rpcCalls().some((c) => c.method === 'SendMessage')).toBe(true)
    expect(s.rpcCalls().some((c) => c.method === 'message/send')).toBe(false)
    expectOnlyReads(s)
  })

  it('card_signature PASSes with the key in GATEWAY_CARD_JWKS_FILE, FAILs with another', async () => {
    const mine = await generateKeyPair('ES256', { extractable: true })
    const other = await generateKeyPair('ES256', { extractable: true })
    const s = await startSimulator({ profile: 'openoperator', protocol: 'v1.0', secret: 'secret-signed-x1', cardSigning: { keys: [{ privateKey: mine.privateKey, kid: 'ops-1', alg: 'ES256' }] } })
    sims.push(s)
    const dir = mkdtempSync(join(tmpdir(), 'oo-gw-qualify-'))
    try {
      writeFileSync(join(dir, 'mine.json'), JSON.stringify({ keys: [{ ...await exportJWK(mine.publicKey), kid: 'ops-1' }] }))
      writeFileSync(join(dir, 'other.json'), JSON.stringify({ keys: [{ ...await exportJWK(other.publicKey), kid: 'ops-2' }] }))
      const good = await qualify(envFor(s, { GATEWAY_CARD_JWKS_FILE: join(dir, 'mine.json') }))
      expect(good.status.card_signature).toBe('PASS')
      expect(good.reason.card_signature).toBe('signature 1 verified with trusted key ops-1 (ES256)')
      const bad = await qualify(envFor(s, { GATEWAY_CARD_JWKS_FILE: join(dir, 'other.json') }))
      expect(bad.status.card_signature).toBe('FAIL')
      expect(bad.reason.card_signature).toBe('no signature verified: signature 1: no trusted key has kid ops-1 for ES256')
      expect(bad.code).toBe(1)
    } finally { rmSync(dir, { recursive: true, force: true }) }
  })

  it('the campaign_control SKIP says whether the card advertises the extension', async () => {
    const plain = await qualify(envFor(await sim('openoperator')))
    expect(plain.reason.campaign_control).toMatch(/does not advertise urn:openoperator:campaign-control:v1/)
    const control = await qualify(envFor(await sim('campaign-control')))
    expect(control.reason.campaign_control).toMatch(/the card advertises urn:openoperator:campaign-control:v1/)
  })

  it('fasta2a: the reads are answered with a submitted task and polled with tasks/get (historyLength 0)', async () => {
    const s = await sim('fasta2a')
    const run = await qualify(envFor(s))
    expect(run.status.argus_supervisor_health).toBe('PASS')
    const polls = s.rpcCalls().filter((c) => c.method === 'tasks/get')
    expect(polls.length).toBeGreaterThanOrEqual(6) // two per read at least
    for (const p of polls) expect(p.params.historyLength).toBe(0)
  })

  it('--observer-task: the demo task (argus_supervisor metadata, no controller) PASSes with tasks/get', async () => {
    const s = await sim('openoperator')
    const run = await qualify(envFor(s), ['--observer-task', 'task-demo-1'])
    expect(run.status.observer_chain).toBe('PASS')
    expect(run.code).toBe(0)
    expect(s.rpcCalls().filter((c) => c.method === 'tasks/get').map((c) => c.params)).toEqual([{ id: 'task-demo-1', historyLength: 0 }])
  })

  it('--json prints the same results as one JSON document', async () => {
    const s = await sim('fasta2a')
    const text = await qualify(envFor(s))
    const json = await qualify(envFor(s), ['--json'])
    const doc = JSON.parse(json.out)
    expect(doc.ok).toBe(false)
    expect(doc.counts).toEqual({ pass: 24, fail: 1, skip: 3 })
    expect(doc.target).toBe(s.url)
    const lines = doc.results.map((r: { status: string; name: string; reason?: string }) => (r.reason === undefined ? `${r.status} ${r.name}` : `${r.status} ${r.name}: ${r.reason}`))
    expect(`${lines.join('\n')}\n`).toBe(text.out)
    expect(json.code).toBe(1)
  })

  it('sends the probes the seed asks for, each once, and nothing the gateway would not recognise as a read', async () => {
    const s = await sim('openoperator')
    await qualify(envFor(s))
    const operations = s.rpcCalls().filter((c) => c.method === 'message/send').map((c) => c.params.message.metadata['urn:openoperator:argus-supervisor:v1'])
    // 3 auth probes and 3 reads, the malformed envelope, the nonexistent operation, the legacy id
    expect(operations.filter((e) => e.operation === 'qualify.nonexistent')).toHaveLength(1)
    expect(operations.filter((e) => e.operation === undefined)).toHaveLength(1)
    expect(operations.filter((e) => 'request_id' in e)).toHaveLength(1)
    expect(operations.some((e) => typeof e.operation === 'string' && e.operation.startsWith('campaign.') && e.operation !== 'campaign.list')).toBe(false)
    const unauthenticated = s.rpcCalls().filter((c) => c.headers.authorization === undefined && c.headers['x-api-key'] === undefined)
    expect(unauthenticated).toHaveLength(1)
    const paths = new Set(s.received.map((r) => `${r.method} ${r.path}`))
    for (const p of ['/a2a/message/send', '/a2a/tasks/get', '/a2a/tasks/cancel', '/a2a/agent-card']) {
      expect(paths.has(`GET ${p}`)).toBe(true)
      expect(paths.has(`POST ${p}`)).toBe(true)
    }
  })
})
