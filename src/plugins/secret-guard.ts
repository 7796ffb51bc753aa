// The last line of defence for the upstream secret (docs/design.md#secret-echo): a remote that
// echoes the credential it was sent (an `Authorization` or `X-API-KEY` value inside a result)
// must not get it shown to a caller. Every serialised answer is searched for the secret, raw and
// JSON-escaped — one indexOf on the payload, cheap on the hot path — and an answer that carries
// it is replaced by 502 upstream_invalid_response, logged without the value.
import fp from 'fastify-plugin'
import { GatewayError } from '../errors.js'

/** the forms the secret can take inside a serialised JSON answer */
export function secretForms (secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1)
  return escaped === secret ? [secret] : [secret, escaped]
}

export function carriesSecret (payload: unknown, forms: readonly string[]): boolean {
  if (typeof payload === 'string') return forms.some((f) => payload.includes(f))
  if (Buffer.isBuffer(payload)) return forms.some((f) => payload.includes(f))
  // streams are the gateway's own files (docs), never remote content
  return false
}

export default fp(async (app) => {
  const secret = app.gatewayConfig.upstream.secret
  if (secret === undefined || secret === '') return
  const forms = secretForms(secret)
  const refused = JSON.stringify(new GatewayError('upstream_invalid_response').toBody())
  // callback style: no promise per answer (docs/design.md#hot-path)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!carriesSecret(payload, forms)) { done(null, payload); return }
    request.log.error({ route: request.routeOptions.url, status: reply.statusCode }, 'an answer carried the upstream secret: refused')
    reply.code(502).type('application/json').removeHeader('content-length')
    done(null, refused)
  })
}, { name: 'secret-guard', dependencies: ['gateway-config'] })
