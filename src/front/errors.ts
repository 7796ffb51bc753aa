// The front door's JSON-RPC errors (docs/api.md#a2a-front-door): one table from the gateway's
// error codes to a stable JSON-RPC code, the A2A spec's where it has one. An error's message is
// the gateway's own; its data carries the contract code, `retryable`, and where they apply the
// request id, the missing prerequisites and the reconcile path. Never a remote's text.
import { GatewayError, isErrorCode, isGatewayError, type ErrorCode } from '../core/errors.js'
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

export interface RpcError { code: number; message: string; data?: Record<string, unknown> }

/** an error of the protocol itself (framing, method, version): no contract code */
export const protocolError = (code: number, message: string, data?: Record<string, unknown>): RpcError =>
  data === undefined ? { code, message } : { code, message, data }

export function rpcErrorOf (err: unknown): RpcError {
  const e = isGatewayError(err) ? err : new GatewayError('internal_error', { cause: err })
  const { error } = e.toBody()
  const { message: _m, ...data } = error
  return { code: rpcCodeOf(e), message: e.message, data }
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
