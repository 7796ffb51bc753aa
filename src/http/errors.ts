// A failure as the contract's error (docs/design.md#errors): the routes' validator and the mapping
// of anything thrown — a Fastify or plugin error, a descriptor shortage, a bug — to a GatewayError
// whose message the gateway wrote. Plain functions: the error-handler plugin and the HTTP edges
// both use them.
import type { FastifyError, FastifySchemaCompiler } from 'fastify'
import type { z } from 'zod'
import { GatewayError, isGatewayError, type ErrorCode } from '../core/errors.js'
import { invalidRequest, parseReadable, type RequestPart } from '../core/validation.js'

/**
 * The routes' validator (instead of fastify-type-provider-zod's): a refused body, query, path or
 * header is already the contract's 400, its message naming each problem (src/core/validation.ts)
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
