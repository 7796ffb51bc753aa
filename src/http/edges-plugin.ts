// The per-request part of the HTTP edges (docs/design.md#http-edges). What Node used to refuse
// itself with a bodiless answer is refused here, in the contract's shape and counted like any
// answer: a missing Host (400), an Expect other than 100-continue (417), a request pipelined past
// GATEWAY_MAX_REQUESTS_PER_SOCKET (503 `connection_closing`, nothing done). A socket that is to
// end — its request limit reached, one of these refusals, the drain (docs/design.md#shutdown) —
// ends with the answer to the last request received on it: `Connection: close` goes on that
// answer only, so no answer pipelined behind another is cut off, and a request that arrives
// after it is refused unprocessed.
import fp from 'fastify-plugin'
import { GatewayError } from '../core/errors.js'
import { closeIfLast, closeSent, closeWhenAnswered, closingSocket, requestSeq } from './edges.js'

/** what Node itself honours (its `continueExpression`) */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

export default fp(async (app) => {
  const max = app.gatewayConfig.http.maxRequestsPerSocket
  // callback-style hooks on the hot path (docs/design.md#hot-path)
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw
    if ((max > 0 && requestSeq(raw) > max) || closeSent(raw)) {
      done(new GatewayError('connection_closing'))
      return
    }
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) {
      if (raw.headers.host === undefined) {
        closeWhenAnswered(raw)
        done(new GatewayError('invalid_request', { message: 'An HTTP/1.1 request must carry a Host header.' }))
        return
      }
      const expect = raw.headers.expect
      if (expect !== undefined && !CONTINUE.test(expect)) {
        closeWhenAnswered(raw)
        done(new GatewayError('expectation_failed'))
        return
      }
    }
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw
    if (!app.lifecycle.draining && !closingSocket(raw)) {
      done(null, payload)
      return
    }
    const res = reply.raw
    if (res.socket !== null) {
      closeIfLast(raw, res)
      done(null, payload)
      return
    }
    // queued behind the answer to an earlier request: its bytes wait for their turn anyway, and
    // by then every request pipelined behind it has arrived, so whether it is the last is known
    let settled = false
    const go = (): void => {
      if (settled) return
      settled = true
      res.off('socket', go)
      res.off('close', go)
      closeIfLast(raw, res)
      done(null, payload)
    }
    res.once('socket', go)
    res.once('close', go)
  })
}, { name: 'http-edges', dependencies: ['gateway-config', 'error-handler', 'request-id', 'lifecycle'] })
