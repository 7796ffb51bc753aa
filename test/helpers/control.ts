// A gateway in controller mode against the simulator's campaign-control mode, on loopback, and
// the helpers its tests share. Tests get the pair from a fixture (`controlPair`,
// `startControlPair` in test/helpers/fixtures.ts), which checks after each test the whole-run
// rule: the remote never received any mutation request id twice.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js'
import type { Env } from '../../src/config/index.js'
import type { TestGateway } from './gateway.js'
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

/** what a control pair starts with before a test's own options: the campaign-control profile, the operator's opt-in, budgets no test reaches */
export const CONTROL_SIM: SimulatorOptions = { profile: 'campaign-control' }
export const CONTROL_ENV: Env = { GATEWAY_CONTROL_ENABLED: 'true', GATEWAY_RATE_LIMIT_CONTROL: '100000', GATEWAY_RATE_LIMIT_READ: '100000' }

export function controlPairOf (sim: Simulator, gw: TestGateway): ControlPair {
  return {
    sim,
    gw,
    post: async (token, path, body = {}, headers = {}) => await call(`${gw.url}${path}`, { method: 'POST', token, body, headers }),
    get: async (token, path) => await call(`${gw.url}${path}`, { token }),
    calls: (method) => sim.rpcCalls().filter((c) => c.method === method)
  }
}

/** the whole-run rule, from the remote's own receipts: no mutation request id reached it twice */
export function expectEachRequestOnce (sim: Simulator): void {
  for (const [id, n] of sim.control.requestCounts()) expect(n, `request id ${id} reached the remote ${n} times`).toBe(1)
}

/**
 * The v0.3 JSON-RPC method of each control operation: what an A2A caller sends to the front door
 * and what the gateway sends the remote (the simulator's campaign-control mode)
 */
export const CONTROL_METHOD = {
  claim: 'campaign/claim_control',
  renew: 'campaign/renew_control',
  release: 'campaign/release_control',
  intervene: 'campaign/intervene',
  submit: 'message/send',
  cancel: 'tasks/cancel'
} as const satisfies Record<'claim' | 'renew' | 'release' | 'intervene' | 'submit' | 'cancel', string>

export const rid = (prefix = 'req'): string => `${prefix}-${randomBytes(8).toString('hex')}`

/** claims the campaign for the controller token and checks it worked */
export async function claim (p: ControlPair, token: string, campaignId: string, ttlSeconds = 600): Promise<JsonResponse> {
  const res = await p.post(token, `/v1/campaigns/${campaignId}/control/claim`, { requestId: rid('claim'), ttlSeconds })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res
}

/**
 * For tests that kill and restart the gateway as a process (test/helpers/child.ts): the simulator
 * in campaign-control mode and the environment of a gateway child in controller mode on a SQLite
 * file in a temp directory of its own, one caller `ops` (read, control, admin; controller id
 * `ctl-ops`) holding `token`. `cleanups` closes the simulator and removes the directory.
 */
export async function sqliteControlChild (cleanups: Array<() => Promise<void> | void>, extraEnv: Record<string, string> = {}): Promise<{ sim: Simulator; token: string; env: Record<string, string> }> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  const sim = await startSimulator({ profile: 'campaign-control', secret })
  cleanups.push(async () => { await sim.close() })
  const dir = mkdtempSync(join(tmpdir(), 'oogw-control-child-'))
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }) })
  const token = `tok-${randomBytes(12).toString('hex')}`
  const env = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name: 'ops', tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-ops' }]),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    // the listen line the tests wait for is at info
    LOG_LEVEL: 'info',
    // no budget in the way: a fast host sends more than the default 600 reads a minute in one
    // crash round, and a 429 on the check after a restart would read as a lost record (CI, stop 32)
    GATEWAY_RATE_LIMIT_READ: '1000000',
    GATEWAY_RATE_LIMIT_CONTROL: '1000000',
    ...extraEnv
  }
  return { sim, token, env }
}
