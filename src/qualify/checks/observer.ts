// The seed's observer-chain check, with --observer-task ID: that existing task is read with
// tasks/get (historyLength 0) and its argus_supervisor metadata must carry no controller
// identity or epoch — an observer deployment never had a controller. And a closing SKIP that
// says what this read-only smoke never qualifies: campaign-control mutations.
import type { Check } from '../context.js'
import { fail, pass, skip } from '../types.js'
import { httpReason, isObject, rpc, rpcCodeText } from '../wire.js'

const CONTROL_URN = 'urn:openoperator:campaign-control:v1'
const MAX_DEPTH = 64

/** a key naming a controller or a lease, at any depth (folded: case, `_` and `-` ignored) */
function carriesController (value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (depth > MAX_DEPTH) return true // deeper than any honest metadata: refuse to vouch for it
    if (Array.isArray(v)) for (const x of v) stack.push([x, depth + 1])
    else if (isObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        const folded = k.toLowerCase().replace(/[_-]/g, '')
        if (folded.includes('controller') || folded === 'lease' || folded === 'leaseepoch') return true
        stack.push([x, depth + 1])
      }
    }
  }
  return false
}

const observerChain: Check = {
  name: 'observer_chain',
  run: async (ctx, signal) => {
    const name = 'observer_chain'
    const id = ctx.observerTask
    if (id === undefined) return skip(name, 'no --observer-task given (it needs an existing production observer task)')
    const answer = await rpc(ctx.rpc, 'tasks/get', { id, historyLength: 0 }, { signal })
    if (answer.kind === 'http') return fail(name, `tasks/get ${httpReason(answer.status)}`)
    if (answer.kind === 'invalid') return fail(name, `tasks/get: ${answer.reason}`)
    if (answer.kind === 'error') return fail(name, answer.code === -32001 ? 'the observer task was not found (-32001)' : `tasks/get: JSON-RPC error ${rpcCodeText(answer.code)}`)
    const task = answer.result
    if (!isObject(task) || task.id !== id) return fail(name, 'tasks/get did not answer the task asked for')
    const supervisor = isObject(task.metadata) ? task.metadata.argus_supervisor : undefined
    if (!isObject(supervisor)) return fail(name, 'the task carries no argus_supervisor metadata: not an observer task')
    if (carriesController(supervisor)) return fail(name, 'the task\'s argus_supervisor metadata carries a controller identity or epoch')
    return pass(name)
  }
}

const campaignControl: Check = {
  name: 'campaign_control',
  run: async (ctx) => {
    const advertised = ctx.facts.cards.some((c) => {
      const ext = isObject(c.card.capabilities) ? c.card.capabilities.extensions : undefined
      return Array.isArray(ext) && ext.some((e) => isObject(e) && e.uri === CONTROL_URN)
    })
    return skip('campaign_control', `this read-only smoke never qualifies campaign-control mutations; the card ${advertised ? 'advertises' : 'does not advertise'} ${CONTROL_URN}. Keep GATEWAY_CONTROL_ENABLED=false until control support is qualified`)
  }
}

export const observerChecks: Check[] = [observerChain, campaignControl]
