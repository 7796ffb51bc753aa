// A JSON-RPC answer read (docs/design.md#upstream-wire-rules): strict framing with the request's
// id, the depth bound, the secret echo refused before anything of the answer is used, and the
// remote's failures logged by code, status, size and digest, never by its text.
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { checkRpcResponse } from '../../../schemas/jsonrpc.js'
import { answerCarriesSecret } from '../../core/secret-match.js'
import { exceedsDepth } from '../json-depth.js'
import { UpstreamCallError } from '../errors.js'
import type { ClientState } from './state.js'
import type { Exchange, RpcResult } from './types.js'

export function parseRpc (s: ClientState, ex: Exchange, id: string, op: string): RpcResult {
  let json: unknown
  let text: string | undefined
  // deeper than the bound would overflow a serializer's stack on the way out (a 500); checked on
  // the text, before parsing (docs/design.md#hot-path)
  const decoded = ex.body.toString('utf8')
  if (!exceedsDepth(decoded, ex.body)) {
    text = decoded
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
  }
  // an answer that carries the secret is invalid, whatever else it says: nothing of it is used,
  // stored or shown, and it is logged by its size alone (docs/design.md#secret-echo)
  if (s.echo !== undefined && answerCarriesSecret(s.echo, text ?? ex.body, json)) {
    s.o.logger.error({ op, httpStatus: ex.status, bodyBytes: ex.body.length }, 'an upstream answer carried the upstream secret: refused as invalid')
    throw new UpstreamCallError('invalid', { httpStatus: ex.status })
  }
  // RpcResponseSchema, checked by hand: the same verdict without zod on every answer (docs/design.md#hot-path)
  const parsed = checkRpcResponse(json)
  if (parsed === undefined || parsed.id !== id) {
    logRemoteFailure(s.o.logger, op, ex.status, ex.body)
    if (ex.status >= 200 && ex.status < 300) throw new UpstreamCallError('invalid', { httpStatus: ex.status })
    throw new UpstreamCallError('http_status', { httpStatus: ex.status })
  }
  if ('error' in parsed) {
    logRemoteFailure(s.o.logger, op, ex.status, ex.body, parsed.error.code)
    return { ok: false, error: parsed.error, httpStatus: ex.status }
  }
  if (ex.status < 200 || ex.status >= 300) {
    logRemoteFailure(s.o.logger, op, ex.status, ex.body)
    throw new UpstreamCallError('http_status', { httpStatus: ex.status })
  }
  return { ok: true, result: parsed.result, httpStatus: ex.status }
}

function logRemoteFailure (logger: Logger, op: string, status: number, body: Buffer, remoteCode?: number): void {
  // never the remote's text: its code, HTTP status, size and digest are enough to correlate
  logger.warn({
    op,
    remoteCode,
    httpStatus: status,
    bodyBytes: body.length,
    bodySha256: createHash('sha256').update(body).digest('hex')
  }, 'upstream answered with an error')
}
