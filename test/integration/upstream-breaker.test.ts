// The circuit breaker on the upstream (docs/design.md#circuit-breaker): a remote that stops
// answering opens it after consecutive timeouts or connect failures; reads are then refused at
// once with 503 and Retry-After instead of each waiting out its timeout; a mutation is refused
// before anything is written; after the open period one read probes, and its success closes it.
// Every change is counted and logged, and /readyz reports it (still 200).
import { describe, expect } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { startForwarder } from '../helpers/forwarder.js'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const BREAKER = { GATEWAY_UPSTREAM_BREAKER_FAILURES: '3', GATEWAY_UPSTREAM_BREAKER_OPEN_MS: '800', UPSTREAM_READ_TIMEOUT_MS: '400' }

async function metric (metricsUrl: string, line: RegExp): Promise<string | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 1100)) // the render is cached for 1 s
  const text = (await call(`${metricsUrl}/metrics`)).text
  return text.split('\n').find((l) => line.test(l))
}

describe('the upstream circuit breaker', () => {
  it('opens after consecutive timeouts: reads refused at once, a mutation refused unwritten; a probe closes it', async ({ startControlPair }) => {
    const p = await startControlPair({ env: BREAKER })
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-br')
    const health = async (): Promise<{ status: number; code?: string; ms: number; retryAfter?: string }> => {
      const t0 = Date.now()
      const res = await call(`${p.gw.url}/v1/supervisor/health`, { token: p.gw.tokens.reader })
      return { status: res.status, code: res.body?.error?.code, ms: Date.now() - t0, retryAfter: res.headers['retry-after'] as string | undefined }
    }
    // the remote hangs: three reads wait out their timeout
    p.sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 3000 })
    for (let i = 0; i < 3; i++) expect(await health()).toMatchObject({ status: 504, code: 'upstream_timeout' })
    const sentBefore = p.sim.rpcCalls().length
    // now refused at once, without a call
    const fast = await health()
    expect(fast).toMatchObject({ status: 503, code: 'upstream_unavailable' })
    expect(fast.ms).toBeLessThan(300)
    expect(Number(fast.retryAfter)).toBeGreaterThanOrEqual(1)
    expect(p.sim.rpcCalls().length).toBe(sentBefore)
    expect(p.gw.logs.some((l) => l.includes('upstream circuit opened'))).toBe(true)
    const ready = await call(`${p.gw.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(ready.body.checks.upstreamCircuit).toBe('open')
    expect(await metric(p.gw.metricsUrl, /^gateway_upstream_circuit_state /)).toBe('gateway_upstream_circuit_state 2')

    // a mutation is refused before anything is written, nothing sent, retryable
    const id = rid('iv')
    const refused = await p.post(t, '/v1/campaigns/camp-br/interventions', { requestId: id, intervention: { a: 1 } })
    expect(refused.status).toBe(503)
    expect(refused.body.error).toMatchObject({ code: 'upstream_unavailable', retryable: true })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect((await p.get(p.gw.tokens.controller, `/v1/campaigns/camp-br/requests/${id}`)).status).toBe(404)
    expect(p.calls('campaign/intervene')).toHaveLength(0)

    // the remote recovers; after the open period one read probes and closes the circuit
    p.sim.clearFaults()
    await new Promise((resolve) => setTimeout(resolve, 900))
    expect(await health()).toMatchObject({ status: 200 })
    expect((await call(`${p.gw.url}/readyz`)).body.checks.upstreamCircuit).toBe('closed')
    expect(p.gw.logs.some((l) => l.includes('upstream circuit half-open'))).toBe(true)
    expect(p.gw.logs.some((l) => l.includes('upstream circuit closed'))).toBe(true)
    expect(await metric(p.gw.metricsUrl, /^gateway_upstream_circuit_transitions_total\{to="closed"\}/)).toBe('gateway_upstream_circuit_transitions_total{to="closed"} 1')
    // and the same request now runs, sent once
    const ok = await p.post(t, '/v1/campaigns/camp-br/interventions', { requestId: id, intervention: { a: 1 } })
    expect(ok.status).toBe(200)
    expect(p.calls('campaign/intervene')).toHaveLength(1)
  })

  it('opens after connect failures; a failed probe opens it again', async () => {
    const sim = await startSimulator({ secret: 'breaker-secret-0123456789' })
    const fwd = await startForwarder(sim.url)
    try {
      const gw = await startGateway({ upstreamUrl: fwd.url, env: { ...BREAKER, SPYNEL_AGENT_ZERO_API_KEY: sim.secret } })
      const health = async (): Promise<number> => (await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status
      expect(await health()).toBe(200)
      await fwd.shut()
      for (let i = 0; i < 3; i++) expect(await health()).toBe(503)
      expect((await call(`${gw.url}/readyz`)).body.checks.upstreamCircuit).toBe('open')
      // still down when the probe goes: open again
      await new Promise((resolve) => setTimeout(resolve, 900))
      expect(await health()).toBe(503)
      expect((await call(`${gw.url}/readyz`)).body.checks.upstreamCircuit).toBe('open')
      expect(gw.logs.filter((l) => l.includes('upstream circuit opened'))).toHaveLength(2)
      await fwd.reopen()
      await new Promise((resolve) => setTimeout(resolve, 900))
      expect(await health()).toBe(200)
      expect((await call(`${gw.url}/readyz`)).body.checks.upstreamCircuit).toBe('closed')
    } finally {
      await fwd.close()
      await sim.close()
    }
  })
})
