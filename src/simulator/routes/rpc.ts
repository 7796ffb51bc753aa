// POST /a2a/, the only JSON-RPC endpoint: auth, then faults, then the call itself. The
// slash-less /a2a redirects as Starlette does (clients must not follow it), and GET /a2a/
// is not allowed. A call that reaches the handler is applied whether or not its client is
// still there (a delayed or held call whose client gave up still lands, as on a real
// remote); only its answer is then discarded.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { handleRpc, rpcFaultContext } from '../dispatch.js'
import { parseBody } from '../rpc/call.js'
import type { RpcInput } from '../rpc/call.js'
import type { RpcOutcome } from '../rpc/outcome.js'
import type { SimulatorState } from '../state.js'
import { A2A_VERSION_HEADER, rpcWire } from '../wire/protocol.js'
import { isAuthorized } from './auth.js'
import { dropConnection, pause, sendFault } from './fault-replies.js'

export function rpcRoutes (state: SimulatorState): FastifyPluginAsync {
  return async (app) => {
    app.post('/a2a/', async (request, reply) => {
      if (!isAuthorized(request.headers, state.opts.secret, state.opts.authSchemes)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized' })
      }
      const body = parseBody(typeof request.body === 'string' ? request.body : '')
      const ctx = rpcFaultContext(body, state.opts.control)
      const header = request.headers[A2A_VERSION_HEADER]
      const input: RpcInput = { body, ctx, version: Array.isArray(header) ? header.join(', ') : header }
      const rpcId = requestId(body.ok ? body.value : undefined)
      const fault = state.faults.takeForRequest(ctx)
      if (fault?.kind === 'hold') {
        // Accepted, not handled: the connection stays open until a test delivers or drops it.
        const fate = await state.held.hold({ method: ctx.rpcMethod ?? '', id: rpcId }, input)
        if (fate.kind === 'dropped') {
          dropConnection(request, reply)
          return reply
        }
        return answer(state, request, reply, fate.outcome, false)
      }
      if (fault?.kind === 'delay' && !(await pause(state, request, reply, fault.ms))) return reply
      if (fault !== undefined && fault.kind !== 'delay' && fault.kind !== 'drop' && fault.kind !== 'wrong-id') {
        const v1 = rpcWire(state.opts.protocol, input.version) !== '0.3'
        const task = v1 ? { task: { id: 'oversized', contextId: 'oversized', status: { state: 'TASK_STATE_COMPLETED' } } } : { kind: 'task', id: 'oversized', contextId: 'oversized', status: { state: 'completed' } }
        const base = { jsonrpc: '2.0', id: rpcId, result: task }
        await sendFault(request, reply, fault, base, rpcId)
        return reply
      }

      const outcome = handleRpc(state, input)
      // The call was applied; only its answer is lost — the ambiguous write a client must survive.
      if (fault?.kind === 'drop') {
        dropConnection(request, reply)
        return reply
      }
      return answer(state, request, reply, outcome, fault?.kind === 'wrong-id')
    })

    app.route({
      method: ['GET', 'POST'],
      url: '/a2a',
      handler: async (_request, reply) => reply.code(307).header('location', `${state.origin}/a2a/`).send()
    })
    app.get('/a2a/', async (_request, reply) =>
      reply.code(405).header('allow', 'POST').type('text/plain; charset=utf-8').send('Method Not Allowed')
    )
  }
}

/** Writes a handled call's answer; a client that already hung up gets nothing (the call was applied all the same). */
function answer (state: SimulatorState, request: FastifyRequest, reply: FastifyReply, outcome: RpcOutcome, wrongId: boolean): FastifyReply {
  if (request.raw.socket.destroyed) {
    reply.hijack()
    return reply
  }
  if (outcome.kind === 'plain-500') return reply.code(500).type('text/plain; charset=utf-8').send('Internal Server Error')
  const response = wrongId ? { ...outcome.body, id: otherId(outcome.body.id) } : outcome.body
  // the remote's Date is its own clock, as a real server's is: the control clock a test moves
  return reply.code(200).type('application/json').header('date', new Date(state.control.now()).toUTCString()).send(JSON.stringify(response))
}

function requestId (value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null
  return value.id ?? null
}

function otherId (id: unknown): string | number {
  if (typeof id === 'number') return id + 1
  return `${String(id)}-not-yours`
}
