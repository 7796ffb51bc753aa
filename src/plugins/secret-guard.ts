// The last line of defence for the upstream secret (docs/design.md#secret-echo): a remote that
// echoes the credential it was sent (an `Authorization` or `X-API-KEY` value inside a result,
// raw or encoded) must not get it shown to a caller. Every serialised answer is searched for
// every form of the secret (src/secret-match.ts: one regular expression, built once) and an
// answer that carries it is replaced by 502 upstream_invalid_response, logged without the value.
// A secret that occurs in one of the gateway's own fixed answers is refused at start
// (src/config.ts), so that no answer of the gateway's own can be refused for it.
import fp from 'fastify-plugin'
import { GatewayError } from '../errors.js'
import { secretMatcher } from '../secret-match.js'

export default fp(async (app) => {
  const secret = app.gatewayConfig.upstream.secret
  if (secret === undefined || secret === '') return
  const matcher = secretMatcher(secret)
  const refused = JSON.stringify(new GatewayError('upstream_invalid_response').toBody())

  // callback style: no promise per answer (docs/design.md#hot-path)
  app.addHook('onSend', (request, reply, payload, done) => {
    // streams are the gateway's own files (docs), never remote content
    if ((typeof payload !== 'string' && !Buffer.isBuffer(payload)) || !matcher.test(payload)) { done(null, payload); return }
    request.log.error({ route: request.routeOptions.url, status: reply.statusCode }, 'an answer carried the upstream secret: refused')
    reply.code(502).type('application/json').removeHeader('content-length')
    done(null, refused)
  })
}, { name: 'secret-guard', dependencies: ['gateway-config'] })
