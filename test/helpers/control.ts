// A gateway in controller mode against the simulator's campaign-control mode, on loopback.
// After each test it checks the whole-run rule: the remote never received any mutation
// request id twice.
import { randomBytes } from 'node:crypto'
import { afterEach, expect } from 'vitest'
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js'
import type { Env } from '../../src/config.js'
import { startGateway, type TestGateway } from './gateway.js'
import { call, type JsonResponse } from './http.js'

export interface ControlPair {
  sim: Simulator
  gw: TestGateway
  /** POST to a campaign route as the given token */
  post: (token: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<JsonResponse>
  get: (token: string, path: string) => Promise<JsonResponse>
  /** the upstream calls of one JSON-RPC method, in order */
  calls: (method: string) => Array<{ method: string; id: unknown; params: any }> // eslint-disable-line @typescript-eslint/no-explicit-any
}

export const rid = (prefix = 'req'): string => `${prefix}-${randomBytes(8).toString('hex')}`

const sims: Simulator[] = []
afterEach(async () => {
  for (const sim of sims.splice(0)) {
    const counts = sim.control.requestCounts()
    await sim.close()
    for (const [id, n] of counts) expect(n, `request id ${id} reached the remote ${n} times`).toBe(1)
  }
})

export async function startControlPair (o: { sim?: SimulatorOptions; env?: Env; clock?: () => number } = {}): Promise<ControlPair> {
  const sim = await startSimulator({ profile: 'campaign-control', ...o.sim })
  sims.push(sim)
  const gw = await startGateway({
    simulator: sim,
    clock: o.clock,
    env: { GATEWAY_CONTROL_ENABLED: 'true', GATEWAY_RATE_LIMIT_CONTROL: '100000', GATEWAY_RATE_LIMIT_READ: '100000', ...o.env }
  })
  return {
    sim,
    gw,
    post: async (token, path, body = {}, headers = {}) => await call(`${gw.url}${path}`, { method: 'POST', token, body, headers }),
    get: async (token, path) => await call(`${gw.url}${path}`, { token }),
    calls: (method) => sim.rpcCalls().filter((c) => c.method === method)
  }
}

/** claims the campaign for the controller token and checks it worked */
export async function claim (p: ControlPair, token: string, campaignId: string, ttlSeconds = 600): Promise<JsonResponse> {
  const res = await p.post(token, `/v1/campaigns/${campaignId}/control/claim`, { requestId: rid('claim'), ttlSeconds })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res
}
