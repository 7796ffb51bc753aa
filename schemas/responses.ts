// What a route answers, declared once next to the route (docs/design.md#errors): each success
// status with its schema and what it means, and every error code the route can answer. From
// that one declaration come the route's response schemas (the runtime serializer's) and the
// OpenAPI document's responses, one per error status with `code` as an enum of the route's own
// codes for that status (src/openapi/document.ts). The statuses come from the error table
// (src/core/errors.ts); nothing here decides what a code means.
import type { z } from 'zod'
import { ERROR_TABLE, type ErrorCode } from '../src/core/errors.js'
import { ErrorBodySchema } from './rest.js'

/** a success answer: its schema, what it means, and its media type when it is not JSON */
export interface OkAnswer<S extends z.ZodType = z.ZodType> {
  schema: S
  description: string
  /** default application/json; anything else is documented as a binary body */
  mediaType?: string
}

/** the document's account of a route's answers, read by the OpenAPI transform */
export interface RouteAnswers {
  ok: Readonly<Record<number, Omit<OkAnswer, 'schema'>>>
  errors: readonly ErrorCode[]
  /** a mutation: a request id used before answers the stored answer with Idempotent-Replayed: true */
  replays: boolean
}

declare module 'fastify' {
  interface FastifySchema {
    /** what the route answers (schemas/responses.ts `answers`); documentation only */
    answers?: RouteAnswers
  }
}

type ErrorStatus = typeof ERROR_TABLE[ErrorCode]['status']
type ErrorResponses = { [S in ErrorStatus]?: typeof ErrorBodySchema }
type OkResponses<O> = { [K in keyof O]: O[K] extends OkAnswer<infer S> ? S : never }

/**
 * The route's `response` map and its `answers`, to spread into its schema. Every error status
 * the codes name is serialized with the one error body schema (the runtime does not narrow the
 * code: the document does, and test/integration/openapi.test.ts holds the gateway to it).
 */
export function answers<const O extends Record<number, OkAnswer>> (
  ok: O,
  errors: readonly ErrorCode[],
  opts: { replays?: boolean } = {}
): { response: OkResponses<O> & ErrorResponses; answers: RouteAnswers } {
  const codes = [...new Set(errors)]
  const response: Record<number, z.ZodType> = {}
  const okDocs: Record<number, Omit<OkAnswer, 'schema'>> = {}
  for (const [status, a] of Object.entries(ok)) {
    response[Number(status)] = a.schema
    okDocs[Number(status)] = a.mediaType === undefined ? { description: a.description } : { description: a.description, mediaType: a.mediaType }
  }
  for (const code of codes) response[ERROR_TABLE[code].status] = ErrorBodySchema
  return {
    response: response as OkResponses<O> & ErrorResponses,
    answers: { ok: okDocs, errors: codes, replays: opts.replays ?? false }
  }
}

/** the codes of `codes` whose status is `status`, in the table's order */
export function codesWithStatus (codes: readonly ErrorCode[], status: number): ErrorCode[] {
  const set = new Set(codes)
  return (Object.keys(ERROR_TABLE) as ErrorCode[]).filter((c) => set.has(c) && ERROR_TABLE[c].status === status)
}

// ---- the codes routes share -----------------------------------------------------------------

/**
 * Every route behind a scope can answer these, whatever it does: a query, path or header a schema
 * refuses, two Authorization headers or a missing Host (400); authentication and scope (401, 403);
 * the HTTP edges (408 a request that did not arrive in time, 417 an Expect other than
 * 100-continue, 431 headers too large); the caller's and the address's budgets (429); a bug (500);
 * the secret guard refusing an answer that carries the upstream secret (502
 * upstream_invalid_response); load shedding, the drain and the per-socket limit (503).
 */
export const AUTHENTICATED = [
  'invalid_request', 'unauthorized', 'forbidden', 'request_timeout', 'expectation_failed', 'rate_limited',
  'header_too_large', 'internal_error', 'upstream_invalid_response', 'overloaded', 'shutting_down', 'connection_closing'
] as const satisfies readonly ErrorCode[]

/** a route that reads a body: over 64 KiB (413) */
export const WITH_BODY = ['payload_too_large'] as const satisfies readonly ErrorCode[]

/** a route with path parameters: one longer than the router accepts (414) */
export const WITH_PATH_PARAMS = ['uri_too_long'] as const satisfies readonly ErrorCode[]

/** a route that reads or writes the ledger: a store error (503, retryable) */
export const USES_LEDGER = ['ledger_unavailable'] as const satisfies readonly ErrorCode[]

/**
 * A read of the remote (read_control, request_status, tasks/get): the capability missing or
 * answered -32601/-32009, the remote unreachable, shed or its breaker open, too slow, or
 * refusing (src/argus/read-errors.ts); an invalid answer is upstream_invalid_response, already in
 * AUTHENTICATED.
 */
export const UPSTREAM_READ = ['capability_unavailable', 'upstream_unavailable', 'upstream_timeout', 'upstream_rejected'] as const satisfies readonly ErrorCode[]

/** an Argus read: the remote's own safe codes and a task it left in a state the gateway cannot use */
export const ARGUS_READ = [
  ...UPSTREAM_READ, 'upstream_unexpected_state', 'invalid_argus_envelope', 'argus_supervisor_disabled',
  'unsupported_argus_operation', 'argus_supervisor_unavailable'
] as const satisfies readonly ErrorCode[]

/** a route about one campaign, its records or its tasks: the caller's grants do not reach it (docs/design.md#grants) */
export const PER_CAMPAIGN = ['campaign_forbidden'] as const satisfies readonly ErrorCode[]

/**
 * Every mutation (docs/design.md#order-of-checks): the campaign's grant (403), the body rules and the request id (400), the
 * id's earlier use (409, 422), a clock past the margin (503), another identity's controller id
 * (403), controller mode and the operation's capability (503), the campaign's lock and its
 * unresolved records (409), the breaker refusing a send (503), what the
 * remote's refusal maps to whatever the operation (403, 404, 409, 502, 503;
 * docs/design.md#outcomes), and the ambiguous outcome (504).
 */
export const MUTATION = [
  ...AUTHENTICATED, ...WITH_BODY, ...WITH_PATH_PARAMS, ...USES_LEDGER, ...PER_CAMPAIGN,
  'conflicting_fields', 'constraints_not_relaxable', 'reserved_field',
  'idempotency_key_conflict', 'idempotency_key_mismatch', 'request_in_flight',
  'clock_skew', 'controller_conflict', 'capability_unavailable', 'campaign_busy', 'ambiguity_unresolved', 'upstream_unavailable',
  'policy_rejected', 'not_found', 'stale_epoch', 'lease_held_by_other', 'lease_expired', 'task_not_cancelable', 'upstream_rejected',
  'ambiguous_write'
] as const satisfies readonly ErrorCode[]

/** a mutation that needs the caller's lease (all but claim): refused locally, or its read_control failed */
export const NEEDS_LEASE = ['lease_not_held', 'lease_expired', ...UPSTREAM_READ] as const satisfies readonly ErrorCode[]
