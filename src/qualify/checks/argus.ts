// The Argus extension over A2A: the three reads answered with a payload (FastA2A's "answer
// now with a submitted task, poll later" included), the two refusal codes probed with a
// malformed envelope and an operation that can never exist, and a legacy request_id
// answered with requestId. No payload is ever printed: only what the tool concluded.
import type { Check } from '../context.js'
import { fail, pass } from '../types.js'
import { ARGUS_URN, NONEXISTENT_OPERATION, argusCall, isObject, type ArgusCode, type ArgusOutcome, type Json } from '../wire.js'

const READS: Array<[string, string]> = [
  ['argus_supervisor_health', 'supervisor.health'],
  ['argus_supervisor_status', 'supervisor.status'],
  ['argus_campaign_list', 'campaign.list']
]

function describe (outcome: ArgusOutcome): string {
  if (outcome.kind === 'code') return `the remote answered ${outcome.code}`
  if (outcome.kind === 'failure') return outcome.reason
  return 'the remote answered with a payload'
}

const readChecks: Check[] = READS.map(([name, operation]) => ({
  name,
  run: async (ctx, signal) => {
    const outcome = await argusCall(ctx.rpc, operation, signal)
    ctx.facts.reads.set(operation, outcome)
    if (outcome.kind !== 'payload') return fail(name, `${operation}: ${describe(outcome)}`)
    const echoed = outcome.payload.requestId
    if (echoed !== undefined && echoed !== outcome.id) return fail(name, `${operation}: the payload answers another requestId`)
    return pass(name)
  }
}))

function refusal (name: string, expected: ArgusCode, operation: string, variant: 'canonical' | 'malformed', what: string): Check {
  return {
    name,
    run: async (ctx, signal) => {
      const outcome = await argusCall(ctx.rpc, operation, signal, { variant })
      if (outcome.kind === 'code' && outcome.code === expected) return pass(name)
      if (outcome.kind === 'payload') return fail(name, `${what} was answered as a successful read; expected ${expected}`)
      return fail(name, `${what}: ${describe(outcome)}; expected ${expected}`)
    }
  }
}

/** where the answer names its request id: the payload, or the Argus envelope echoed in the result's metadata */
function requestIdOf (outcome: Extract<ArgusOutcome, { kind: 'payload' }>): { camel: unknown; legacy: unknown } {
  const meta = isObject(outcome.container.metadata) ? outcome.container.metadata[ARGUS_URN] : undefined
  const echo: Json = isObject(meta) ? meta : {}
  return { camel: outcome.payload.requestId ?? echo.requestId, legacy: outcome.payload.request_id ?? echo.request_id }
}

const legacy: Check = {
  name: 'legacy_request_id',
  run: async (ctx, signal) => {
    const name = 'legacy_request_id'
    const outcome = await argusCall(ctx.rpc, 'supervisor.health', signal, { variant: 'legacy' })
    if (outcome.kind !== 'payload') return fail(name, `supervisor.health with a legacy request_id: ${describe(outcome)}`)
    const { camel, legacy: snake } = requestIdOf(outcome)
    if (camel === outcome.id) return pass(name)
    if (snake === outcome.id) return fail(name, 'the answer names the request with request_id, not requestId')
    return fail(name, 'the answer does not carry the requestId sent')
  }
}

export const argusChecks: Check[] = [
  ...readChecks,
  refusal('invalid_argus_envelope', 'invalid_argus_envelope', 'supervisor.health', 'malformed', 'an envelope without its operation'),
  refusal('unsupported_argus_operation', 'unsupported_argus_operation', NONEXISTENT_OPERATION, 'canonical', `the operation ${NONEXISTENT_OPERATION}`),
  legacy
]
