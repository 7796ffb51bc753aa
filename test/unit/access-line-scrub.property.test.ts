// The access line is searched for the secrets in its variable tokens only, when every secret
// allows it (Scrubber.cleanOutside, docs/design.md#hot-path): this holds that search equal to the
// whole line's. Over arbitrary secrets — printable, digits alone (a form the time can hold), with
// JSON's structure in them, or a piece of the line's own fixed text — and requests that plant the
// secret's forms in the path, the method, the peer, the request id, the time and the numbers (a
// secret of the line's own numbers and structure, which only the structure rule keeps whole): the
// line written is byte for byte the unscrubbed line through the full scrub. The same line is made
// twice at one frozen clock, once by a logger that knows no secret.
import fc from 'fast-check'
import type pino from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { runs } from '../helpers/runs.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AccessLog } from '../../src/http/access-log.js'
import { createLogger, scrubberOf } from '../../src/core/logger.js'
import { installRequestChild, madeRequestId } from '../../src/core/request-logger.js'
import { hexSeparated, quotedPrintable, sprinkle, xEscapedBytes } from '../helpers/secret-forms.js'
import { SYNC_PROPERTY } from '../helpers/sync-property.js'

afterEach(() => { vi.useRealTimers() })

const printable = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: min, maxLength: max })
const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 8, maxLength: 16 })
const FIXED = ['request completed', 'remoteAddress', '"statusCode":', '"responseTime":0', 'remotePort":0}']
const secretArb = fc.oneof(printable(8, 28), digits, fc.constantFrom(...FIXED), printable(8, 20).map((s) => `${s}",:`))

/** text that may carry the secret, one of its forms or a piece of it */
const planted = (secret: string): fc.Arbitrary<string> => {
  const b = Buffer.from(secret)
  const form = fc.constantFrom(secret, encodeURIComponent(secret), b.toString('hex'), b.toString('base64'), b.toString('base64url'), secret.slice(1), `x${secret}y`,
    // CONTRACT §14's: what a decoder skips inside a form, which must not let a form reach across a token
    hexSeparated(b, (i) => i % 3 === 0, () => ':'), sprinkle(b.toString('base64'), (i) => i % 4 === 3 ? ' ' : ''), quotedPrintable(secret, () => true), xEscapedBytes(secret))
  return fc.array(fc.oneof(form, printable(0, 10)), { maxLength: 3 }).map((parts) => parts.join(''))
}

/**
 * how the request's logger is made: pino's child; the gateway's own (src/core/request-logger.ts);
 * the gateway's own for an id it made itself, when the id is a UUID (the access line then finds
 * the id's binding without reading the text)
 */
type Via = 'pino' | 'fast' | 'made'
const viaArb = fc.constantFrom<Via>('pino', 'fast', 'made')
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** the request's logger as `c.via` says, under `parent` (a logger with the gateway's child, as Fastify's is) */
function requestLogger (root: pino.Logger, parent: pino.Logger, c: Case): pino.Logger {
  if (c.via === 'pino' || c.via === undefined) return (c.note === undefined ? root : root.child({ note: c.note })).child({ reqId: c.reqId })
  if (c.via === 'made' && UUID.test(c.reqId)) madeRequestId(c.reqId)
  const log = parent.child({ reqId: c.reqId }, {})
  // a binding set on the request's logger after it was made comes after the request id's
  if (c.later !== undefined) log.setBindings({ later: c.later })
  return log
}
function parentOf (root: pino.Logger, note: string | undefined): pino.Logger {
  const parent = root.child(note === undefined ? {} : { note }, {})
  expect(installRequestChild(parent)).toBe(true)
  return parent
}

interface Case { secret: string; note?: string; later?: string; via?: Via; method: string; path: string; route: string | undefined; ip: string | undefined; port: number | undefined; reqId: string; status: number; elapsed: number; now: number }

/** secrets made of the line's own numbers and structure: only the structure rule keeps them out of the token search */
const numeric = fc.record({ status: fc.integer({ min: 100, max: 599 }), whole: fc.integer({ min: 1000, max: 9_999_999 }), frac: fc.integer({ min: 100, max: 999 }) })
  .chain(({ status, whole, frac }) => fc.constantFrom(`${whole}.${frac}`, `:${status}},"responseTime":${whole}`, `${status}},"responseTime`)
    .map((secret) => ({ secret, status, elapsed: Number(`${whole}.${frac}`) })))

