// Shared helpers of the simulator's tests: real HTTP calls through undici, the recorded
// fixtures of real A2A servers, and the seed's exact Argus envelope.
import { readFileSync } from 'node:fs'
import { request } from 'undici'
import type { Dispatcher } from 'undici'
import { afterEach } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js'

// the recorded answers of real servers, copied into the repo from shared/fixtures
export const FIXTURES = new URL('../fixtures/recorded/', import.meta.url)
export const URN = 'urn:openoperator:argus-supervisor:v1'

/** a simulator per test, closed after it */
export function useSimulator (): (opts?: SimulatorOptions) => Promise<Simulator> {
  let sim: Simulator | undefined
  afterEach(async () => {
    await sim?.close()
    sim = undefined
  })
  return async (opts = {}) => {
    sim = await startSimulator(opts)
    return sim
  }
}

export function fixture (path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8')
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are free-form JSON
export function fixtureJson (path: string): any {
  return JSON.parse(fixture(path))
}

export interface HttpAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into answers freely
  json: any
}

export async function call (sim: Simulator, method: Dispatcher.HttpMethod, path: string, opts: { body?: string; headers?: Record<string, string>; dispatcher?: Dispatcher } = {}): Promise<HttpAnswer> {
  const res = await request(`${sim.url}${path}`, { method, body: opts.body, headers: opts.headers, dispatcher: opts.dispatcher })
  const text = await res.body.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.statusCode, headers: res.headers, text, json }
}

export async function rpc (sim: Simulator, method: string, params: unknown, opts: { id?: unknown; headers?: Record<string, string> } = {}): Promise<HttpAnswer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: opts.id ?? `${method}-1`, method, params })
  return call(sim, 'POST', '/a2a/', { body, headers: { 'content-type': 'application/json', ...opts.headers } })
}

/** The seed's exact Argus envelope for one read. */
export function argusParams (operation: string, requestId = `req-${operation}`, blocking = true): Record<string, unknown> {
  return {
    configuration: { blocking, acceptedOutputModes: ['application/json'] },
    message: {
      role: 'user',
      kind: 'message',
      messageId: requestId,
      extensions: [URN],
      metadata: { [URN]: { operation, requestId } },
      parts: [{ kind: 'data', data: { params: {} } }]
    }
  }
}

export function plainParams (text = 'hello', metadata?: Record<string, unknown>): Record<string, unknown> {
  return {
    configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
    message: { role: 'user', kind: 'message', messageId: `m-${text}`, parts: [{ kind: 'text', text }], ...(metadata ? { metadata } : {}) }
  }
}

/** Polls tasks/get until the task leaves submitted/working (bounded). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function pollTask (sim: Simulator, id: string, max = 10): Promise<any[]> {
  const seen = []
  for (let i = 0; i < max; i++) {
    const answer = await rpc(sim, 'tasks/get', { id, historyLength: 0 })
    seen.push(answer.json.result)
    if (!['submitted', 'working'].includes(answer.json.result.status.state)) break
  }
  return seen
}

/** Sorted keys of an object, for comparing shapes with fixtures. */
export function keys (value: object): string[] {
  return Object.keys(value).sort()
}
