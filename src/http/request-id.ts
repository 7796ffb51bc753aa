// The request id (docs/design.md#errors): a caller's well-formed x-request-id is kept for
// correlation; anything else is replaced by a fresh one.
import type { IncomingMessage } from 'node:http'
import type { FastifyRequest } from 'fastify'
import { madeRequestId } from '../core/request-logger.js'
import { randomUuid } from '../core/random-uuid.js'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function genReqId (req: IncomingMessage): string {
  const h = req.headers['x-request-id']
  // an id of its own noted as such for the request's logger (src/core/request-logger.ts)
  return typeof h === 'string' && SAFE_ID.test(h) ? h : madeRequestId(randomUuid())
}

// each request Fastify routed, on its raw request: an answer written straight to the socket (a
// body that never arrived, docs/design.md#http-edges) keeps the request's id and route. A
// property, not a WeakMap (docs/design.md#hot-path): a WeakMap living in the old generation kept
// every request's whole graph (request, reply, response, logger) alive through the young-generation
// collections until the next full one: the scavenges copying them into the old generation and the
// mark-compacts that followed made most of the steady-rate tail (BENCHMARKS.md#hot-path-choices).
// The raw request and Fastify's request already point at each other, so this keeps nothing alive
// longer.
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
