// The contract's error codes (docs/design.md#errors) as one table, turned into one typed error.
// The HTTP status map lives here too; nothing else decides what a code means on the wire.

export const ERROR_TABLE = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  conflicting_fields: { status: 400, message: 'Two fields that must agree do not.' },
  constraints_not_relaxable: { status: 400, message: 'The constraints envelope is fixed by the gateway and cannot be supplied.' },
  reserved_field: { status: 400, message: 'The body uses a field reserved for the gateway.' },
  unauthorized: { status: 401, message: 'A valid bearer token is required.' },
  forbidden: { status: 403, message: 'The caller lacks the scope this route requires.' },
  policy_rejected: { status: 403, message: 'The remote refused the mutation by policy.' },
  controller_conflict: { status: 403, message: 'Another caller identity holds this controller id.' },
  campaign_forbidden: { status: 403, message: 'The caller has no grant for this campaign.' },
  not_found: { status: 404, message: 'Not found.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  lease_held_by_other: { status: 409, message: 'Another controller holds the lease.' },
  lease_not_held: { status: 409, message: 'The caller does not hold the lease.' },
  lease_expired: { status: 409, message: 'The lease has expired or expires too soon.' },
  stale_epoch: { status: 409, message: 'The controller epoch is stale.' },
  task_not_cancelable: { status: 409, message: 'The task is not cancelable.' },
  no_bound_task: { status: 409, message: 'The campaign has no bound task.' },
  idempotency_key_conflict: { status: 409, message: 'The request id is already used.' },
  request_in_flight: { status: 409, message: 'A request with this id is still in flight.' },
  campaign_busy: { status: 409, message: 'Another mutation of this campaign is in progress.' },
  ambiguity_unresolved: { status: 409, message: 'An earlier mutation of this campaign is unresolved.' },
  acknowledge_unsafe: { status: 409, message: 'The acknowledgement cannot be shown safe.' },
  reconcile_too_early: { status: 409, message: 'The remote may still apply the request; ask again after its deadline.' },
  controller_lease_held: { status: 409, message: 'The controller id holds a live lease; its binding stays unless the removal is forced (force=true).' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  uri_too_long: { status: 414, message: 'A path parameter is longer than the gateway accepts.' },
  expectation_failed: { status: 417, message: 'The gateway meets no expectation but 100-continue.' },
  idempotency_key_mismatch: { status: 422, message: 'The request id was used with different parameters.' },
  rate_limited: { status: 429, message: 'Too many requests.' },
  header_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'Internal error.' },
  unsupported_argus_operation: { status: 501, message: 'The remote does not support this Argus operation.' },
  upstream_invalid_response: { status: 502, message: 'The remote answered with an invalid response.' },
  upstream_rejected: { status: 502, message: 'The remote rejected the request.' },
  upstream_unexpected_state: { status: 502, message: 'The remote task is in a state the gateway cannot use.' },
  invalid_argus_envelope: { status: 502, message: 'The remote refused the Argus envelope the gateway built.' },
  lease_readback_mismatch: { status: 502, message: 'The lease read back differs from the renewal.' },
  capability_unavailable: { status: 503, message: 'The remote does not offer this capability.' },
  argus_supervisor_disabled: { status: 503, message: 'The Argus supervisor is disabled on the remote.' },
  argus_supervisor_unavailable: { status: 503, message: 'The Argus supervisor is unavailable on the remote.' },
  upstream_unavailable: { status: 503, message: 'The remote is unavailable.' },
  overloaded: { status: 503, message: 'The gateway is overloaded; retry shortly.' },
  ledger_unavailable: { status: 503, message: 'The ledger is unavailable.' },
  shutting_down: { status: 503, message: 'The gateway is shutting down; retry the request.' },
  clock_skew: { status: 503, message: 'This replica\'s clock is too far from the ledger\'s or the remote\'s; nothing was sent.' },
  connection_closing: { status: 503, message: 'This connection has served its last request; send the request again on a new connection.' },
  upstream_timeout: { status: 504, message: 'The remote did not answer in time.' },
  ambiguous_write: { status: 504, message: 'The outcome of the mutation is unknown; reconcile it.' }
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERROR_TABLE

export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(ERROR_TABLE, code)

const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'rate_limited',
  'upstream_unavailable',
  // shed before routing because the event loop is saturated: nothing was done, retry after Retry-After
  'overloaded',
  'ledger_unavailable',
  // nothing sent: another replica, or this one once its clock is put right, may take it
  'clock_skew',
  // nothing recorded: the same reconcile may be asked again after Retry-After
  'reconcile_too_early',
  // refused before routing while the process drains: nothing was done, any replica may take it
  'shutting_down',
  // pipelined past the requests a socket may carry: nothing was done, a new connection may take it
  'connection_closing',
  'upstream_timeout'
])

export interface GatewayErrorOptions {
  message?: string
  requestId?: string
  missingPrerequisites?: string[]
  headers?: Record<string, string>
  reconcile?: string
  cause?: unknown
}

export class GatewayError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly retryable: boolean
  readonly requestId: string | undefined
  readonly missingPrerequisites: string[] | undefined
  readonly headers: Record<string, string>
  readonly reconcile: string | undefined

  constructor (code: ErrorCode, opts: GatewayErrorOptions = {}) {
    super(opts.message ?? ERROR_TABLE[code].message, { cause: opts.cause })
    this.name = 'GatewayError'
    this.code = code
    this.statusCode = ERROR_TABLE[code].status
    this.retryable = RETRYABLE.has(code)
    this.requestId = opts.requestId
    this.missingPrerequisites = opts.missingPrerequisites
    this.headers = opts.headers ?? {}
    this.reconcile = opts.reconcile
  }

  toBody (): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message, retryable: this.retryable }
    if (this.requestId !== undefined) error.requestId = this.requestId
    if (this.missingPrerequisites !== undefined) error.missingPrerequisites = this.missingPrerequisites
    if (this.reconcile !== undefined) error.reconcile = this.reconcile
    return { error }
  }
}

export function isGatewayError (err: unknown): err is GatewayError {
  return err instanceof GatewayError
}
