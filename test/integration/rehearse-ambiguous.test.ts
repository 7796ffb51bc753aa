// Rehearsing an ambiguous write as the documents tell a newcomer to (docs/api.md#rehearse,
// docs/runbooks/ambiguous-write.md#rehearse): the embedded default (no OPENOPERATOR_URL, the
// campaign-control profile, controller mode), started the way the bin starts it, over real
// sockets. A fault set on the simulator's own admin route (or given in SIMULATOR_FAULTS) makes the
// remote apply a submission and drop its connection; the gateway answers 504 ambiguous_write and
// blocks the campaign; the runbook's listing and reconcile resolve it without sending it again;
// the task then completes on time (SIMULATOR_TASK_SECONDS) and a gateway poll sees it. The admin
// route is the simulator's alone: the gateway's listeners answer 404 for it.
import { describe, expect, it, onTestFinished } from 'vitest'
import { loadConfig, type Env } from '../../src/config/index.js'
import { startGatewayServer, type RunningGateway } from '../../src/server.js'
import { call } from '../helpers/http.js'

interface Embedded { gw: RunningGateway; url: string; sim: string; token: string; printed: string[] }

/** npm start with no OPENOPERATOR_URL: the gateway and its embedded simulator, closed after the test */
async function startEmbedded (env: Env): Promise<Embedded> {
  const printed: string[] = []
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent',
    SIMULATOR_PROFILE: 'campaign-control',
    GATEWAY_CONTROL_ENABLED: 'true',
    ...env
  })
  const gw = await startGatewayServer(config, { print: (line) => printed.push(line) })
  onTestFinished(async () => { await gw.close() })
  const token = /dev token \(all scopes, this run only\): (\S+)/.exec(printed.join('\n'))?.[1]
  // the line that tells a person where the simulator's admin route is
  const sim = /^embedded simulator: (http:\/\/127\.0\.0\.1:\d+) \(faults, from this machine only: curl \1\/_sim\/faults\)$/m.exec(printed.join('\n'))?.[1]
  expect(token).toBeDefined()
  expect(sim).toBe(gw.simulator?.url)
  return { gw, url: gw.url, sim: sim!, token: token!, printed }
}