const caseArb = fc.oneof(secretArb.chain((secret) => fc.record({
  secret: fc.constant(secret),
  method: fc.oneof(fc.constantFrom('GET', 'POST'), planted(secret)),
  path: planted(secret).map((p) => `/v1/tasks/${p}`),
  route: fc.option(fc.oneof(fc.constant('/v1/tasks/:taskId'), planted(secret)), { nil: undefined }),
  ip: fc.option(fc.oneof(fc.constant('127.0.0.1'), planted(secret)), { nil: undefined }),
  port: fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
  reqId: fc.oneof(fc.uuid(), planted(secret)),
  via: viaArb,
  status: fc.integer({ min: 100, max: 599 }),
  elapsed: fc.double({ min: 0, max: 1e7, noNaN: true }),
  // a time whose digits may hold a secret of digits
  now: fc.oneof(fc.integer({ min: 0, max: 9_999_999_999_999 }), fc.constant(Number(secret.replace(/\D/g, '').slice(0, 13) || '0')))
})), numeric.map(({ secret, status, elapsed }): Case => ({ secret, method: 'GET', path: '/v1/tasks/t-1', route: '/v1/tasks/:taskId', ip: '127.0.0.1', port: 5000, reqId: 'r-1', status, elapsed, now: 1_764_790_000_123 })),
numeric.chain(({ secret, status, elapsed }) => fc.uuid().map((reqId): Case => ({ secret, via: 'made', method: 'GET', path: '/v1/tasks/t-1', route: '/v1/tasks/:taskId', ip: '127.0.0.1', port: 5000, reqId, status, elapsed, now: 1_764_790_000_123 }))))

/** the line one logger writes for the case, at the case's frozen time */
function lineOf (c: Case, secrets: Set<string>): string {
  const written: string[] = []
  const destination = { write: (s: string) => { written.push(s) } } as unknown as pino.DestinationStream
  const root = createLogger({ level: 'info', secrets, destination })
  const log = requestLogger(root, parentOf(root, c.note), c)
  const request = { id: c.reqId, method: c.method, url: c.path, routeOptions: { url: c.route }, ip: c.ip, socket: { remotePort: c.port } } as unknown as FastifyRequest
  const reply = { log, statusCode: c.status, elapsedTime: c.elapsed } as unknown as FastifyReply
  vi.useFakeTimers({ now: c.now, toFake: ['Date'] })
  new AccessLog(true).requestCompleted(null, request, reply)
  vi.useRealTimers()
  expect(written).toHaveLength(1)
  return written[0]!
}

describe('the access line\'s scrub', SYNC_PROPERTY, () => {
  it('searching its variable tokens writes exactly what searching the whole line writes', () => {
    fc.assert(fc.property(caseArb, (c) => {
      const secrets = new Set([c.secret])
      const raw = lineOf(c, new Set())
      const full = scrubberOf(createLogger({ level: 'info', secrets, destination: { write: () => {} } as unknown as pino.DestinationStream }))!.line(raw)
      expect(lineOf(c, secrets)).toBe(full)
    }), { numRuns: runs(1000) })
  })

  it('the tokens alone are searched when the secret allows it, and the whole line when it holds JSON\'s structure or digits alone', () => {
    const scrub = (secret: string): NonNullable<ReturnType<typeof scrubberOf>> =>
      scrubberOf(createLogger({ level: 'info', secrets: new Set([secret]), destination: { write: () => {} } as unknown as pino.DestinationStream }))!
    const template = '{"level":30,"req":{"method":,"url":},"msg":"request completed"}\n'
    expect(scrub('Zq3vQ8sL1xT7mN2pR5wY9kB4').cleanOutside(template, '"GET""/v1/tasks/t-1"')).toBe(true)
    expect(scrub('Zq3vQ8sL1xT7mN2pR5wY9kB4').cleanOutside(template, '"GET""/v1/tasks/Zq3vQ8sL1xT7mN2pR5wY9kB4"')).toBe(false)
    expect(scrub('12345678901234').cleanOutside(template, '"GET"')).toBe(false)
    expect(scrub('abc",:defghijkl').cleanOutside(template, '"GET"')).toBe(false)
    expect(scrub('request completed').cleanOutside(template, '"GET"')).toBe(false)
  })
})

