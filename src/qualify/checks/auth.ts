// Authentication of POST /a2a/: a call without a credential and a call with a wrong one are
// refused (401/403); the deployment secret is accepted both as `Authorization: Bearer` and as
// `X-API-KEY`. Every probe is the seed's supervisor.health read, so even an accepted call
// that should have been refused changes nothing.
import type { Check } from '../context.js'
import type { ProbeAuth } from '../probe.js'
import { fail, pass } from '../types.js'
import { argusParams, freshId, httpReason, rpc } from '../wire.js'

function accepted (name: string, auth: ProbeAuth, label: string): Check {
  return {
    name,
    run: async (ctx, signal) => {
      const id = freshId('auth')
      const answer = await rpc(ctx.rpc, 'message/send', argusParams('supervisor.health', id), { id, auth, signal, argus: true })
      if (answer.kind === 'http') return fail(name, `the secret sent as ${label}: ${httpReason(answer.status)}`)
      if (answer.kind === 'invalid') return fail(name, `the secret sent as ${label}: ${answer.reason}`)
      return pass(name)
    }
  }
}

const unauthenticated: Check = {
  name: 'unauthenticated_refused',
  run: async (ctx, signal) => {
    const name = 'unauthenticated_refused'
    for (const [auth, label] of [['none', 'no credential'], ['wrong', 'a wrong bearer credential']] as const) {
      const id = freshId('unauthenticated')
      const answer = await rpc(ctx.rpc, 'message/send', argusParams('supervisor.health', id), { id, auth, signal, argus: true })
      if (answer.kind === 'http' && (answer.status === 401 || answer.status === 403)) continue
      if (answer.kind === 'http') return fail(name, `a call with ${label} answered HTTP ${answer.status}; expected 401 or 403`)
      return fail(name, `a call with ${label} was accepted (HTTP 200, ${answer.kind === 'invalid' ? 'an invalid body' : `a JSON-RPC ${answer.kind}`})`)
    }
    return pass(name)
  }
}

export const authChecks: Check[] = [
  unauthenticated,
  accepted('bearer_accepted', 'bearer', 'Authorization: Bearer'),
  accepted('x_api_key_accepted', 'x-api-key', 'X-API-KEY')
]