describe('rehearse an ambiguous write against the embedded simulator', () => {
  it('the gateway\'s listeners do not serve the simulator\'s admin route', async () => {
    const { url, sim, gw, token } = await startEmbedded({})
    for (const base of [url, gw.metricsUrl]) {
      for (const method of ['GET', 'POST', 'DELETE'] as const) {
        for (const path of ['/_sim/faults', '/_sim/held', '/_sim/held/deliver']) {
          const res = await call(`${base}${path}`, { method, token, body: method === 'POST' ? { faults: 'drop-after-apply@submit' } : undefined })
          expect(res.status, `${method} ${base}${path}`).toBe(404)
        }
      }
    }
    // nothing was set on the simulator by those
    expect((await call(`${sim}/_sim/faults`)).body).toEqual({ faults: [] })
  })

  it('fault set on the admin route → submit → 504 ambiguous_write → blocked → runbook: list, reconcile → applied; the task completes and a poll sees it', async () => {
    const { url, sim, token, gw } = await startEmbedded({ SIMULATOR_TASK_SECONDS: '1' })
    const C = `${url}/v1/campaigns/rehearsal`
    const post = async (path: string, body: object = {}) => await call(`${C}${path}`, { method: 'POST', token, body })

    const set = await call(`${sim}/_sim/faults`, { method: 'POST', body: { faults: 'drop-after-apply@submit:1' } })
    expect(set.body).toEqual({ added: 1, faults: [{ rule: 'drop-after-apply@submit:1', remaining: 1 }] })
    expect((await post('/control/claim', { requestId: 'rehearse-claim-1', ttlSeconds: 300 })).status).toBe(200)

    const submitted = await post('/submissions', { requestId: 'rehearse-submit-1', parts: [{ kind: 'text', text: 'run the next stage' }] })
    expect(submitted.status).toBe(504)
    expect(submitted.body.error).toMatchObject({ code: 'ambiguous_write', requestId: 'rehearse-submit-1', retryable: false, reconcile: '/v1/campaigns/rehearsal/requests/rehearse-submit-1/reconcile' })
    // the fault was used up; the remote did apply it
    expect((await call(`${sim}/_sim/faults`)).body).toEqual({ faults: [] })

    // the campaign is blocked; the same id only replays the 504
    const blocked = await post('/interventions', { requestId: 'rehearse-poke-1', intervention: { note: 'hi' } })
    expect([blocked.status, blocked.body.error.code, blocked.body.error.requestId]).toEqual([409, 'ambiguity_unresolved', 'rehearse-submit-1'])
    const replay = await post('/submissions', { requestId: 'rehearse-submit-1', parts: [{ kind: 'text', text: 'run the next stage' }] })
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([504, 'true'])

    // runbook step 2: list; step 3: reconcile
    const listed = await call(`${url}/v1/requests?state=ambiguous`, { token })
    expect(listed.body.requests.map((r: { campaignId: string; requestId: string; operation: string }) => [r.campaignId, r.requestId, r.operation])).toEqual([['rehearsal', 'rehearse-submit-1', 'submit']])
    const reconciled = await call(`${url}${submitted.body.error.reconcile as string}`, { method: 'POST', token })
    expect(reconciled.status).toBe(200)
    expect(reconciled.body).toMatchObject({ requestId: 'rehearse-submit-1', state: 'applied', taskId: expect.any(String) })
    const taskId = reconciled.body.taskId as string
    expect((await call(`${url}/v1/requests?state=ambiguous`, { token })).body.requests).toEqual([])

    // step 7: the campaign accepts mutations again; the original id now answers the resolved record
    expect((await post('/interventions', { requestId: 'rehearse-poke-2', intervention: { note: 'hi' } })).status).toBe(200)
    const after = await post('/submissions', { requestId: 'rehearse-submit-1', parts: [{ kind: 'text', text: 'run the next stage' }] })
    expect([after.status, after.body.state, after.headers['idempotent-replayed']]).toEqual([200, 'applied', 'true'])

    // the caller's poll loop ends: working, then completed within SIMULATOR_TASK_SECONDS
    const seen: string[] = []
    const deadline = Date.now() + 5000
    while (Date.now() < deadline) {
      const task = await call(`${url}/v1/tasks/${taskId}`, { token })
      expect(task.status).toBe(200)
      if (seen.at(-1) !== task.body.state) seen.push(task.body.state as string)
      if (task.body.state === 'completed') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(seen).toEqual(['working', 'completed'])
    // nothing reached the remote twice
    for (const [id, n] of gw.simulator!.control.requestCounts()) expect(n, id).toBe(1)
  })

  it('SIMULATOR_FAULTS at start does the same without the admin route; with SIMULATOR_TASK_SECONDS=off the task stays working', async () => {
    const { url, sim, token, printed } = await startEmbedded({ SIMULATOR_FAULTS: 'drop-after-apply@submit:1', SIMULATOR_TASK_SECONDS: 'off' })
    expect((await call(`${sim}/_sim/faults`)).body).toEqual({ faults: [{ rule: 'drop-after-apply@submit:1', remaining: 1 }] })
    const C = `${url}/v1/campaigns/rehearsal-env`
    expect((await call(`${C}/control/claim`, { method: 'POST', token, body: { requestId: 'env-claim-1', ttlSeconds: 300 } })).status).toBe(200)
    const submitted = await call(`${C}/submissions`, { method: 'POST', token, body: { requestId: 'env-submit-1', parts: [{ kind: 'text', text: 'go' }] } })
    expect([submitted.status, submitted.body.error.code]).toEqual([504, 'ambiguous_write'])
    const reconciled = await call(`${C}/requests/env-submit-1/reconcile`, { method: 'POST', token })
    expect(reconciled.body.state).toBe('applied')
    // the next submission goes through (the fault took one)
    const next = await call(`${C}/submissions`, { method: 'POST', token, body: { requestId: 'env-submit-2', parts: [{ kind: 'text', text: 'go' }] } })
    expect(next.status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await call(`${url}/v1/tasks/${next.body.taskId as string}`, { token })).body.state).toBe('working')
    expect(printed.join('\n')).not.toContain('SIMULATOR_FAULTS')
  })
})
