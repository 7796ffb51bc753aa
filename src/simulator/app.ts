// The simulator's own small Fastify app: records every request to the remote before anything
// else looks at it (the admin routes under /_sim/ are not the remote's, and are not recorded),
// keeps every body as raw text (the routes decide what bad JSON means), and answers unknown
// paths with a plain 404 as Starlette does.
import http from 'node:http'
import type { IncomingMessage } from 'node:http'
import https from 'node:https'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import { ADMIN_PREFIX, adminRoutes } from './routes/admin.js'
import { discoveryRoutes } from './routes/discovery.js'
import { rpcRoutes } from './routes/rpc.js'
import { parseBody } from './rpc/call.js'
import type { SimulatorState } from './state.js'
import type { ReceivedRequest, SimulatorOptions } from './types.js'

export function buildSimulatorApp (state: SimulatorState, tls: SimulatorOptions['tls']): FastifyInstance {
  const app = Fastify({
    logger: false,
    // Close must not wait for a client stuck on an injected delay or an endless body.
    forceCloseConnections: true,
    bodyLimit: 8 * 1024 * 1024,
    // Request and response objects are the same classes for http and https, so the app is
    // typed as a plain http server either way.
    serverFactory: (handler) =>
      tls === undefined ? http.createServer(handler) : (https.createServer({ key: tls.key, cert: tls.cert }, handler) as unknown as http.Server)
  })

  const records = new WeakMap<IncomingMessage, ReceivedRequest>()
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith(`${ADMIN_PREFIX}/`)) return
    const record: ReceivedRequest = { method: request.method, path: request.url, headers: flatten(request.headers), rawBody: '', at: Date.now() }
    state.received.push(record)
    records.set(request.raw, record)
  })

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    const record = records.get(request.raw)
    if (record !== undefined) {
      record.rawBody = text
      const parsed = parseBody(text)
      if (parsed.ok) record.json = parsed.value
    }
    done(null, text)
  })

  app.register(discoveryRoutes(state))
  app.register(rpcRoutes(state))
  app.register(adminRoutes(state), { prefix: ADMIN_PREFIX })
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('Not Found'))
  return app
}

function flatten (headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
