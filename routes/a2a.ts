// The A2A front door (docs/api.md#a2a-front-door): the gateway's own agent card (and the key it
// is signed with), and `POST /a2a/`, JSON-RPC on the same core as the REST routes
// (src/front/door.ts). Registered like every route, so authentication, scopes, rate limits, load
// shedding, the access line and the secret guard apply. The body is read as text and framed by
// the core, so that every bad input is a JSON-RPC error; a method sent as a URL path is 404 with
// the error that names the canonical form. With tracing on, each POST is an A2A SERVER span
// (src/tracing/front.ts, handed in: nothing of OpenTelemetry is loaded while tracing is off).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { GatewayError } from '../src/core/errors.js'
import { buildCard, createCardSigner, GATEWAY_AGENT } from '../src/front/card.js'
import { createFrontDoor, type FrontAnswer } from '../src/front/door.js'
import type { Tracing } from '../src/tracing/sdk.js'
import { requestOrigin } from '../src/front/card-url.js'
import { framingError, wireError } from '../src/front/errors.js'
import { pathMethodError, shapeOf, versionOf } from '../src/front/framing.js'
import { RPC_CODES } from '../schemas/jsonrpc.js'
import { A2aAgentCardSchema, A2aJwksSchema, A2aRequestSchema, A2aResponseSchema } from '../schemas/front.js'
import { answers, AUTHENTICATED, WITH_BODY } from '../schemas/responses.js'
import type { ErrorCode } from '../src/core/errors.js'

const JSON_TYPE = 'application/json; charset=utf-8'
/** what a route without a scope can still answer: a bad Host, the HTTP edges, load shedding, a bug */
const PUBLIC: readonly ErrorCode[] = ['invalid_request', 'request_timeout', 'expectation_failed', 'header_too_large', 'internal_error', 'overloaded', 'shutting_down', 'connection_closing']
const A2A_VERSION = z.object({ 'a2a-version': z.string().optional().describe('`1.0` for v1.0\'s method names and shapes; none or `0.3` for v0.3\'s.') })
/** the core reads the body itself: the schema is the document's, never a validator */
const documentedOnly = (): (() => true) => () => true

export interface A2aRouteOptions {
  /** the SERVER span per request around the door's answer, when tracing is on */
  traceFrontDoor?: Tracing['traceFrontDoor'] | undefined
}

