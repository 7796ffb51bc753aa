// A ledger whose failures are contract errors (docs/design.md#ledger): any store error (a
// closed file, a full disk, a lost connection) becomes 503 ledger_unavailable, logged once
// here, so no route can answer a raw 500 or leak a driver message. Contract errors pass as is.
import type { Logger } from 'pino'
import { GatewayError, isGatewayError } from '../core/errors.js'
import type { Ledger } from './types.js'

/** the ledger behind a guard (diagnostics and tests: the SQLite handle is keyed by it) */
export const UNGUARDED = Symbol('unguarded ledger')

export function guardLedger (ledger: Ledger, logger: Logger): Ledger {
  // each method's guard made once, on its first use: a guard made at every property read was a
  // closure per ledger call, five or more a mutation (docs/design.md#hot-path)
  const guarded = new Map<PropertyKey, unknown>()
  return new Proxy(ledger, {
    get (target, key, receiver) {
      if (key === UNGUARDED) return target
      const value: unknown = Reflect.get(target, key, receiver)
      if (typeof value !== 'function') return value
      let g = guarded.get(key) as { fn: unknown; guard: unknown } | undefined
      if (g === undefined || g.fn !== value) {
        g = { fn: value, guard: guardOf(target, value as (...a: unknown[]) => Promise<unknown>, String(key), logger) }
        guarded.set(key, g)
      }
      return g.guard
    }
  })
}

function guardOf (target: Ledger, fn: (...a: unknown[]) => Promise<unknown>, method: string, logger: Logger): (...args: unknown[]) => Promise<unknown> {
  return async (...args: unknown[]) => {
    try {
      return await fn.apply(target, args)
    } catch (err) {
      if (isGatewayError(err)) throw err
      logger.error({ err, method }, 'ledger call failed')
      throw new GatewayError('ledger_unavailable', { cause: err })
    }
  }
}
