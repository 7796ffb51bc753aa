// The front door's JSON-RPC errors (docs/api.md#a2a-front-door): one table from the gateway's
// error codes to a stable JSON-RPC code, the A2A spec's where it has one. An error's message is
// the gateway's own; its data carries the contract code, `retryable`, and where they apply the
// request id, the missing prerequisites and the reconcile path. Never a remote's text.
// The data is written in the caller's generation (`wireError`): v0.3's object, or A2A v1.0's
// array of `@type` objects (§3.3.2, §9.5) — a `google.rpc.ErrorInfo` whose metadata holds the same
// fields as strings, and for -32602 a `google.rpc.BadRequest` naming the field.
import { GatewayError, isErrorCode, isGatewayError, type ErrorCode, type GatewayErrorOptions } from '../core/errors.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'

/** the front door's own codes, in the implementation-defined server range A2A leaves free */
export const FRONT_CODES = {
  forbidden: -32010,
  conflict: -32011,
  ambiguousWrite: -32012,
  upstreamTimeout: -32013,
  upstreamFailed: -32014,
  unavailable: -32015,
  rateLimited: -32016,
  invalidArgusEnvelope: -32020,
  argusSupervisorDisabled: -32021,
  unsupportedArgusOperation: -32022,
  argusSupervisorUnavailable: -32023
} as const

const BY_CODE: Partial<Record<ErrorCode, number>> = {
  invalid_request: RPC_CODES.invalidParams,
  conflicting_fields: RPC_CODES.invalidParams,
  constraints_not_relaxable: RPC_CODES.invalidParams,
  reserved_field: RPC_CODES.invalidParams,
  payload_too_large: RPC_CODES.invalidParams,
  not_found: RPC_CODES.taskNotFound,
  task_not_cancelable: RPC_CODES.taskNotCancelable,
  forbidden: FRONT_CODES.forbidden,
  unauthorized: FRONT_CODES.forbidden,
  policy_rejected: FRONT_CODES.forbidden,
  controller_conflict: FRONT_CODES.forbidden,
  campaign_forbidden: FRONT_CODES.forbidden,
  ambiguous_write: FRONT_CODES.ambiguousWrite,
  upstream_timeout: FRONT_CODES.upstreamTimeout,
  rate_limited: FRONT_CODES.rateLimited,
  invalid_argus_envelope: FRONT_CODES.invalidArgusEnvelope,
  argus_supervisor_disabled: FRONT_CODES.argusSupervisorDisabled,
  unsupported_argus_operation: FRONT_CODES.unsupportedArgusOperation,
  argus_supervisor_unavailable: FRONT_CODES.argusSupervisorUnavailable,
  internal_error: RPC_CODES.internalError
}

/** the JSON-RPC code of a contract code: the table's, else by the code's HTTP class */
export function rpcCodeOf (e: GatewayError): number {
  const own = BY_CODE[e.code]
  if (own !== undefined) return own
  if (e.statusCode === 409 || e.statusCode === 422) return FRONT_CODES.conflict
  if (e.statusCode === 502) return FRONT_CODES.upstreamFailed
  if (e.statusCode === 503) return FRONT_CODES.unavailable
  if (e.statusCode === 504) return FRONT_CODES.upstreamTimeout
  if (e.statusCode >= 400 && e.statusCode < 500) return RPC_CODES.invalidParams
  return RPC_CODES.internalError
}

/** a refusal of one field of the request (`params.message.parts`): v1.0's BadRequest names it */
export class FieldError extends GatewayError {
  constructor (code: ErrorCode, readonly field: string, opts: GatewayErrorOptions = {}) {
    super(code, opts)
  }
}

export const invalidField = (field: string, message: string): FieldError => new FieldError('invalid_request', field, { message })

export interface FieldViolation { field: string; description: string }

/** an error as the door holds it: v0.3's object data, and for -32602 the field it refuses */
export interface RpcError { code: number; message: string; data?: Record<string, unknown>; violation?: FieldViolation }

/** an error of the protocol itself (framing, method, version) */
export const protocolError = (code: number, message: string, data?: Record<string, unknown>): RpcError =>
  data === undefined ? { code, message } : { code, message, data }

/** a JSON-RPC refusal that is also a contract error: -32700, -32600, -32601 carry `code` and `retryable` */
export const framingError = (code: number, contract: ErrorCode, message: string, extra: Record<string, unknown> = {}): RpcError =>
  ({ code, message, data: { code: contract, retryable: false, ...extra }, ...(code === RPC_CODES.invalidParams ? { violation: { field: 'params', description: message } } : {}) })

