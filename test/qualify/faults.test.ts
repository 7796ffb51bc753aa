// The smoke against a simulator with each fault that must make its assertion FAIL (wrong
// SHA, Argus disabled, a wrong route answering 200, an unauthenticated call accepted), and
// the other ways a deployment can fall short: the SHA only in the supervisor.health payload,
// no route telling installation from enablement, an observer task with a controller, a
// scheme refused, a remote too slow or too large. Each run still mutates nothing.
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js'
import { envFor, expectOnlyReads, notPassed, qualify } from './helpers.js'

const OTHER_SHA = '0123456789abcdef0123456789abcdef01234567'
const sims: Simulator[] = []
async function sim (opts: SimulatorOptions = {}): Promise<Simulator> {
  const s = await startSimulator({ secret: 'fault-secret-1', ...opts })
  sims.push(s)
  return s
}
afterEach(async () => { for (const s of sims.splice(0)) await s.close() })

const SKIPS = { card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' }

describe('qualify against a faulty deployment', () => {
  it('a wrong source SHA FAILs source_sha, naming both commits, and nothing else', async () => {
    const s = await sim({ sourceSha: OTHER_SHA })
    const run = await qualify(envFor(s))
    expect(notPassed(run)).toEqual({ source_sha: 'FAIL', ...SKIPS })
    expect(run.reason.source_sha).toBe(`GET /health reports ${OTHER_SHA}; EXPECTED_SOURCE_SHA is 5e1f0c0ffee0123456789abcdef0123456789abc`)
    expect(run.code).toBe(1)
    expectOnlyReads(s)
  })

  it('an abbreviated or upper-case SHA is not a match: compared exactly', async () => {
    const s = await sim()
    s.inject('health', { kind: 'status', status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'ok', sourceSha: '5e1f0c0' }) })
    const run = await qualify(envFor(s))
    expect(run.status.source_sha).toBe('FAIL')
    expect(run.reason.source_sha).toBe('GET /health reports a source SHA that is not a full 40-hex commit in lower case')
    s.clearFaults()
    s.inject('health', { kind: 'status', status: 200, contentType: 'application/json', body: JSON.stringify({ sourceSha: '5E1F0C0FFEE0123456789ABCDEF0123456789ABC' }) })
    expect((await qualify(envFor(s))).status.source_sha).toBe('FAIL')
  })

  it('without a SHA in /health, the supervisor.health payload is read (sourceSha or source_sha)', async () => {
    const s = await sim()
    s.inject('health', { kind: 'status', status: 200, contentType: 'application/json', body: '{"status":"ok"}' })
    const none = await qualify(envFor(s))
    expect(none.reason.source_sha).toBe('neither GET /health nor the supervisor.health payload reports source_sha or sourceSha')
    const payload = { kind: 'message', role: 'agent', messageId: 'm-1', parts: [{ kind: 'data', data: { ok: true, source_sha: '5e1f0c0ffee0123456789abcdef0123456789abc' } }] }
    s.inject({ argusOperation: 'supervisor.health' }, { kind: 'result', result: payload })
    const found = await qualify(envFor(s))
    expect(found.status.source_sha).toBe('PASS')
    expect(found.status.argus_supervisor_health).toBe('PASS')
  })

  it('Argus disabled: the reads and the probes that need it FAIL, the card matches the disabled profile, installation still PASSes', async () => {
    const s = await sim({ argusEnabled: false })
    const run = await qualify(envFor(s))
    expect(notPassed(run)).toEqual({
      argus_supervisor_health: 'FAIL',
      argus_supervisor_status: 'FAIL',
      argus_campaign_list: 'FAIL',
      unsupported_argus_operation: 'FAIL',
      legacy_request_id: 'FAIL',
      argus_profile_enabled: 'FAIL',
      ...SKIPS
    })
    expect(run.status.argus_skills).toBe('PASS') // general_assistance alone is the disabled profile
    expect(run.status.argus_profile_installed).toBe('PASS')
    expect(run.status.invalid_argus_envelope).toBe('PASS') // the envelope is checked before enablement
    expect(run.reason.argus_supervisor_health).toBe('supervisor.health: the remote answered argus_supervisor_disabled')
    expect(run.reason.argus_profile_enabled).toBe('/docs/a2a.json reports the argus-supervisor extension disabled')
    expect(run.code).toBe(1)
    expectOnlyReads(s)
  })

  it('a wrong route answering 200 FAILs that route alone', async () => {
    const s = await sim()
    s.inject({ wrongRoute: '/a2a/tasks/get' }, { kind: 'status', status: 200, contentType: 'application/json', body: '{"jsonrpc":"2.0","result":{}}' })
    const run = await qualify(envFor(s))
    expect(notPassed(run)).toEqual({ wrong_route_tasks_get: 'FAIL', ...SKIPS })
    expect(run.reason.wrong_route_tasks_get).toBe('GET /a2a/tasks/get answered HTTP 200; expected 404 or 405')
    expect(run.code).toBe(1)
  })

  it('a wrong route that redirects is not followed and FAILs', async () => {
    const s = await sim()
    s.inject({ wrongRoute: '/a2a/message/send' }, { kind: 'redirect', status: 307, location: `${'http://127.0.0.1:1'}/a2a/` })
    const run = await qualify(envFor(s))
    expect(run.reason.wrong_route_message_send).toBe('GET /a2a/message/send answered HTTP 307; expected 404 or 405')
    expect(s.received.filter((r) => r.path === '/a2a/message/send')).toHaveLength(1) // failed on GET, never followed
  })

  it('an unauthenticated call accepted (a remote with no secret) FAILs unauthenticated_refused alone', async () => {
    const s = await startSimulator({}) // no secret: every call accepted
    sims.push(s)
    const run = await qualify(envFor(s, { SPYNEL_AGENT_ZERO_API_KEY: 'any-key-1' }))
    expect(notPassed(run)).toEqual({ unauthenticated_refused: 'FAIL', ...SKIPS })
    expect(run.reason.unauthenticated_refused).toBe('a call with no credential was accepted (HTTP 200, a JSON-RPC result)')
    expectOnlyReads(s)
  })

  it('a deployment that accepts only bearer FAILs x_api_key_accepted', async () => {
    const s = await sim({ authSchemes: ['bearer'] })
    const run = await qualify(envFor(s))
    expect(notPassed(run)).toEqual({ x_api_key_accepted: 'FAIL', ...SKIPS })
    expect(run.reason.x_api_key_accepted).toBe('the secret sent as X-API-KEY: the credential was refused (HTTP 401)')
  })

  it('UPSTREAM_AUTH_SCHEME=x-api-key sends the secret that way to everything else', async () => {
    const s = await sim({ authSchemes: ['x-api-key'] })
    const run = await qualify(envFor(s, { UPSTREAM_AUTH_SCHEME: 'x-api-key' }))
    expect(notPassed(run)).toEqual({ bearer_accepted: 'FAIL', ...SKIPS })
  })

  it('no route telling installation from enablement: argus_profile_installed SKIPs with the reason', async () => {
    const s = await sim()
    s.inject('a2a-docs', { kind: 'status', status: 200, contentType: 'application/json', body: '{"endpoint":"/a2a/"}' })
    const run = await qualify(envFor(s))
    expect(notPassed(run)).toEqual({ argus_profile_installed: 'SKIP', ...SKIPS })
    expect(run.reason.argus_profile_installed).toMatch(/^no route reports the profile's installation apart from its enablement/)
    expect(run.code).toBe(0) // a SKIP does not fail the run
  })

  it('the observer chain FAILs for a task whose argus_supervisor metadata names a controller or epoch', async () => {
    const s = await sim()
    s.addTask({ id: 'task-ctl-1', contextId: 'c', kind: 'task', status: { state: 'working' }, metadata: { argus_supervisor: { stage: 'train', controller_id: 'ctl-1', controller_epoch: 3 } } })
    s.addTask({ id: 'task-plain-1', contextId: 'c', kind: 'task', status: { state: 'working' } })
    const ctl = await qualify(envFor(s), ['--observer-task', 'task-ctl-1'])
    expect(ctl.reason.observer_chain).toBe('the task\'s argus_supervisor metadata carries a controller identity or epoch')
    const plain = await qualify(envFor(s), ['--observer-task', 'task-plain-1'])
    expect(plain.reason.observer_chain).toBe('the task carries no argus_supervisor metadata: not an observer task')
    const missing = await qualify(envFor(s), ['--observer-task', 'task-missing-1'])
    expect(missing.reason.observer_chain).toBe('the observer task was not found (-32001)')
    expect(missing.code).toBe(1)
  })

  it('every assertion is bounded in time: a remote that stalls FAILs within the bound', async () => {
    const s = await sim()
    s.inject({ argusOperation: 'supervisor.status' }, { kind: 'delay', ms: 60_000 }, 1)
    const started = Date.now()
    const run = await qualify(envFor(s, { UPSTREAM_READ_TIMEOUT_MS: '500' }))
    expect(run.status.argus_supervisor_status).toBe('FAIL')
    expect(run.reason.argus_supervisor_status).toMatch(/^(no answer within the time bound|no conclusion within 500 ms|the answer did not arrive in time)$/)
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it('a FastA2A task that never finishes FAILs within the bound', async () => {
    const s = await sim({ profile: 'fasta2a' })
    s.inject({ argusOperation: 'campaign.list' }, { kind: 'task-states', states: ['submitted', 'working'] }, 1)
    const run = await qualify(envFor(s, { UPSTREAM_READ_TIMEOUT_MS: '1500' }))
    expect(run.status.argus_campaign_list).toBe('FAIL')
    expect(run.reason.argus_campaign_list).toMatch(/no (answer|conclusion) within/)
  })

  it('an answer past the byte cap is abandoned and FAILs', async () => {
    const s = await sim()
    s.inject('agent-json', { kind: 'oversized', bytes: 3 * 1024 * 1024, mode: 'chunked' }, 1)
    s.inject('agent-card', { kind: 'oversized', bytes: 3 * 1024 * 1024, mode: 'content-length' }, 1)
    const run = await qualify(envFor(s))
    expect(run.reason.agent_card).toBe('the answer exceeded 1048576 bytes')
    expect(run.reason.agent_card_compat).toBe('the answer declares more than 1048576 bytes')
    expect(run.reason.argus_skills).toBe('no valid agent card was read')
  })

  it('an Argus error placed anywhere a remote puts it is recognised (data code, message, payload, failed task)', async () => {
    const s = await sim()
    for (const placement of ['rpc-data', 'rpc-message', 'payload-string', 'payload-object', 'failed-task'] as const) {
      s.clearFaults()
      s.inject({ argusOperation: 'supervisor.status' }, { kind: 'argus-error', code: 'argus_supervisor_unavailable', placement }, 1)
      const run = await qualify(envFor(s))
      expect(run.reason.argus_supervisor_status, placement).toBe('supervisor.status: the remote answered argus_supervisor_unavailable')
    }
  })

  it('a remote that is down FAILs every assertion that needs it, in the tool\'s own words', async () => {
    const s = await sim()
    const url = s.url
    await s.close()
    const run = await qualify({ ...envFor(s), OPENOPERATOR_URL: url })
    expect(run.reason.health).toBe('the connection was refused')
    expect(run.code).toBe(1)
  })
})
