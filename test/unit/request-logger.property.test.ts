// A request's logger made without pino's general child path (src/core/request-logger.ts,
// docs/design.md#hot-path) writes what pino's child writes, byte for byte, whatever the request id
// and whatever is logged through it: objects, messages with arguments, errors, disabled levels, its
// own children (with or without another request id), its bindings read back. Calls it does not
// make itself (another binding, options) give pino's child, on both sides. Two loggers as the
// gateway makes them, each under Fastify as its logger, one of them with the fast child.
import Fastify from 'fastify'
import fc from 'fast-check'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { createLogger } from '../../src/core/logger.js'
import { installRequestChild, madeRequestId, uuidBindingsBefore } from '../../src/core/request-logger.js'

type Lines = string[]
function fastifyLogger (level: string): { log: pino.Logger; lines: Lines } {
  const lines: Lines = []
  const destination = { write (s: string) { lines.push(s) } }
  const app = Fastify({ loggerInstance: createLogger({ level, secrets: new Set(), destination }) })
  return { log: app.log as unknown as pino.Logger, lines }
}

const unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0x00, 0x0a, 0x22, 0x5c, 0x7f, 0x80, 0x2028, 0xd800, 0xdc00), fc.integer({ min: 0x20, max: 0x7e }))
const id = fc.oneof(fc.uuid(), fc.array(unit, { maxLength: 60 }).map((u) => String.fromCharCode(...u)), fc.string({ unit: 'binary', maxLength: 60 }))

/** what is done with a request's logger */
type Act = (l: pino.Logger) => void
const act: fc.Arbitrary<Act> = fc.oneof(
  fc.tuple(fc.string(), fc.integer()).map(([m, n]): Act => (l) => { l.info({ n, nested: { m } }, m) }),
  fc.string().map((m): Act => (l) => { l.warn('said %s and %d', m, 7) }),
  // one error for both sides: its stack names where it was made
  fc.string().map((m): Act => { const e = new Error(m); return (l) => { l.error(e, 'failed') } }),
  fc.string().map((m): Act => (l) => { l.debug({ m }, 'debug') }),
  fc.tuple(fc.string(), fc.string()).map(([c, m]): Act => (l) => { l.child({ component: c }).info(m) }),
  id.map((other): Act => (l) => { l.child({ reqId: other }).info('a request id under a request id') }),
  fc.constant<Act>((l) => { l.info(`bindings ${JSON.stringify(l.bindings())}, level ${l.level}, debug ${String(l.isLevelEnabled('debug'))}`) })
)

/** how the request's logger is asked for: Fastify's own call first */
type Ask = (log: pino.Logger, reqId: string) => pino.Logger
const ask: fc.Arbitrary<Ask> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Ask>((log, reqId) => log.child({ reqId }, {})) },
  fc.constant<Ask>((log, reqId) => log.child({ reqId })),
  fc.constant<Ask>((log, reqId) => log.child({ reqId }, { level: 'debug' })),
  fc.constant<Ask>((log, reqId) => log.child({ reqId, extra: 1 }, {})),
  fc.constant<Ask>((log, reqId) => log.child(Object.create({ reqId }) as Record<string, unknown>, {})),
  fc.constant<Ask>((log, reqId) => log.child({ other: reqId }, {}))
)

const timeless = (lines: Lines): string[] => lines.map((l) => l.replace(/"time":\d+/, '"time":0'))

describe('a request\'s logger made directly', () => {
  it('writes the lines pino\'s child writes, for any request id and anything logged', () => {
    fc.assert(fc.property(fc.constantFrom('info', 'debug'), id, ask, fc.array(act, { maxLength: 6 }), (level, reqId, how, acts) => {
      const fast = fastifyLogger(level)
      const pinos = fastifyLogger(level)
      expect(installRequestChild(fast.log)).toBe(true)
      const a = how(fast.log, reqId)
      const b = how(pinos.log, reqId)
      for (const x of acts) { x(a); x(b) }
      expect(timeless(fast.lines)).toEqual(timeless(pinos.lines))
      expect(fast.lines.length).toBe(pinos.lines.length)
    }), { numRuns: runs(400) })
  })

  it('writes the same lines for an id the gateway made, and says where that id\'s binding starts', () => {
    fc.assert(fc.property(fc.constantFrom('info', 'debug'), fc.uuid(), fc.array(act, { maxLength: 4 }), (level, reqId, acts) => {
      const fast = fastifyLogger(level)
      const pinos = fastifyLogger(level)
      installRequestChild(fast.log)
      const a = fast.log.child({ reqId: madeRequestId(reqId) }, {})
      const b = pinos.log.child({ reqId }, {})
      for (const x of acts) { x(a); x(b) }
      expect(timeless(fast.lines)).toEqual(timeless(pinos.lines))
      const before = uuidBindingsBefore(a, reqId)
      expect(before).toBe((fast.log as unknown as Record<symbol, string>)[pino.symbols.chindingsSym])
      expect(before).toMatch(/"pid":/)
      // an id it did not make, or another request's: not said
      expect(uuidBindingsBefore(fast.log.child({ reqId: `${reqId}x` }, {}), `${reqId}x`)).toBeUndefined()
      expect(uuidBindingsBefore(a, `${reqId}x`)).toBeUndefined()
    }), { numRuns: runs(200) })
  })

  it('is what Fastify gives a request, and its access line is pino\'s', async () => {
    const lines: Lines = []
    const app = Fastify({ loggerInstance: createLogger({ level: 'info', secrets: new Set(), destination: { write (s: string) { lines.push(s) } } }) })
    expect(installRequestChild(app.log as unknown as pino.Logger)).toBe(true)
    let made: unknown
    app.get('/x', async (request) => {
      made = request.log
      request.log.info('in the handler')
      return { ok: true }
    })
    const res = await app.inject({ method: 'GET', url: '/x' })
    expect(res.statusCode).toBe(200)
    // made here, not by pino: only its bindings (and Fastify's own flag) are its own
    expect(Object.getPrototypeOf(made)).toBe(app.log)
    expect(Object.getOwnPropertySymbols(made).map(String)).toContain('Symbol(pino.chindings)')
    expect(Object.getOwnPropertySymbols(made).map(String)).not.toContain('Symbol(pino.formatters)')
    const handler = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'in the handler')
    expect(handler).toMatchObject({ reqId: res.headers['request-id'] ?? expect.any(String) })
    await app.close()
  })

  it('is not given to a logger whose children pino would make otherwise', () => {
    const lines: Lines = []
    const destination = { write (s: string) { lines.push(s) } }
    const base = createLogger({ level: 'info', secrets: new Set(), destination })
    // a serializer of the request id's key
    expect(installRequestChild(base.child({}, { serializers: { reqId: (v: string) => v.toUpperCase() } }))).toBe(false)
    // a redaction of it
    expect(installRequestChild(base.child({}, { redact: ['reqId'] }))).toBe(false)
    // the root logger, whose bindings formatter is its own
    expect(installRequestChild(createLogger({ level: 'info', secrets: new Set(), destination }))).toBe(false)
  })
})
