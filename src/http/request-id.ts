// The request id (docs/design.md#errors): a caller's well-formed x-request-id is kept for
// correlation; anything else is replaced by a fresh one.
import { randomFillSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyRequest } from 'fastify'
import { madeRequestId } from '../core/request-logger.js'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

// A version-4 UUID's text as randomUUID writes it (lower-case hex, RFC 9562), from the same
// cryptographic source, written as one flat string (docs/design.md#hot-path): Node's randomUUID joins
// twenty pieces, and the rope that makes is copied flat again when Node checks the header it goes
// out in — ~1.5 k instructions a request more. test/unit/request-id.property.test.ts holds the
// form and the bits.
const IDS_PER_FILL = 128
const random = Buffer.allocUnsafeSlow(16 * IDS_PER_FILL)
let nextId = IDS_PER_FILL
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0))
const DASH = 0x2d

/** a random (version 4) UUID, as crypto.randomUUID writes one */
export function randomUuid (): string {
  if (nextId === IDS_PER_FILL) {
    randomFillSync(random)
    nextId = 0
  }
  const o = nextId++ * 16
  const r = random
  const h = HEX
  // the version (4) and the variant (10xx) bits
  const v = (r[o + 6]! & 0x0f) | 0x40
  const n = (r[o + 8]! & 0x3f) | 0x80
  return String.fromCharCode(
    h[r[o]! >> 4]!, h[r[o]! & 15]!, h[r[o + 1]! >> 4]!, h[r[o + 1]! & 15]!, h[r[o + 2]! >> 4]!, h[r[o + 2]! & 15]!, h[r[o + 3]! >> 4]!, h[r[o + 3]! & 15]!, DASH,
    h[r[o + 4]! >> 4]!, h[r[o + 4]! & 15]!, h[r[o + 5]! >> 4]!, h[r[o + 5]! & 15]!, DASH,
    h[v >> 4]!, h[v & 15]!, h[r[o + 7]! >> 4]!, h[r[o + 7]! & 15]!, DASH,
    h[n >> 4]!, h[n & 15]!, h[r[o + 9]! >> 4]!, h[r[o + 9]! & 15]!, DASH,
    h[r[o + 10]! >> 4]!, h[r[o + 10]! & 15]!, h[r[o + 11]! >> 4]!, h[r[o + 11]! & 15]!, h[r[o + 12]! >> 4]!, h[r[o + 12]! & 15]!,
    h[r[o + 13]! >> 4]!, h[r[o + 13]! & 15]!, h[r[o + 14]! >> 4]!, h[r[o + 14]! & 15]!, h[r[o + 15]! >> 4]!, h[r[o + 15]! & 15]!)
}

export function genReqId (req: IncomingMessage): string {
  const h = req.headers['x-request-id']
  // an id of its own noted as such for the request's logger (src/core/request-logger.ts)
  return typeof h === 'string' && SAFE_ID.test(h) ? h : madeRequestId(randomUuid())
}

// each request Fastify routed, on its raw request: an answer written straight to the socket (a
// body that never arrived, docs/design.md#http-edges) keeps the request's id and route. A
// property, not a WeakMap (docs/design.md#hot-path): a WeakMap living in the old generation kept
// every request's whole graph (request, reply, response, logger) alive through the young-generation
// collections until the next full one — ~0.9 MB promoted per scavenge at 1,000 req/s, the
// mark-compacts and most of the steady-rate p99. The raw request and Fastify's request already
// point at each other, so this keeps nothing alive longer.
const ROUTED = Symbol('oogw.routed')
type RoutedRaw = IncomingMessage & { [ROUTED]?: FastifyRequest }

export function routedRequest (req: IncomingMessage): FastifyRequest | undefined {
  return (req as RoutedRaw)[ROUTED]
}

/** marks the raw request as routed by Fastify (the request-id plugin's onRequest hook) */
export function markRouted (request: FastifyRequest): void {
  const raw: RoutedRaw = request.raw
  raw[ROUTED] = request
}
