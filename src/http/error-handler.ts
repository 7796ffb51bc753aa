// One error handler (docs/design.md#errors, STYLE): every failure leaves as
// {"error":{"code","message","retryable",...}} with a contract code and a message the gateway
// wrote. A 5xx never carries the original message; nothing remote is ever echoed.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply } from 'fastify'
import { isResponseSerializationError } from 'fastify-type-provider-zod'
import { GatewayError, isGatewayError } from '../core/errors.js'
import { safeErrorCode, toGatewayError } from './errors.js'

function send (reply: FastifyReply, err: GatewayError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
  return reply.code(err.statusCode).type('application/json').send(err.toBody())
}

export default fp(async (app) => {
  app.setErrorHandler((err, request, reply) => {
    const ge = toGatewayError(err)
    if (ge.code === 'internal_error') {
      request.log.error({ err: isResponseSerializationError(err) ? { name: err.name } : err }, 'unhandled error')
    } else if (ge.statusCode >= 500) {
      request.log.warn({ code: ge.code }, 'request failed')
    } else if (!isGatewayError(err)) {
      // a refusal the gateway did not write itself: worth a trace, never an error line
      request.log.debug({ code: ge.code, cause: safeErrorCode((err as FastifyError).code) }, 'request refused')
    }
    return send(reply, ge)
  })
  app.setNotFoundHandler((_request, reply) => send(reply, new GatewayError('not_found', { message: 'No such route.' })))
}, { name: 'error-handler' })
