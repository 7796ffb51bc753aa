// The pure rules of a mutation request (docs/design.md#campaign-control): the fixed
// constraints envelope, the body rules checked before the schema (constraints and reserved
// fields at any depth), the request id and its aliases, and the params hash. No I/O.
import { createHash } from 'node:crypto'
import { stringify } from 'safe-stable-stringify'
import { GatewayError } from '../errors.js'
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

// compared after folding case and dropping `_`/`-`, so `Controller-Id` or `controllerEpoch`
// cannot slip past the snake_case names the wire uses
const fold = (k: string): string => k.toLowerCase().replace(/[_-]/g, '')
const CONSTRAINTS = fold('constraints')
const RESERVED = new Set(['argus_supervisor', 'controller_id', 'controller_epoch'].map(fold))

/**
 * constraints_not_relaxable beats reserved_field, wherever each stands in the body. The walk
 * uses its own stack, so no nesting depth (the 64 KiB body cap bounds it) can hide a key.
 */
export function checkBodyRules (body: unknown): void {
  let reserved: string | undefined
  const stack: unknown[] = [body]
  while (stack.length > 0) {
    const v = stack.pop()
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x)
      continue
    }
    if (v === null || typeof v !== 'object') continue
    for (const [k, x] of Object.entries(v)) {
      const f = fold(k)
      if (f === CONSTRAINTS) throw new GatewayError('constraints_not_relaxable')
      if (reserved === undefined && (RESERVED.has(f) || k.toLowerCase().startsWith('urn:'))) reserved = k
      stack.push(x)
    }
  }
  if (reserved !== undefined) {
    throw new GatewayError('reserved_field', { message: `The field "${reserved.slice(0, 64)}" is reserved for the gateway.` })
  }
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
