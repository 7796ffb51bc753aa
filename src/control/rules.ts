// The pure rules of a mutation request (docs/design.md#campaign-control): the fixed
// constraints envelope, the body rules checked before the schema (constraints and reserved
// fields at any depth), the request id and its aliases, and the params hash. No I/O.
import { createHash } from 'node:crypto'
import { stringify } from 'safe-stable-stringify'
import { GatewayError } from '../core/errors.js'
import type { MutationOperation } from '../ledger/types.js'

/**
 * Sent with every claim and mutation, always exactly this, in this key order. A fresh object
 * per call, so nothing downstream can alter the one the next call sends.
 */
export function constraintsEnvelope (): Record<string, unknown> {
  return {
    version: 1,
    execution: 'remote_only',
    allow_publication: false,
    allow_destructive_git: false,
    allow_credential_changes: false,
    allow_force_push: false,
    allow_merge: false
  }
}

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/

// Key names are compared folded (docs/design.md#constraints-envelope): NFKC (fullwidth and
// compatibility forms such as `ſ`), full case folding (upper then lower case, so `ß` is `ss`
// and the dotless `ı` is `i`), marks dropped (`İ` is `i`), then `_`, `-` and every default-
// ignorable code point (zero-width characters, the soft hyphen) removed. Folding more than a
// remote would can only refuse a key, never let one through.
const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{M}_-]/gu
/** the fold by its definition: every key that is not printable ASCII */
export const foldKeyFully = (k: string): string =>
  k.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKD').replace(IGNORED, '').normalize('NFKC')
// Printable ASCII is its own NFKC and NFKD, holds no mark nor default-ignorable code point, and
// folds case as toLowerCase does: the same fold without four normalisations of every key of every
// body (docs/design.md#hot-path; test/unit/fold-key.property.test.ts holds the two equal)
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/
const ASCII_IGNORED = /[_-]/g
export const foldKey = (k: string): string => PRINTABLE_ASCII.test(k) ? k.toLowerCase().replace(ASCII_IGNORED, '') : foldKeyFully(k)
const CONSTRAINTS = foldKey('constraints')
const RESERVED = new Set(['argus_supervisor', 'controller_id', 'controller_epoch'].map(foldKey))
const URN = foldKey('urn:')

/** how deep a mutation body may nest, the body itself being level 1 (docs/design.md#constraints-envelope) */
export const MAX_BODY_DEPTH = 32

/**
 * constraints_not_relaxable beats reserved_field, which beats a body nested deeper than
 * MAX_BODY_DEPTH (400 invalid_request), wherever each stands in the body. The walk uses its
 * own stack, so no nesting depth (the 64 KiB body cap bounds it) can hide a key or overflow
 * the call stack; nothing recursive sees a body before it has passed here. `own` is the one
 * place, if any, where a reserved key is the caller's to write, exactly as spelt: the front
 * door's submission names its campaign in its message's `metadata.argus_supervisor`
 * (docs/design.md#front-door).
 */
export function checkBodyRules (body: unknown, own?: { holder: unknown; key: string }): void {
  let reserved: string | undefined
  let tooDeep = false
  const stack: Array<[unknown, number]> = [[body, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > MAX_BODY_DEPTH) tooDeep = true
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1])
      continue
    }
    for (const [k, x] of Object.entries(v)) {
      const f = foldKey(k)
      if (f === CONSTRAINTS) throw new GatewayError('constraints_not_relaxable')
      if (reserved === undefined && (RESERVED.has(f) || f.startsWith(URN)) && !(v === own?.holder && k === own.key)) reserved = k
      stack.push([x, depth + 1])
    }
  }
  if (reserved !== undefined) {
    throw new GatewayError('reserved_field', { message: `The field "${reserved.slice(0, 64)}" is reserved for the gateway.` })
  }
  if (tooDeep) throw new GatewayError('invalid_request', { message: `The body nests deeper than ${MAX_BODY_DEPTH} levels.` })
}

const ALIASES: Record<string, string> = { request_id: 'requestId', ttl_seconds: 'ttlSeconds' }

/** snake_case aliases become camelCase; both spellings with different values conflict */
export function normaliseAliases (body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) }
  for (const [snake, camel] of Object.entries(ALIASES)) {
    if (!(snake in out)) continue
    if (camel in out && stringify(out[camel]) !== stringify(out[snake])) {
      throw new GatewayError('conflicting_fields', { message: `${snake} and ${camel} differ.` })
    }
    out[camel] = out[snake]
    delete out[snake]
  }
  return out
}

/** the request id from the body or the Idempotency-Key header; both must agree */
export function resolveRequestId (bodyId: string | undefined, headerId: string | string[] | undefined): string {
  if (Array.isArray(headerId)) throw new GatewayError('conflicting_fields', { message: 'Idempotency-Key is given more than once.' })
  if (bodyId !== undefined && headerId !== undefined && bodyId !== headerId) {
    throw new GatewayError('conflicting_fields', { message: 'The Idempotency-Key header and requestId differ.' })
  }
  const id = bodyId ?? headerId
  if (id === undefined) throw new GatewayError('invalid_request', { message: 'A mutation needs a request id: requestId in the body or the Idempotency-Key header.' })
  if (!REQUEST_ID_PATTERN.test(id)) throw new GatewayError('invalid_request', { message: 'A request id is 8-128 characters of [A-Za-z0-9._:-].' })
  return id
}

/** covers {operation, campaignId, body}; the body without its request id, in canonical form */
export function paramsHash (operation: MutationOperation, campaignId: string, body: Record<string, unknown>): string {
  const { requestId: _id, ...rest } = body
  return createHash('sha256').update(stringify({ operation, campaignId, body: rest }) ?? '').digest('hex')
}