describe('what the access line remembers as clean', SYNC_PROPERTY, () => {
  // a few values of each token, some of them carrying the second secret, which is added mid-way:
  // a value remembered clean before it was added must be searched again, and a value never seen
  // (a route, a method, a peer, the bindings before the request id) searched whatever was seen before
  const pieces = (secret: string): fc.Arbitrary<string> => fc.constantFrom(secret, `x${secret}y`, secret.slice(1), Buffer.from(secret).toString('hex'))
  const uuidPiece = fc.tuple(fc.uuid(), fc.nat(20), fc.integer({ min: 8, max: 36 })).map(([u, from, n]) => u.slice(from, from + n)).filter((p) => p.length >= 8)
  const stepArb = (secret: string): fc.Arbitrary<Case> => fc.record({
    secret: fc.constant(secret),
    // bindings of the logger's own before the request id's (a component, say), some carrying the secret
    note: fc.option(fc.oneof(fc.constant('ledger'), pieces(secret)), { nil: undefined }),
    later: fc.option(fc.oneof(fc.constant('x'), pieces(secret)), { nil: undefined, freq: 4 }),
    method: fc.oneof(fc.constantFrom('GET', 'POST'), pieces(secret)),
    route: fc.option(fc.oneof(fc.constantFrom('/v1/supervisor/health', '/v1/tasks/:taskId'), pieces(secret).map((p) => `/v1/${p}`)), { nil: undefined }),
    path: fc.constantFrom('/v1/supervisor/health', '/v1/tasks/t-1', `/v1/${secret}`),
    // the path of a route without parameters is the route itself
    ownPath: fc.boolean(),
    ip: fc.option(fc.oneof(fc.constantFrom('127.0.0.1', '10.0.0.2'), pieces(secret)), { nil: undefined }),
    port: fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
    // a UUID, one that holds the secret when the secret is a piece of one, or any text
    reqId: fc.oneof({ arbitrary: fc.uuid(), weight: 4 }, fc.uuid().map((u) => u.slice(0, Math.max(0, 36 - secret.length)) + secret.slice(0, 36)), pieces(secret)),
    via: viaArb,
    status: fc.constantFrom(200, 404),
    elapsed: fc.double({ min: 0, max: 1e4, noNaN: true }),
    now: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 })
  }).map(({ ownPath, ...c }) => ({ ...c, path: ownPath && c.route !== undefined ? c.route : c.path }))

  it('one logger over many lines, a secret added between two of them: each line is what the whole line\'s search writes', () => {
    // mostly secrets the token search applies to (no character of JSON's structure)
    const alnum = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'), minLength: 8, maxLength: 28 })
    const secretArb2 = fc.oneof({ arbitrary: alnum, weight: 3 }, uuidPiece, printable(8, 28))
    const runArb = fc.tuple(secretArb2, secretArb2).chain(([first, second]) =>
      fc.record({ first: fc.constant(first), second: fc.constant(second), steps: fc.array(stepArb(second), { minLength: 1, maxLength: 16 }), addAt: fc.nat(6) }))
    fc.assert(fc.property(runArb, ({ first, second, steps, addAt }) => {
      const secrets = new Set([first])
      const written: string[] = []
      const destination = { write: (s: string) => { written.push(s) } } as unknown as pino.DestinationStream
      const root = createLogger({ level: 'info', secrets, destination })
      // the logger without a note lives as long as the run, as Fastify's does: its bindings are the same text each time
      const plain = parentOf(root, undefined)
      steps.forEach((c, i) => {
        if (i === addAt) secrets.add(second)
        const log = requestLogger(root, c.note === undefined ? plain : parentOf(root, c.note), c)
        const request = { id: c.reqId, method: c.method, url: c.path, routeOptions: { url: c.route }, ip: c.ip, socket: { remotePort: c.port } } as unknown as FastifyRequest
        vi.useFakeTimers({ now: c.now, toFake: ['Date'] })
        new AccessLog(true).requestCompleted(null, request, { log, statusCode: c.status, elapsedTime: c.elapsed } as unknown as FastifyReply)
        vi.useRealTimers()
        const raw = lineOf(c, new Set())
        const full = scrubberOf(createLogger({ level: 'info', secrets: new Set(secrets), destination: { write: () => {} } as unknown as pino.DestinationStream }))!.line(raw)
        expect(written[i]).toBe(full)
      })
    }), { numRuns: runs(300) })
  })
})
