// The ledger as `app.ledger` (docs/design.md#ledger): opened from GATEWAY_LEDGER_URL before
// the app serves — an SQLite file another process owns fails the start with a clear message
// — and closed last, after the control plane has stopped.
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { guardLedger } from '../ledger/guard.js'
import { createLedger } from '../ledger/index.js'
import { ambiguousAnswer } from '../control/ambiguous-answer.js'
import type { Ledger } from '../ledger/types.js'

declare module 'fastify' {
  interface FastifyInstance { ledger: Ledger }
}

export default fp(async (app, opts: { now?: (() => number) | undefined; serverClock?: (() => number) | undefined }) => {
  const logger = (app.log as Logger).child({ component: 'ledger' })
  const ledger = guardLedger(await createLedger(app.gatewayConfig.ledgerUrl, { ambiguousAnswer, logger, now: opts.now, serverClock: opts.serverClock, onLockSessionLost: () => { app.metrics.ledgerLockSessionsLost.inc() } }), logger)
  app.decorate('ledger', ledger)
  app.addHook('onClose', async () => { await ledger.close() })
}, { name: 'ledger', dependencies: ['gateway-config', 'metrics'] })
