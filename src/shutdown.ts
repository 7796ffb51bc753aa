// The drain (docs/design.md#shutdown): stop accepting, let the requests in flight finish within
// the grace, cut and log whatever outlasts it, then close the app — its onClose hooks stop the
// discovery timer and the control sweep, destroy the upstream pools and close the ledger last.
import { once } from 'node:events'
import type { Logger } from 'pino'
import type { GatewayApp } from './app.js'

export interface DrainReport { inFlight: number; cut: number }

export async function drainAndClose (app: GatewayApp, graceMs: number, logger: Logger): Promise<DrainReport> {
  const inFlight = app.lifecycle.inFlight()
  app.lifecycle.beginDrain()
  if (!app.server.listening) {
    await app.close()
    return { inFlight, cut: 0 }
  }
  // 'close' comes once the listener is closed and every connection has ended
  const ended = once(app.server, 'close').then(() => true, () => true)
  // stop accepting in this very tick (Node also closes the idle keep-alive sockets now); the
  // app's close below waits on the same server, then runs the onClose hooks
  app.server.close()
  logger.info({ inFlight, graceMs }, 'draining')
  const closed = app.close()

  let timer: NodeJS.Timeout | undefined
  const graceOver = new Promise<false>((resolve) => { timer = setTimeout(resolve, graceMs, false) })
  const inTime = await Promise.race([ended, graceOver])
  clearTimeout(timer)
  let cut = 0
  if (!inTime) {
    for (const r of app.lifecycle.pending()) {
      logger.warn(r, 'request cut at the end of the shutdown grace')
      cut++
    }
    app.server.closeAllConnections()
  }
  await closed
  return { inFlight, cut }
}
