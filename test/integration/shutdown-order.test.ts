// What the drain closes, in which order (docs/design.md#shutdown): the listener first, then the
// control sweep, the discovery timer and the upstream pools, the ledger last — nothing that
// could still write to it outlives it.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'

describe('closing the gateway', () => {
  it('stops the control sweep, discovery and the pools before it closes the ledger, and logs the drain', async ({ gw }) => {
    const order: string[] = []
    const { app } = gw
    const wrap = <T extends object>(name: string, o: T, key: keyof T): void => {
      const f = o[key] as (...a: unknown[]) => unknown
      ;(o as Record<keyof T, unknown>)[key] = (...a: unknown[]) => {
        order.push(`${name}${app.server.listening ? ' (listening!)' : ''}`)
        return f.apply(o, a)
      }
    }
    wrap('control.stop', app.control, 'stop')
    wrap('discovery.stop', app.discovery, 'stop')
    wrap('upstream.close', app.upstream, 'close')
    wrap('ledger.close', app.ledger, 'close')
    await gw.close()
    expect(order).toEqual(['control.stop', 'discovery.stop', 'upstream.close', 'ledger.close'])
    const msgs = gw.logs.map((l) => (JSON.parse(l) as { msg: string }).msg)
    expect(msgs.indexOf('draining')).toBeGreaterThan(-1)
    expect(msgs.indexOf('drained')).toBeGreaterThan(msgs.indexOf('draining'))
  })
})
