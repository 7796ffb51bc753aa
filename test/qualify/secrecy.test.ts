// The smoke never prints a credential or a raw authenticated response: the secret and a
// remote marker are planted in every answer a remote could echo them in (card, payloads,
// JSON-RPC error text, a wrong route's body, /health), and neither appears in stdout or
// stderr, in text or JSON mode, whether the assertions PASS or FAIL. The marker is not the
// secret, so the report's last-line scrubbing cannot be what hides it.
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { envFor, qualify } from './helpers.js'

const SECRET = 'planted-Secret-7f3a9c'
const MARKER = 'REMOTE-TEXT-d41d8cd9'
let s: Simulator | undefined
afterEach(async () => { await s?.close(); s = undefined })

function plant (sim: Simulator): void {
  sim.setCard((card) => ({ ...card, name: `${MARKER} ${SECRET}`, description: SECRET, skills: [...(card.skills as object[]), { id: `${MARKER}-${SECRET}`, name: SECRET }] }))
  sim.inject('health', { kind: 'status', status: 200, contentType: 'application/json', body: JSON.stringify({ status: MARKER, source_sha: `${SECRET}${MARKER}` }) })
  sim.inject({ argusOperation: 'supervisor.status' }, { kind: 'result', result: { kind: 'message', role: 'agent', messageId: MARKER, parts: [{ kind: 'data', data: { error: `${MARKER} ${SECRET}` } }] } })
  sim.inject({ argusOperation: 'campaign.list' }, { kind: 'rpc-error', code: -32000, message: `${MARKER} failed with ${SECRET}`, data: { detail: SECRET } })
  sim.inject({ argusOperation: 'qualify.nonexistent' }, { kind: 'result', result: { kind: 'task', id: MARKER, status: { state: `${MARKER}-state` } } })
  sim.inject({ wrongRoute: '/a2a/agent-card' }, { kind: 'status', status: 200, body: `${MARKER} ${SECRET}` })
  sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'status', status: 500, body: `${MARKER} ${SECRET}` })
}

describe('qualify output carries no credential and no remote text', () => {
  for (const argv of [[], ['--json'], ['--observer-task', 'task-demo-1']]) {
    it(`argv ${JSON.stringify(argv)}`, async () => {
      s = await startSimulator({ secret: SECRET })
      plant(s)
      const run = await qualify(envFor(s), argv)
      expect(run.code).toBe(1)
      for (const text of [run.out, run.err]) {
        expect(text).not.toContain(SECRET)
        expect(text).not.toContain(MARKER)
        expect(text).not.toContain('[REDACTED]') // nothing needed scrubbing: no reason quotes the remote
      }
      // the planted answers did fail the assertions they reached
      if (argv.length === 0) {
        expect(run.status.agent_card).toBe('PASS')
        expect(run.status.argus_skills).toBe('FAIL')
        expect(run.reason.argus_skills).toMatch(/1 other skill id\(s\)$/)
        expect(run.reason.source_sha).toBe('GET /health reports a source SHA that is not a full 40-hex commit in lower case')
        expect(run.reason.argus_supervisor_status).toBe('supervisor.status: the payload carries an error that is not one of the four Argus codes')
        expect(run.reason.argus_campaign_list).toBe('campaign.list: JSON-RPC error -32000')
        expect(run.reason.unsupported_argus_operation).toBe('the operation qualify.nonexistent: the task stopped in an unrecognised state; expected unsupported_argus_operation')
        expect(run.reason.wrong_route_agent_card).toBe('GET /a2a/agent-card answered HTTP 200; expected 404 or 405')
      }
    })
  }

  it('a configuration error never echoes the secret', async () => {
    const run = await qualify({ OPENOPERATOR_URL: 'http://openoperator.example', SPYNEL_AGENT_ZERO_API_KEY: `${SECRET} with spaces`, EXPECTED_SOURCE_SHA: 'abc' })
    expect(run.code).toBe(2)
    expect(run.out).toBe('')
    expect(run.err).not.toContain(SECRET)
    expect(run.err).toContain('SPYNEL_AGENT_ZERO_API_KEY: must be printable ASCII without spaces')
  })
})
