// The seed's wrong routes: message/send, tasks/get and tasks/cancel are JSON-RPC method names,
// not URL paths, and /a2a/agent-card is not a card. Each must answer 404 or 405 to GET and to
// POST (with the credential, as a confused client would send it). The POST body is `{}`: even
// a server that wrongly aliased a path to its method would get no task id and no message.
import type { Check } from '../context.js'
import { fail, pass } from '../types.js'

// the issue names tasks/cancel, the seed names agent-card: both are probed
const WRONG_ROUTES: Array<[string, string]> = [
  ['wrong_route_message_send', '/a2a/message/send'],
  ['wrong_route_tasks_get', '/a2a/tasks/get'],
  ['wrong_route_tasks_cancel', '/a2a/tasks/cancel'],
  ['wrong_route_agent_card', '/a2a/agent-card']
]

export const routeChecks: Check[] = WRONG_ROUTES.map(([name, path]) => ({
  name,
  run: async (ctx, signal) => {
    for (const method of ['GET', 'POST'] as const) {
      const answer = await ctx.probe.send({ method, path: ctx.at(path), auth: 'configured', body: method === 'POST' ? '{}' : undefined, maxBytes: 64 * 1024, signal })
      if (answer.status !== 404 && answer.status !== 405) return fail(name, `${method} ${path} answered HTTP ${answer.status}; expected 404 or 405`)
    }
    return pass(name)
  }
}))
