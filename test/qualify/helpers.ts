// Shared helpers of the qualification tests: run the command in-process against a simulator
// and read its lines back; prove afterwards that the simulator saw only reads.
import { expect } from 'vitest'
import { runQualifyCommand } from '../../src/qualify/command.js'
import { DEFAULT_SOURCE_SHA, type Simulator } from '../../src/simulator/index.js'

export const URN = 'urn:openoperator:argus-supervisor:v1'
export const READ_OPERATIONS = new Set(['supervisor.health', 'supervisor.status', 'campaign.list'])

export interface QualifyRun {
  code: number
  out: string
  err: string
  /** status by assertion name, from the printed lines */
  status: Record<string, string>
  /** reason by assertion name */
  reason: Record<string, string>
}

export function envFor (sim: Simulator, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: sim.secret ?? 'qualify-test-secret',
    EXPECTED_SOURCE_SHA: DEFAULT_SOURCE_SHA,
    UPSTREAM_READ_TIMEOUT_MS: '4000',
    UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
    ...extra
  }
}

export async function qualify (env: Record<string, string | undefined>, argv: string[] = []): Promise<QualifyRun> {
  let out = ''
  let err = ''
  const code = await runQualifyCommand(argv, env, { out: (l) => { out += `${l}\n` }, err: (l) => { err += `${l}\n` } })
  const status: Record<string, string> = {}
  const reason: Record<string, string> = {}
  for (const line of out.split('\n')) {
    const m = /^(PASS|FAIL|SKIP) ([a-z0-9_]+)(?:: (.*))?$/.exec(line)
    if (m === null) continue
    status[m[2]!] = m[1]!
    if (m[3] !== undefined) reason[m[2]!] = m[3]
  }
  return { code, out, err, status, reason }
}

/** the assertion names that did not PASS, with their status */
export function notPassed (run: QualifyRun): Record<string, string> {
  return Object.fromEntries(Object.entries(run.status).filter(([, s]) => s !== 'PASS'))
}

/**
 * Nothing the simulator received could change anything: every JSON-RPC call is a tasks/get or
 * a message/send carrying the Argus envelope (never a plain message, which would run the model,
 * nor a planned campaign.* operation), no tasks/cancel or campaign-control method reached it,
 * and its campaign-control book applied nothing.
 */
export function expectOnlyReads (sim: Simulator): void {
  const calls = sim.rpcCalls()
  expect(calls.length).toBeGreaterThan(0)
  for (const call of calls) {
    // the v0.3 names, or their v1.0 names on a v1.0 remote (docs/design.md#protocol-versions)
    expect(['message/send', 'tasks/get', 'SendMessage', 'GetTask']).toContain(call.method)
    if (call.method !== 'message/send' && call.method !== 'SendMessage') continue
    const envelope = call.params?.message?.metadata?.[URN]
    expect(envelope, 'every message/send carries the Argus envelope').toBeTypeOf('object')
    expect(call.params.message.metadata.argus_supervisor).toBeUndefined()
    const operation = envelope.operation
    if (operation !== undefined) expect(READ_OPERATIONS.has(operation) || operation === 'qualify.nonexistent', String(operation)).toBe(true)
  }
  for (const r of sim.received) {
    // the only POSTs elsewhere are the wrong-route probes, whose body is `{}`
    if (r.method === 'POST' && r.path !== '/a2a/') expect(r.rawBody).toBe('{}')
    expect(['GET', 'POST']).toContain(r.method)
  }
  expect(sim.control.applied()).toEqual([])
  expect(sim.control.requestCounts().size).toBe(0)
}