const a2a: FastifyPluginAsyncZod<A2aRouteOptions> = async (app, opts) => {
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
  // the key proves itself here, before the gateway listens: one that cannot sign stops the start
  const signer = signingKey !== undefined ? await createCardSigner(signingKey) : undefined

  // JSON-RPC framing is the core's: the body reaches it as text, whatever it holds
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })

  const card = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let base = publicUrl
    const vary = ['A2A-Version']
    if (base === undefined) {
      // unsigned only: a signed card names GATEWAY_PUBLIC_URL, never a Host header (src/config/signing-key.ts)
      const from = requestOrigin({ protocol: request.protocol, host: request.host, hostHeader: request.headers.host, encrypted: (request.socket as { encrypted?: boolean }).encrypted === true, trustProxy: config.trustProxy !== false })
      if (from === undefined) throw new GatewayError('invalid_request', { message: 'The Host header is not a host name.' })
      base = from.origin
      vary.push(...from.vary)
    }
    const v = versionOf(request.headers['a2a-version'])
    const body = buildCard(app.discovery.snapshot(), base, v === '1.0' ? '1.0' : '0.3')
    reply.header('vary', vary.join(', ')).header('cache-control', 'no-cache')
    return reply.type(JSON_TYPE).send(JSON.stringify(signer !== undefined ? await signer.sign(body) : body))
  }
  const cardDoc = (operationId: string, summary: string) => ({
    operationId,
    tags: ['a2a'],
    summary,
    security: [],
    description: 'Needs no token. The gateway\'s own card: its URL, bearer security, the remote\'s Argus skills, the campaign-control extension in controller mode; signed with GATEWAY_CARD_SIGNING_KEY (docs/api.md#a2a-front-door).',
    headers: A2A_VERSION,
    ...answers({ 200: { schema: A2aAgentCardSchema, description: 'The card, v1.0\'s shape to `A2A-Version: 1.0`, v0.3\'s otherwise.' } }, PUBLIC)
  })
  app.get('/a2a/.well-known/agent-card.json', { schema: cardDoc('getAgentCard', 'The gateway\'s A2A agent card') }, card)
  app.get('/a2a/.well-known/agent.json', { schema: cardDoc('getAgentCardAtOldPath', 'The gateway\'s A2A agent card, at its older path') }, card)

  app.get('/a2a/.well-known/jwks.json', {
    schema: {
      operationId: 'getAgentCardKeys',
      tags: ['a2a'],
      security: [],
      summary: 'The key the gateway\'s card is signed with',
      description: 'Needs no token. A JWKS with the public key of GATEWAY_CARD_SIGNING_KEY, to pin; 404 when the gateway signs no card.',
      ...answers({ 200: { schema: A2aJwksSchema, description: 'The public key.' } }, [...PUBLIC, 'not_found'])
    }
  }, async (_request, reply) => {
    if (signingKey === undefined) throw new GatewayError('not_found', { message: 'The gateway signs no card: GATEWAY_CARD_SIGNING_KEY is not set.' })
    return reply.type(JSON_TYPE).send(JSON.stringify({ keys: [signingKey.publicJwk] }))
  })

  /** one POST's answer: the door's, or the refusal of a body that is not JSON */
  const answerOf = async (request: FastifyRequest, reply: FastifyReply): Promise<FrontAnswer> => {
    if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
      const error = wireError(framingError(RPC_CODES.invalidRequest, 'invalid_request', 'Content-Type must be application/json.'), shapeOf(request.headers['a2a-version']))
      return { body: JSON.stringify({ jsonrpc: '2.0', id: null, error }), rpcMethod: 'invalid', outcome: String(RPC_CODES.invalidRequest), rpcErrorCode: RPC_CODES.invalidRequest }
    }
    return await door.handle({ text: typeof request.body === 'string' ? request.body : '', version: request.headers['a2a-version'], caller: request.caller!, chargeControl: async () => { await app.chargeControl(request, reply) } })
  }
  const answer = opts.traceFrontDoor?.(answerOf, { agent: GATEWAY_AGENT, publicUrl }) ?? answerOf

  app.post('/a2a/', {
    config: { scope: 'read' },
    validatorCompiler: documentedOnly,
    schema: {
      operationId: 'callAgent',
      tags: ['a2a'],
      summary: 'One A2A JSON-RPC request',
      description: 'The Argus reads, tasks and (with the `control` scope, in controller mode) submissions, cancels and the campaign methods, on the same core as the REST routes: single-shot on the ledger, tasks scoped to the caller who made them. Every JSON-RPC outcome, error included, is a 200 whose body is the JSON-RPC answer; a front-door mutation also counts against the control budget (docs/api.md#a2a-front-door).',
      headers: A2A_VERSION,
      body: A2aRequestSchema,
      ...answers({ 200: { schema: A2aResponseSchema, description: 'The JSON-RPC answer: its `result`, or its `error` with the contract code in `error.data`.' } }, [...AUTHENTICATED, ...WITH_BODY])
    }
  }, async (request, reply) => {
    reply.type(JSON_TYPE)
    const a = await answer(request, reply)
    app.metrics.frontRequests.inc({ rpc_method: a.rpcMethod, outcome: a.outcome })
    return reply.send(a.body)
  })

  // message/send, tasks/get … are method names, not paths (the seed's routing warning)
  app.route({
    method: ['GET', 'POST'],
    url: '/a2a/*',
    schema: { hide: true },
    handler: async (request, reply) => reply.code(404).type(JSON_TYPE).send(JSON.stringify({ jsonrpc: '2.0', id: null, error: wireError(pathMethodError(request.url), shapeOf(request.headers['a2a-version'])) }))
  })
}

export default a2a
