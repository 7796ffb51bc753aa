// One error handler (docs/design.md#errors, STYLE): every failure leaves as
// {"error":{"code","message","retryable",...}} with a contract code and a message the gateway
// wrote. A 5xx never carries the original message; nothing remote is ever echoed.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifySchemaCompiler } from 'fastify'
import { isResponseSerializationError } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { GatewayError, isGatewayError, type ErrorCode } from '../errors.js'
import { invalidRequest, parseReadable, type RequestPart } from '../validation.js'

function send (reply: FastifyReply, err: GatewayError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
  return reply.code(err.statusCode).type('application/json').send(err.toBody())
}

/**
 * The routes' validator (instead of fastify-type-provider-zod's): a refused body, query, path or
 * header is already the contract's 400, its message naming each problem (src/validation.ts)
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => (data) => {
  const r = parseReadable(schema, data)
  return r.success ? { value: r.data } : { error: invalidRequest(r.issues, (httpPart ?? 'body') as RequestPart) }
}

export function toGatewayError (err: unknown): GatewayError {
  if (isGatewayError(err)) return err
  const e = err as FastifyError
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', { message: 'The request body exceeds 64 KiB.', cause: err })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('invalid_request', { message: 'The body must be application/json.', cause: err })
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', { message: 'The body is not valid JSON.', cause: err })
  }
  if (e.validation !== undefined) return new GatewayError('invalid_request', { cause: err })
  // no descriptor left (a static file, anything a request opens): the process is saturated, not
  // broken — retryable, like the event-loop shedding (docs/design.md#http-edges)
  if (DESCRIPTORS_EXHAUSTED.has((err as NodeJS.ErrnoException).code ?? '')) {
    return new GatewayError('overloaded', { headers: { 'retry-after': '1' }, cause: err })
  }
  // a plugin's 4xx (the static files' 403 for `..`) is the caller's mistake, not a bug
  const status = e.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = CLIENT_STATUS[status]
    return new GatewayError(known?.code ?? 'invalid_request', { message: known?.message, cause: err })
  }
  return new GatewayError('internal_error', { cause: err })
}

const DESCRIPTORS_EXHAUSTED: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE'])

/** the contract's code for a 4xx a plugin or Fastify raised; any other 4xx is 400 invalid_request */
const CLIENT_STATUS: Partial<Record<number, { code: ErrorCode; message?: string }>> = {
  400: { code: 'invalid_request' },
  403: { code: 'forbidden', message: 'Access to this resource is forbidden.' },
  404: { code: 'not_found' },
  408: { code: 'request_timeout' },
  413: { code: 'payload_too_large' },
  414: { code: 'uri_too_long' },
  417: { code: 'expectation_failed' },
  429: { code: 'rate_limited' },
  431: { code: 'header_too_large' }
}

/** a plugin's or Fastify's error code, when it is one (never text the caller could have chosen) */
export const safeErrorCode = (code: unknown): string | undefined =>
  typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : undefined

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
