// Builders for A2A v1.0 calls, written from the v1.0 wire as a real @a2a-js/sdk 1.x server
// takes it (not from the simulator's own translation), so a misreading on either side shows.
import type { Simulator } from '../../src/simulator/index.js'
import type { HttpAnswer } from './helpers.js'
import { URN, call, rpc } from './helpers.js'
import { mutationParams } from './control-helpers.js'

export const CARD_PATH = '/a2a/.well-known/agent-card.json'
export const V1 = { 'A2A-Version': '1.0' }

/** One JSON-RPC call carrying `A2A-Version: 1.0` (or the version given; null: no header). */
export async function rpc1 (sim: Simulator, method: string, params: unknown, opts: { id?: unknown; version?: string | null } = {}): Promise<HttpAnswer> {
  const version = opts.version === undefined ? '1.0' : opts.version
  return rpc(sim, method, params, { id: opts.id, headers: version === null ? {} : { 'A2A-Version': version } })
}

export async function card (sim: Simulator, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return call(sim, 'GET', CARD_PATH, { headers })
}

/** The seed's Argus envelope in v1.0 shape: no kind, ROLE_USER, a `{data}` part. */
export function argusParams1 (operation: string, requestId = `req-${operation}`, returnImmediately?: boolean): Record<string, unknown> {
  return {
    message: {
      messageId: requestId,
      role: 'ROLE_USER',
      parts: [{ data: { params: {} } }],
      metadata: { [URN]: { operation, requestId } },
      extensions: [URN]
    },
    configuration: { acceptedOutputModes: ['application/json'], ...(returnImmediately === undefined ? {} : { returnImmediately }) }
  }
}

export function textParams1 (text = 'hello', returnImmediately?: boolean): Record<string, unknown> {
  return {
    message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] },
    configuration: { acceptedOutputModes: ['application/json'], ...(returnImmediately === undefined ? {} : { returnImmediately }) }
  }
}

/** The seed's submission on v1.0: SendMessage, returnImmediately, messageId = request id, argus_supervisor metadata. */
export function submitParams1 (epoch: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const supervisor = { ...mutationParams(epoch), ...over }
  return {
    message: {
      messageId: supervisor.request_id,
      role: 'ROLE_USER',
      parts: [{ text: 'run the next stage' }],
      metadata: { argus_supervisor: supervisor }
    },
    configuration: { acceptedOutputModes: ['application/json'], returnImmediately: true }
  }
}

/** The ErrorInfo detail a v1.0 error carries. */
export function errorInfo (reason: string): Array<Record<string, string>> {
  return [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }]
}
