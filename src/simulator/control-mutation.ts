// One mutation, applied at most once: a request id the campaign already applied answers
// with its stored result and applies nothing; otherwise the attempt runs, and only an
// applied attempt is stored. Refusals and other answers are not remembered, so the same id
// may be tried again (nothing of it was applied). The book is witnessed just before the
// attempt, so the applied log shows the state the mutation was judged against.
import type { ControlBook, Sender, StoredResult } from './control-book.js'
import type { Refusal } from './control-rules.js'
import { refusalError } from './control-rules.js'
import type { RpcOutcome } from './rpc-outcome.js'
import { rpcError, rpcResult } from './rpc-outcome.js'

export type Attempt =
  | { applied: unknown; taskId?: string }
  | { refused: Refusal }
  /** Not applied, answered as is (e.g. a task that cannot be canceled). */
  | { outcome: RpcOutcome }

export interface MutationKey {
  operation: StoredResult['operation']
  campaignId: string
  requestId: string
  /** The controller_id and controller_epoch the request carried, for the applied log. */
  sender: Sender
}

export function mutateOnce(book: ControlBook, rpcId: unknown, key: MutationKey, attempt: () => Attempt): RpcOutcome {
  const prior = book.stored(key.campaignId, key.requestId)
  if (prior !== undefined) {
    if (prior.operation !== key.operation) return invalidParams(rpcId, 'request_id was already used for another operation')
    return rpcResult(rpcId, structuredClone(prior.result))
  }
  const before = book.witness(key.campaignId, key.operation, key.sender)
  const result = attempt()
  if ('refused' in result) return rpcError(rpcId, refusalError(result.refused))
  if ('outcome' in result) return result.outcome
  book.record(key.campaignId, key.requestId, { operation: key.operation, result: result.applied, taskId: result.taskId }, key.sender, before)
  return rpcResult(rpcId, result.applied)
}

/** The extension answers malformed params with -32602 on every profile (it is its own handler). */
export function invalidParams(rpcId: unknown, message: string): RpcOutcome {
  return rpcError(rpcId, { code: -32602, message })
}
