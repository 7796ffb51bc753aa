// How a card answer is made and written: the version's card (v0.3 or v1.0 shape, the
// campaign-control extension when advertised, the test's transform), signed (a dual server's v0.3
// card carries the v1.0 card's signatures, as the SDK's compat card copies them), then the
// after-signing transform, then caching as @a2a-js/sdk's card handler does it (A2A v1.0
// §8.6): ETag W/"<first 16 hex of sha256 of the exact body>", Cache-Control, 304 for a
// matching If-None-Match, and Vary: A2A-Version wherever the version picks the card.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { defaultCard } from '../cards/card.js'
import { supportedInterfaces, v1Card } from '../cards/card-v1.js'
import { controlExtension } from '../extensions/control-options.js'
import type { SimulatorState } from '../state.js'

/** The card of one version, transformed but not yet signed. */
export function currentCard (state: SimulatorState, version: '0.3' | '1.0'): Record<string, unknown> {
  const opts = { argusEnabled: state.opts.argusEnabled, authSchemes: state.opts.secret === undefined ? undefined : state.opts.authSchemes }
  const versions = state.opts.protocol === 'dual' ? ['1.0', '0.3'] : ['1.0']
  const card = version === '1.0' ? v1Card(state.origin, versions, opts) : defaultCard(state.origin, opts)
  const { control } = state.opts
  if (control?.advertise === true) {
    const capabilities = card.capabilities as Record<string, unknown>
    card.capabilities = { ...capabilities, extensions: [controlExtension(control)] }
  }
  // the SDK's v0.3 card on a dual server embeds every interface the server has
  if (version === '0.3' && state.opts.protocol === 'dual') card.supportedInterfaces = supportedInterfaces(state.origin, versions)
  return state.cardTransform === undefined ? card : state.cardTransform(card)
}

/** The exact body of the card this version is served. */
export async function cardBody (state: SimulatorState, version: '0.3' | '1.0'): Promise<string> {
  let card = currentCard(state, version)
  if (version === '0.3' && state.opts.protocol === 'dual') {
    if (state.signer.enabled) {
      const { signatures } = await state.signer.sign('1.0', currentCard(state, '1.0'))
      card = { ...card, signatures }
    }
  } else {
    card = await state.signer.sign(version, card)
  }
  if (state.cardAfterSigning !== undefined) card = state.cardAfterSigning(card)
  return JSON.stringify(card)
}

/** Writes the card (or a 304) with the caching headers; returns the status sent. */
export function sendCard (state: SimulatorState, request: FastifyRequest, reply: FastifyReply, body: string): number {
  if (state.opts.protocol === 'dual') reply.header('vary', 'A2A-Version')
  const cache = state.opts.cardCache
  if (cache !== undefined) {
    const etag = cache.etag ? etagOf(body) : undefined
    if (etag !== undefined) reply.header('etag', etag)
    reply.header('cache-control', cache.maxAgeSeconds > 0 ? `public, max-age=${cache.maxAgeSeconds}` : 'no-cache')
    if (etag !== undefined && matchesIfNoneMatch(request.headers['if-none-match'], etag)) {
      reply.code(304).send()
      return 304
    }
  }
  reply.code(200).type('application/json').send(body)
  return 200
}

export function etagOf (body: string): string {
  return `W/"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`
}

/** If-None-Match's weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag equal but for `W/`. */
function matchesIfNoneMatch (header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false
  const value = Array.isArray(header) ? header.join(',') : header
  if (value.trim() === '*') return true
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '')
  return value.split(',').some((tag) => opaque(tag) === opaque(etag))
}
