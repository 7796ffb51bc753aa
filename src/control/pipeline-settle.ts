// A sent mutation's outcome (docs/design.md#outcomes): what the remote's answer, or its failure,
// comes to — applied with its effects recorded, rejected, or ambiguous — written compare-and-set
// on its pending record. When the ledger cannot vouch for it, the caller is told what the ledger
// will say. Every mutation ends in one log line and one metric, here or in the pipeline's run.
import { GatewayError } from '../core/errors.js'
import { ambiguousAnswer } from './ambiguous-answer.js'
import { applyResult, type Applied } from './effects.js'
import type { Classified } from './outcome.js'
import { CONTROL_OPERATION, type Mutation, type MutationAnswer, type MutationMetric, type PipelineDeps } from './pipeline-types.js'
import type { Lease } from './wire.js'

/** what the send went out with, and when */
export interface Sent {
  lease: Lease | undefined
  boundTaskId: string | undefined
  /** this process's clock just before the send */
  sentAt: number
}

/** the mutation's metric and its one log line */
export function logMutation (d: PipelineDeps, m: Pick<Mutation, 'req' | 'requestId' | 'started'>, outcome: MutationMetric, extra: Record<string, unknown> = {}): void {
  const { req } = m
  d.onMutation?.(req.operation, outcome)
  // never params: ids, outcome and timing are enough to follow a mutation. An ambiguous one
  // blocks its campaign until an operator resolves it (docs/runbooks/ambiguous-write.md): warn
  const line = { event: 'mutation', caller: req.caller.name, operation: req.operation, campaignId: req.campaignId, requestId: m.requestId, outcome, durationMs: d.now() - m.started, ...extra }
  if (outcome === 'ambiguous') d.logger.warn(line, 'mutation')
  else d.logger.info(line, 'mutation')
}

interface Judged { state: 'applied' | 'rejected' | 'ambiguous'; answer: Applied; why?: string | undefined }

/** the class of the answer, as the state the record takes and the answer it stores */
async function judge (d: PipelineDeps, m: Mutation, c: Classified, s: Sent): Promise<Judged> {
  const { campaignId, operation } = m.req
  const { requestId } = m
  const answeredAt = d.now()
  if (c.cls === 'result') {
    const ttlSeconds = m.body.ttlSeconds as number | undefined
    const applied = await applyResult({ operation, campaignId, requestId, controllerId: m.controllerId, lease: s.lease, boundTaskId: s.boundTaskId, leases: d.leases, ledger: d.ledger, now: d.now }, c.result)
      .then((a) => {
        // a lease granted now measures the remote's clock (docs/design.md#one-clock)
        if (a?.lease !== undefined && ttlSeconds !== undefined) d.clocks.observeLease(a.lease.expiresAt, ttlSeconds, s.sentAt, answeredAt)
        return a
      })
      .catch((err: unknown) => {
        d.logger.error({ err, requestId }, 'recording the effects of an applied mutation failed')
        return undefined
      })
    if (applied === undefined) return { state: 'ambiguous', answer: { ...ambiguousAnswer(campaignId, requestId), taskId: null }, why: 'the result does not have the expected shape' }
    return { state: 'applied', answer: applied }
  }
  if (c.cls === 'rejected') {
    const e = new GatewayError(c.code, { requestId })
    const op = CONTROL_OPERATION[operation]
    if (c.methodNotFound) d.discovery.markMethodNotFound(op !== undefined ? `control.${op}` : 'a2a.message.send')
    return { state: 'rejected', answer: { httpStatus: e.statusCode, body: e.toBody(), taskId: null }, why: c.why }
  }
  return { state: 'ambiguous', answer: { ...ambiguousAnswer(campaignId, requestId), taskId: null }, why: c.why }
}

/** the outcome judged, the lease view forgotten where it is now unproven, and the outcome written */
export async function settle (d: PipelineDeps, m: Mutation, c: Classified, s: Sent): Promise<MutationAnswer> {
  const { campaignId } = m.req
  const { requestId } = m
  const { state, answer, why } = await judge(d, m, c, s)
  // our view of the lease is wrong or unproven after these
  if (state === 'ambiguous' || (c.cls === 'rejected' && c.leaseRefused)) await d.leases.forget(campaignId).catch(() => undefined)

  let written = false
  d.onStep?.('before-outcome', requestId)
  try {
    written = await d.ledger.recordOutcome(requestId, { state, answer: { httpStatus: answer.httpStatus, body: answer.body }, outcomeCode: codeOf(answer), taskId: answer.taskId, at: d.now() })
  } catch (err) {
    d.logger.error({ err, requestId }, 'writing a mutation outcome failed')
  }
  if (!written) {
    // the record says ambiguous, so the lease this answer may have stored is unproven too
    await d.leases.forget(campaignId).catch(() => undefined)
    // the ledger cannot vouch for this outcome (or another replica already turned it
    // ambiguous): the caller is told what the ledger will say
    logMutation(d, m, 'ambiguous', { why: 'the outcome could not be written' })
    return { ...ambiguousAnswer(campaignId, requestId), replayed: false }
  }
  logMutation(d, m, state, why !== undefined ? { why } : {})
  return { httpStatus: answer.httpStatus, body: answer.body, replayed: false }
}

function codeOf (a: Applied): string | null {
  const b = a.body as { error?: { code?: unknown } } | null
  return typeof b?.error?.code === 'string' ? b.error.code : null
}
