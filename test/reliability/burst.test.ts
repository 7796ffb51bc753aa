// A burst against a slow remote (docs/design.md#load-shedding): 2,000 task reads at once against
// an upstream that takes 2 s per answer. The 16 upstream connections serve 8 reads a second, so
// most of the burst cannot be served within the read timeout: it must be shed at once (503 with
// Retry-After, retryable), the rest answered, every answer before its read deadline, and
// /healthz must stay fast throughout. The burst comes from a worker thread, each request on a
// socket of its own opened beforehand (test/helpers/load.ts).
import { Pool } from 'undici'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { startBurst } from '../helpers/load.js'

const N = 2000
const UPSTREAM_DELAY_MS = 2000
const READ_TIMEOUT_MS = 5000

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

describe('a burst against a 2 s upstream', () => {
  it('sheds what cannot be served in time, answers everything before its deadline, keeps /healthz fast', async () => {
    const sim = await startSimulator({ secret: 'burst-secret-0c9d7e11a2', profile: 'openoperator' })
    for (let i = 0; i < N; i++) sim.addTask({ id: `burst-${i}`, contextId: 'ctx-burst', kind: 'task', status: { state: 'completed' } })
    const gw = await startGateway({
      simulator: sim,
      // the burst plays 2,000 callers from one address: no per-address connection bound here
      env: { UPSTREAM_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS), GATEWAY_RATE_LIMIT_READ: '1000000', LOG_LEVEL: 'warn', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '0' }
    })
    sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: UPSTREAM_DELAY_MS })
    gw.app.log.level = 'info'
    const burst = startBurst({ url: gw.url, count: N, paths: ['/v1/tasks/burst-{i}'], headers: { authorization: `Bearer ${gw.tokens.reader}` } })
    await burst.ready

    const probe = new Pool(gw.url, { connections: 1 })
    const health: number[] = []
    const healthStatuses = new Set<number>()
    let bursting = true
    const probing = (async () => {
      while (bursting) {
        const t = performance.now()
        const res = await probe.request({ method: 'GET', path: '/healthz' })
        await res.body.text()
        healthStatuses.add(res.statusCode)
        health.push(performance.now() - t)
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    const answers = await burst.fire()
    bursting = false
    await probing
    await probe.close()

    const ms = answers.map((r) => r.ms).sort((a, b) => a - b)
    const shed = answers.filter((r) => r.status === 503)
    const hs = [...health].sort((a, b) => a - b)
    console.log(`burst: ${N} requests, p50 ${Math.round(pct(ms, 0.5))} ms, p99 ${Math.round(pct(ms, 0.99))} ms, ` +
      `shed ${(100 * shed.length / N).toFixed(1)}%, /healthz p99 ${Math.round(pct(hs, 0.99))} ms`)
    const statuses: Record<string, number> = {}
    for (const r of answers) statuses[`${r.status}${r.code !== undefined ? ` ${r.code}` : ''}`] = (statuses[`${r.status}${r.code !== undefined ? ` ${r.code}` : ''}`] ?? 0) + 1
    console.log(`burst: answers ${JSON.stringify(statuses)}, max ${Math.round(ms.at(-1)!)} ms, /healthz max ${Math.round(hs.at(-1)!)} ms over ${hs.length} probes`)

    // every answer before its read deadline
    expect(ms.at(-1)!).toBeLessThan(READ_TIMEOUT_MS)
    // what was not served was shed, never left to time out
    expect([...new Set(answers.map((r) => r.status))].sort()).toEqual([200, 503])
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(16)
    for (const r of shed) {
      expect(['upstream_unavailable', 'overloaded']).toContain(r.code)
      expect(r.retryable).toBe(true)
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1)
    }
    // liveness stays fast, and 200, while the burst is shed
    expect([...healthStatuses]).toEqual([200])
    // not queued behind the burst: its p99 is a printed figure (58–800 ms here, under the 1 s a
    // kubelet's liveness probe allows by default); gated loosely so a busy CI machine cannot
    // fail it, far below the 5.7 s p50 the queue reached before the gate existed
    expect(pct(hs, 0.99)).toBeLessThan(2500)
  }, 40_000)

  it('sheds on a saturated event loop: 503 overloaded with Retry-After before anything is done; /healthz and /readyz stay 200', async () => {
    const sim = await startSimulator({ secret: 'pressure-secret-41d0be6a', profile: 'openoperator' })
    const gw = await startGateway({ simulator: sim, env: { GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '50' } })
    expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
    const before = sim.rpcCalls().length
    // saturate the loop: 100 ms blocks, back to back, for over two samples
    const until = Date.now() + 1200
    await new Promise<void>((resolve) => {
      const spin = (): void => {
        const end = Date.now() + 100
        while (Date.now() < end) { /* busy */ }
        if (Date.now() < until) setTimeout(spin, 1)
        else resolve()
      }
      spin()
    })
    const [shed, anonymous, health, ready] = await Promise.all([
      call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader }),
      call(`${gw.url}/v1/supervisor/health`),
      call(`${gw.url}/healthz`),
      call(`${gw.url}/readyz`)
    ])
    expect(shed.status).toBe(503)
    expect(shed.body.error).toEqual({ code: 'overloaded', message: expect.any(String), retryable: true })
    expect(shed.headers['retry-after']).toBe('1')
    expect(typeof shed.headers['x-request-id']).toBe('string')
    // shed before authentication: a saturated loop spends nothing on a bad token either
    expect(anonymous.body.error.code).toBe('overloaded')
    expect(health.status).toBe(200)
    expect(ready.status).toBe(200)
    expect(sim.rpcCalls().length).toBe(before)
    // once the loop is calm again (the next samples), the gateway serves
    let res = shed
    for (let i = 0; i < 40 && res.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100))
      res = await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    }
    expect(res.status).toBe(200)
  })
})