export function rpcErrorOf (err: unknown): RpcError {
  const e = isGatewayError(err) ? err : new GatewayError('internal_error', { cause: err })
  const { error } = e.toBody()
  const { message: _m, ...data } = error
  const code = rpcCodeOf(e)
  const out: RpcError = { code, message: e.message, data }
  if (code === RPC_CODES.invalidParams) out.violation = { field: e instanceof FieldError ? e.field : 'params', description: e.message }
  return out
}

/** a stored REST error answer (a replayed mutation) as a JSON-RPC error: its code and fields, the gateway's message */
export function rpcErrorOfBody (body: unknown): RpcError {
  const error = (body as { error?: Record<string, unknown> } | null)?.error
  const code = error?.code
  if (error === undefined || !isErrorCode(code)) return rpcErrorOf(undefined)
  const e = new GatewayError(code, {
    message: typeof error.message === 'string' ? error.message : undefined,
    requestId: typeof error.requestId === 'string' ? error.requestId : undefined,
    reconcile: typeof error.reconcile === 'string' ? error.reconcile : undefined,
    missingPrerequisites: Array.isArray(error.missingPrerequisites) ? error.missingPrerequisites as string[] : undefined
  })
  return rpcErrorOf(e)
}

// ---- v1.0's error details ----------------------------------------------------------------------

/** ErrorInfo's domain for the errors A2A and JSON-RPC name */
export const A2A_DOMAIN = 'a2a-protocol.org'
/** ErrorInfo's domain for the gateway's own codes (-32010…-32023): its reason is the contract code */
export const GATEWAY_DOMAIN = 'openoperator-gateway'
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest'

/** each code's error name in A2A v1.0 (§3.3.2, §9.5) in UPPER_SNAKE_CASE without "Error", as §9.5 writes a reason */
const A2A_REASONS: ReadonlyMap<number, string> = new Map([
  [RPC_CODES.parseError, 'JSON_PARSE'],
  [RPC_CODES.invalidRequest, 'INVALID_REQUEST'],
  [RPC_CODES.methodNotFound, 'METHOD_NOT_FOUND'],
  [RPC_CODES.invalidParams, 'INVALID_PARAMS'],
  [RPC_CODES.internalError, 'INTERNAL'],
  [RPC_CODES.taskNotFound, 'TASK_NOT_FOUND'],
  [RPC_CODES.taskNotCancelable, 'TASK_NOT_CANCELABLE'],
  [RPC_CODES.pushNotificationNotSupported, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
  [RPC_CODES.unsupportedOperation, 'UNSUPPORTED_OPERATION'],
  [RPC_CODES.contentTypeNotSupported, 'CONTENT_TYPE_NOT_SUPPORTED'],
  [RPC_CODES.invalidAgentResponse, 'INVALID_AGENT_RESPONSE'],
  [RPC_CODES.extendedAgentCardNotConfigured, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED'],
  [RPC_CODES.extensionSupportRequired, 'EXTENSION_SUPPORT_REQUIRED'],
  [RPC_CODES.versionNotSupported, 'VERSION_NOT_SUPPORTED']
])

/** ErrorInfo's metadata is a map of strings: scalars as text, a list as its JSON */
function metadataOf (data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === 'string') out[k] = v
    else if (typeof v === 'boolean' || typeof v === 'number') out[k] = String(v)
    else if (Array.isArray(v)) out[k] = JSON.stringify(v)
  }
  return out
}

/** `error.data` as the caller's generation writes it: v0.3's object, v1.0's list of details */
export function wireError (e: RpcError, shape: '0.3' | '1.0'): { code: number; message: string; data?: unknown } {
  if (shape === '0.3') return protocolError(e.code, e.message, e.data)
  const a2aReason = A2A_REASONS.get(e.code)
  const contract = e.data?.code
  const reason = a2aReason ?? (typeof contract === 'string' ? contract.toUpperCase() : 'INTERNAL')
  const metadata = metadataOf(e.data ?? {})
  const details: Array<Record<string, unknown>> = [{
    '@type': ERROR_INFO,
    reason,
    domain: a2aReason !== undefined ? A2A_DOMAIN : GATEWAY_DOMAIN,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {})
  }]
  if (e.code === RPC_CODES.invalidParams) {
    details.push({ '@type': BAD_REQUEST, fieldViolations: [e.violation ?? { field: 'params', description: e.message }] })
  }
  return { code: e.code, message: e.message, data: details }
}
