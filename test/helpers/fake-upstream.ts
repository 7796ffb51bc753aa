// A scripted stand-in for the upstream client (src/upstream/client.ts), for unit tests that
// run the control plane without sockets. It records every call in order and answers each
// JSON-RPC method from a script: a result, a JSON-RPC error, or a thrown error (an
// UpstreamCallError with nothingSent true or false, or anything else). A scripted answer may
// also be a function of the call, run at the moment the call is made.
import type { GetResult, RpcCall, RpcResult, UpstreamClient } from '../../src/upstream/client.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { CONTROL_EXTENSION_URN } from '../../schemas/card.js'

export type Answer =
  | { result: unknown }
  | { error: { code: number; message?: string; data?: unknown } }
  | { throws: unknown }

export type Scripted = Answer | ((call: RpcCall) => Answer | Promise<Answer>)

export interface FakeUpstream extends UpstreamClient {
  /** every rpc() call, in order, as the caller passed it */
  readonly calls: RpcCall[]
  /** every get() suffix, in order */
  readonly gets: string[]
  /** the answer of every later call of `method` (until replaced) */
  on: (method: string, answer: Scripted) => void
  /** answers for the next calls of `method`, used once each and before the `on` answer */
  once: (method: string, ...answers: Scripted[]) => void
  /** the calls of one method */
  callsOf: (method: string) => RpcCall[]
  /** the calls made with kind 'mutation' that left (not those scripted to fail with nothing sent) */
  mutations: () => RpcCall[]
}

export const CONTROL_METHODS = {
  claim_control: 'campaign/claim_control',
  read_control: 'campaign/read_control',
  renew_control: 'campaign/renew_control',
  release_control: 'campaign/release_control',
  intervene: 'campaign/intervene',
  request_status: 'campaign/request_status',
  cancel: 'tasks/cancel'
} as const

/** a card that advertises campaign control with both enforcement flags and every operation */
export function controlCard (o: { operations?: Record<string, string>; params?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    name: 'fake OpenOperator',
    skills: [],
    capabilities: {
      extensions: [{
        uri: CONTROL_EXTENSION_URN,
        params: {
          lease_epoch_enforced: true,
          policy_enforced: true,
          project_selection: true,
          operations: o.operations ?? { ...CONTROL_METHODS },
          ...o.params
        }
      }]
    }
  }
}

export function createFakeUpstream (o: { card?: unknown } = {}): FakeUpstream {
  const calls: RpcCall[] = []
  const unsent = new Set<RpcCall>()
  const gets: string[] = []
  const defaults = new Map<string, Scripted>()
  const queues = new Map<string, Scripted[]>()
  const card = o.card ?? controlCard()

  async function rpc (call: RpcCall): Promise<RpcResult> {
    // a deep copy: what was sent, even if the caller reuses its objects afterwards
    const copy = structuredClone(call)
    calls.push(copy)
    const scripted = queues.get(call.method)?.shift() ?? defaults.get(call.method)
    if (scripted === undefined) throw new Error(`fake upstream: no answer scripted for ${call.method}`)
    const answer = typeof scripted === 'function' ? await scripted(call) : scripted
    if ('throws' in answer) {
      if (answer.throws instanceof UpstreamCallError && answer.throws.nothingSent) unsent.add(copy)
      throw answer.throws
    }
    if ('error' in answer) return { ok: false, error: { message: 'scripted error', ...answer.error }, httpStatus: 200 }
    return { ok: true, result: answer.result, httpStatus: 200 }
  }

  async function get (suffix: string): Promise<GetResult> {
    gets.push(suffix)
    if (suffix === '/.well-known/agent-card.json') return { status: 200, body: Buffer.from(JSON.stringify(card)), headers: {} }
    return { status: 404, body: Buffer.from(''), headers: {} }
  }

  return {
    calls,
    gets,
    rpc,
    get,
    close: async () => undefined,
    on: (method, answer) => { defaults.set(method, answer) },
    once: (method, ...answers) => {
      const q = queues.get(method) ?? []
      q.push(...answers)
      queues.set(method, q)
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    mutations: () => calls.filter((c) => c.kind === 'mutation' && !unsent.has(c))
  }
}
