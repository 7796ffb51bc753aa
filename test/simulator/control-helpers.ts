// Builders for the campaign-control extension's calls, written from CONTRACT §6 (not from the
// simulator's own constants, so a misreading on either side shows up).
import type { Simulator } from '../../src/simulator/index.js'
import type { HttpAnswer } from './helpers.js'
import { rpc } from './helpers.js'
import { CONTROL_METHODS } from '../helpers/fake-upstream.js'

export const CONSTRAINTS = {
  version: 1,
  execution: 'remote_only',
  allow_publication: false,
  allow_destructive_git: false,
  allow_credential_changes: false,
  allow_force_push: false,
  allow_merge: false
}

/** the seed's method map, the tests' one copy (test/helpers/fake-upstream.ts) */
export const SEED_OPERATIONS = CONTROL_METHODS

export const CAMPAIGN = 'camp-1'
export const ME = 'ctl-me'

let counter = 0
export function newRequestId (prefix = 'req'): string {
  counter += 1
  return `${prefix}-${counter}-${Date.now()}`
}

/** One JSON-RPC call whose id is the request id when there is one (the gateway does the same). */
export async function control (sim: Simulator, method: string, params: Record<string, unknown>): Promise<HttpAnswer> {
  const id = typeof params.request_id === 'string' ? params.request_id : newRequestId('rpc')
  return rpc(sim, method, params, { id })
}

export function claimParams (over: Record<string, unknown> = {}): Record<string, unknown> {
  return { campaign_id: CAMPAIGN, controller_id: ME, ttl_seconds: 60, request_id: newRequestId('claim'), constraints: CONSTRAINTS, ...over }
}

export function mutationParams (epoch: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { campaign_id: CAMPAIGN, controller_id: ME, controller_epoch: epoch, request_id: newRequestId('mut'), constraints: CONSTRAINTS, ...over }
}

/** The seed's submission: non-blocking message/send, messageId = request id, argus_supervisor metadata. */
export function submitParams (epoch: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const supervisor = { ...mutationParams(epoch), ...over }
  return {
    configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
    message: {
      role: 'user',
      kind: 'message',
      messageId: supervisor.request_id,
      parts: [{ kind: 'text', text: 'run the next stage' }],
      metadata: { argus_supervisor: supervisor }
    }
  }
}

export async function claim (sim: Simulator, over: Record<string, unknown> = {}): Promise<{ controller_id: string; epoch: number; expires_at: number }> {
  const answer = await control(sim, SEED_OPERATIONS.claim_control, claimParams(over))
  if (answer.json?.result?.lease === undefined) throw new Error(`claim failed: ${answer.text}`)
  return answer.json.result.lease
}
