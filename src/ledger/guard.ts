// A ledger whose failures are contract errors (docs/design.md#ledger): any store error (a
// closed file, a full disk, a lost connection) becomes 503 ledger_unavailable, logged once
// here, so no route can answer a raw 500 or leak a driver message. Contract errors pass as is.
import type { Logger } from 'pino'
import { GatewayError, isGatewayError } from '../core/errors.js'
import type { Ledger } from './types.js'

/** the ledger behind a guard (diagnostics and tests: the SQLite handle is keyed by it) */
export const UNGUARDED = Symbol('unguarded ledger')

export function guardLedger (ledger: Ledger, logger: Logger): Ledger {
  return new Proxy(ledger, {
    get (target, key, receiver) {
      if (key === UNGUARDED) return target
      const value: unknown = Reflect.get(target, key, receiver)
      if (typeof value !== 'function') return value
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        } catch (err) {
          if (isGatewayError(err)) throw err
          logger.error({ err, method: String(key) }, 'ledger call failed')
          throw new GatewayError('ledger_unavailable', { cause: err })
        }
      }
    }
  })
}
