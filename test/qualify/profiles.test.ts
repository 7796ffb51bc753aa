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
