// The last line of defence for the upstream secret (docs/design.md#secret-echo): a remote that
// echoes the credential it was sent (an `Authorization` or `X-API-KEY` value inside a result,
// raw or encoded) must not get it shown to a caller. Every serialised answer is searched for
// every form of the secret (src/core/secret-match.ts, built once) and an answer that carries it is
// replaced by 502 upstream_invalid_response, logged without the value. A secret that occurs in
// one of the gateway's own fixed answers is refused at start (src/config/upstream.ts), so that no answer
// of the gateway's own can be refused for it.
//
// One kind of answer is not searched twice (docs/design.md#hot-path): an answer a route marks
// `fromScannedRemote` is made only of values of a remote answer the upstream client searched as it
// came in (answerCarriesSecret) and of the gateway's fixed text; where that search covers
// everything such an answer can hold (entryScanSuffices, judged once per secret), it goes out as it is.
// Nor is the same text: the last string found clean (up to 64 KiB, so no large answer is kept
// alive) passes again without a search — the verdict depends on the text alone, and coalesced
// reads hand every waiter the one string (src/http/trusted-serializer.ts).
import fp from 'fastify-plugin'
import { GatewayError } from '../core/errors.js'
import { entryScanSuffices, secretMatcher } from '../core/secret-match.js'

declare module 'fastify' {
  interface FastifyReply {
    /** set by a route whose answer is only the remote's searched values and fixed text (the task projection) */
    fromScannedRemote: boolean
  }
}

export default fp(async (app) => {
  app.decorateReply('fromScannedRemote', false)
  const secret = app.gatewayConfig.upstream.secret
  if (secret === undefined || secret === '') return
  const matcher = secretMatcher(secret)
  const searchedOnce = entryScanSuffices(secret)
  const refused = JSON.stringify(new GatewayError('upstream_invalid_response').toBody())
  let lastClean: string | undefined

  // callback style: no promise per answer (docs/design.md#hot-path)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (searchedOnce && reply.fromScannedRemote) { done(null, payload); return }
    // streams are the gateway's own files (docs), never remote content
    if (typeof payload === 'string') {
      if (payload === lastClean) { done(null, payload); return }
      if (!matcher.test(payload)) {
        if (payload.length <= REMEMBERED_MAX) lastClean = payload
        done(null, payload)
        return
      }
    } else if (!Buffer.isBuffer(payload) || !matcher.test(payload)) { done(null, payload); return }
    request.log.error({ route: request.routeOptions.url, status: reply.statusCode }, 'an answer carried the upstream secret: refused')
    reply.code(502).type('application/json').removeHeader('content-length')
    done(null, refused)
  })
}, { name: 'secret-guard', dependencies: ['gateway-config'] })

/** the longest answer text remembered as clean */
const REMEMBERED_MAX = 64 * 1024
