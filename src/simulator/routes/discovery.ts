// Read-only discovery routes (no auth): health, docs, both agent card paths as each profile
// (and, on v1.0, the SDK) serves them, and the seed's wrong routes, which must fail rather
// than alias the methods. A card answer is built, signed, tampered with if a test asks,
// then cached by ETag (card-serving.ts).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { RouteName } from '../books/fault-book.js'
import { PROFILES } from '../profiles.js'
import type { SimulatorState } from '../state.js'
import { A2A_VERSION_HEADER, cardWire } from '../wire/protocol.js'
import { cardBody, currentCard, sendCard } from './card-serving.js'
import { DOCS_HTML, FASTA2A_DOCS_HTML, WRONG_ROUTES, a2aDocs } from './docs.js'
import { pause, sendFault } from './fault-replies.js'

export function discoveryRoutes (state: SimulatorState): FastifyPluginAsync {
  return async (app) => {
    app.get('/health', async (request, reply) => {
      const body = { status: 'ok', source_sha: state.opts.sourceSha }
      if (await faulted(state, 'health', request, reply, body)) return reply
      return reply.send(body)
    })

    app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML))
    app.get('/docs/a2a.json', async (request, reply) => {
      const body = a2aDocs(state.opts)
      if (await faulted(state, 'a2a-docs', request, reply, body)) return reply
      return reply.send(body)
    })
    app.get('/a2a/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(FASTA2A_DOCS_HTML))

    // FastA2A serves agent.json; OpenOperator adds agent-card.json; a2a-js serves only
    // agent-card.json, and so does any v1.0 server (agent.json is the v0.2 path).
    const profile = PROFILES[state.opts.profile]
    const v1 = state.opts.protocol !== 'v0.3'
    app.get(AGENT_CARD, cardHandler(state, 'agent-card', AGENT_CARD, v1 || profile.agentCardPath))
    app.get(AGENT_JSON, cardHandler(state, 'agent-json', AGENT_JSON, !v1 && profile.agentJsonPath))

    // a `wrongRoute` fault plays a misrouted server that answers one of them
    for (const url of WRONG_ROUTES) {
      app.get(url, async (request, reply) => {
        if (await faulted(state, 'wrong-route', request, reply, {}, url)) return reply
        return plain(reply, 404, 'Not Found')
      })
      app.post(url, async (request, reply) => {
        if (await faulted(state, 'wrong-route', request, reply, {}, url)) return reply
        return plain(reply.header('allow', 'GET'), 405, 'Method Not Allowed')
      })
    }
  }
}

const AGENT_CARD = '/a2a/.well-known/agent-card.json'
const AGENT_JSON = '/a2a/.well-known/agent.json'

function cardHandler (state: SimulatorState, route: RouteName, path: string, served: boolean) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const version = cardWire(state.opts.protocol, headerOf(request, A2A_VERSION_HEADER))
    if (await faulted(state, route, request, reply, () => currentCard(state, version))) return reply
    if (!served) {
      countCard(state, path, 404)
      return plain(reply, 404, 'Not Found')
    }
    const status = sendCard(state, request, reply, await cardBody(state, version))
    countCard(state, path, status)
    return reply
  }
}

function countCard (state: SimulatorState, path: string, status: number): void {
  const counts = (state.cardCounts[path] ??= {})
  counts[status] = (counts[status] ?? 0) + 1
}

function headerOf (request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** Applies the route's next fault; true when the fault answered (or dropped) the request. */
async function faulted (state: SimulatorState, route: RouteName, request: FastifyRequest, reply: FastifyReply, base: Record<string, unknown> | (() => Record<string, unknown>), path?: string): Promise<boolean> {
  const fault = state.faults.takeForRequest({ route, path })
  if (fault === undefined) return false
  if (fault.kind === 'delay') return !(await pause(state, request, reply, fault.ms))
  // rpc-only kinds never reach a GET route (the fault book filters them).
  if (fault.kind === 'wrong-id' || fault.kind === 'hold') return false
  await sendFault(request, reply, fault, typeof base === 'function' ? base() : base)
  return true
}

function plain (reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(text)
}
