// The A2A front door (docs/api.md#a2a-front-door): the gateway's own agent card (and the key it
// is signed with), and `POST /a2a/`, JSON-RPC on the same core as the REST routes
// (src/front/door.ts). Registered like every route, so authentication, scopes, rate limits, load
// shedding, the access line and the secret guard apply. The body is read as text and framed by
// the core, so that every bad input is a JSON-RPC error; a method sent as a URL path is 404 with
// the error that names the canonical form.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../src/core/errors.js'
import { buildCard, createCardSigner } from '../src/front/card.js'
import { createFrontDoor } from '../src/front/door.js'
import { pathMethodError, versionOf } from '../src/front/framing.js'
import { RPC_CODES } from '../schemas/jsonrpc.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

const a2a: FastifyPluginAsyncZod = async (app) => {
  const config = app.gatewayConfig
  const door = createFrontDoor({
    argus: app.argus,
    control: app.control,
    ledger: app.ledger,
    discovery: app.discovery,
    readTimeoutMs: config.upstream.readTimeoutMs,
    logger: app.log as never
  })
  const { signingKey, publicUrl } = config.frontCard
  const signer = signingKey !== undefined ? createCardSigner(signingKey) : undefined

  // JSON-RPC framing is the core's: the body reaches it as text, whatever it holds
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })

  const card = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let base = publicUrl
    if (base === undefined) {
      // unsigned only: a signed card names GATEWAY_PUBLIC_URL, never a Host header (src/front/signing-key.ts)
      if (!HOST.test(request.host)) throw new GatewayError('invalid_request', { message: 'The Host header is not a host name.' })
      base = `${request.protocol}://${request.host}`
    }
    const v = versionOf(request.headers['a2a-version'])
    const body = buildCard(app.discovery.snapshot(), base, v === '1.0' ? '1.0' : '0.3')
    reply.header('vary', 'A2A-Version').header('cache-control', 'no-cache')
    return reply.type(JSON_TYPE).send(JSON.stringify(signer !== undefined ? await signer.sign(body) : body))
  }
  for (const url of ['/a2a/.well-known/agent-card.json', '/a2a/.well-known/agent.json']) {
    app.get(url, { schema: { hide: true } }, card)
  }

  app.get('/a2a/.well-known/jwks.json', { schema: { hide: true } }, async (_request, reply) => {
    if (signingKey === undefined) throw new GatewayError('not_found', { message: 'The gateway signs no card: GATEWAY_CARD_SIGNING_KEY is not set.' })
    return reply.type(JSON_TYPE).send(JSON.stringify({ keys: [signingKey.publicJwk] }))
  })

  app.post('/a2a/', { config: { scope: 'read' }, schema: { hide: true } }, async (request, reply) => {
    reply.type(JSON_TYPE)
    if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
      app.metrics.frontRequests.inc({ rpc_method: 'invalid', outcome: String(RPC_CODES.invalidRequest) })
      return reply.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RPC_CODES.invalidRequest, message: 'Content-Type must be application/json.' } }))
    }
    const a = await door.handle({ text: typeof request.body === 'string' ? request.body : '', version: request.headers['a2a-version'], caller: request.caller!, chargeControl: async () => { await app.chargeControl(request, reply) } })
    app.metrics.frontRequests.inc({ rpc_method: a.rpcMethod, outcome: a.outcome })
    return reply.send(a.body)
  })

  // message/send, tasks/get … are method names, not paths (the seed's routing warning)
  app.route({
    method: ['GET', 'POST'],
    url: '/a2a/*',
    schema: { hide: true },
    handler: async (request, reply) => reply.code(404).type(JSON_TYPE).send(JSON.stringify({ jsonrpc: '2.0', id: null, error: pathMethodError(request.url) }))
  })
}

export default a2a
