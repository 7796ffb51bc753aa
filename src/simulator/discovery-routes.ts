// Read-only discovery routes (no auth): health, docs, both agent card paths as each profile
// serves them, and the seed's wrong routes, which must fail rather than alias the methods.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { defaultCard } from './card.js'
import { controlExtension } from './control-options.js'
import { DOCS_HTML, FASTA2A_DOCS_HTML, WRONG_ROUTES, a2aDocs } from './docs.js'
import type { RouteName } from './fault-book.js'
import { pause, sendFault } from './fault-replies.js'
import type { SimulatorState } from './state.js'

export function discoveryRoutes(state: SimulatorState): FastifyPluginAsync {
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

    // FastA2A serves agent.json; OpenOperator adds agent-card.json; a2a-js serves only agent-card.json.
    const { profile } = state.opts
    app.get('/a2a/.well-known/agent-card.json', cardHandler(state, 'agent-card', profile !== 'fasta2a'))
    app.get('/a2a/.well-known/agent.json', cardHandler(state, 'agent-json', profile !== 'a2a-js'))

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

export function currentCard(state: SimulatorState): Record<string, unknown> {
  const card = defaultCard(state.origin, {
    argusEnabled: state.opts.argusEnabled,
    authSchemes: state.opts.secret === undefined ? undefined : state.opts.authSchemes
  })
  const { control } = state.opts
  if (control?.advertise === true) {
    const capabilities = card.capabilities as Record<string, unknown>
    card.capabilities = { ...capabilities, extensions: [controlExtension(control)] }
  }
  return state.cardTransform === undefined ? card : state.cardTransform(card)
}

function cardHandler(state: SimulatorState, route: RouteName, served: boolean) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const card = currentCard(state)
    if (await faulted(state, route, request, reply, card)) return reply
    if (!served) return plain(reply, 404, 'Not Found')
    return reply.type('application/json').send(JSON.stringify(card))
  }
}

/** Applies the route's next fault; true when the fault answered (or dropped) the request. */
async function faulted(state: SimulatorState, route: RouteName, request: FastifyRequest, reply: FastifyReply, base: Record<string, unknown>, path?: string): Promise<boolean> {
  const fault = state.faults.takeForRequest({ route, path })
  if (fault === undefined) return false
  if (fault.kind === 'delay') return !(await pause(state, request, reply, fault.ms))
  // rpc-only kinds never reach a GET route (the fault book filters them).
  if (fault.kind === 'wrong-id' || fault.kind === 'hold') return false
  await sendFault(request, reply, fault, base)
  return true
}

function plain(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(text)
}
