// The campaign-control JSON-RPC methods, found by the names the options advertise:
// read_control, request_status, and the claim/renew/release/intervene mutations. Every
// request id reaching a mutating method is counted first, replays and bad params included.
import type { z } from 'zod'
import type { ControlBook } from './control-book.js'
import type { ResolvedControl } from './control-options.js'
import { CONTROL_OPERATIONS } from './control-options.js'
import { ClaimParams, InterveneParams, ReadControlParams, ReleaseParams, RenewParams, RequestStatusParams, campaignIdOf, requestIdOf } from './control-params.js'
import { authority, claim, policyRefusal, renew } from './control-rules.js'
import type { Attempt } from './control-mutation.js'
import { invalidParams, mutateOnce } from './control-mutation.js'
import type { RpcOutcome } from './rpc-outcome.js'
import { rpcResult } from './rpc-outcome.js'
import { describeIssue } from './rpc-schemas.js'
import type { ControlOperation } from './types.js'

/**
 * The operation a method name serves; 'removed' for the wire's standard cancel
 * (`tasks/cancel`, v1.0 `CancelTask`) when cancel is nulled out.
 */
export function controlRoute(control: ResolvedControl | undefined, method: string, standardCancel = 'tasks/cancel'): ControlOperation | 'removed' | undefined {
  if (control === undefined) return undefined
  const op = CONTROL_OPERATIONS.find((o) => control.methods[o] === method)
  if (op !== undefined) return op
  return method === standardCancel && control.methods.cancel === null ? 'removed' : undefined
}

type Ctx = { control: ResolvedControl; book: ControlBook; rpcId: unknown }

export function handleControl(control: ResolvedControl, book: ControlBook, op: Exclude<ControlOperation, 'cancel'>, rpcId: unknown, params: unknown): RpcOutcome {
  const ctx: Ctx = { control, book, rpcId }
  if (op === 'read_control') {
    return parsed(ctx, ReadControlParams, params, (p) => rpcResult(rpcId, { lease: book.liveLease(p.campaign_id) }))
  }
  if (op === 'request_status') {
    return parsed(ctx, RequestStatusParams, params, (p) => {
      const stored = book.stored(p.campaign_id, p.request_id)
      const state = stored === undefined ? 'not_applied' : 'applied'
      return rpcResult(rpcId, { request_id: p.request_id, state, ...(stored?.taskId === undefined ? {} : { task_id: stored.taskId }) })
    })
  }
  const requestId = requestIdOf(params)
  if (requestId !== undefined) book.countReceipt(requestId, op, campaignIdOf(params))
  if (op === 'claim_control') {
    return mutation(ctx, op, ClaimParams, params, (p) => {
      const lease = claim(book, p.campaign_id, p.controller_id, p.ttl_seconds)
      return typeof lease === 'string' ? { refused: lease } : { applied: { lease } }
    })
  }
  if (op === 'renew_control') {
    return mutation(ctx, op, RenewParams, params, (p) => ({ applied: { lease: renew(book, p.campaign_id, p.controller_id, p.controller_epoch, p.ttl_seconds) } }), true)
  }
  if (op === 'release_control') {
    return mutation(ctx, op, ReleaseParams, params, (p) => {
      book.setLease(p.campaign_id, null)
      return { applied: { released: true } }
    }, true)
  }
  return mutation(ctx, op, InterveneParams, params, (p) => {
    book.addIntervention(p.campaign_id, { requestId: p.request_id, controllerId: p.controller_id, epoch: p.controller_epoch, intervention: p.intervention, at: book.now() })
    return { applied: { accepted: true } }
  }, true)
}

type Schema = z.ZodType<{ campaign_id: string; request_id: string; constraints?: unknown; controller_id: string; controller_epoch?: number }>

/** Validate, then at most once: policy, then (for lease holders' mutations) authority, then apply. */
function mutation<S extends Schema>(ctx: Ctx, operation: 'claim_control' | 'renew_control' | 'release_control' | 'intervene', schema: S, params: unknown, apply: (p: z.infer<S>) => Attempt, needsLease = false): RpcOutcome {
  return parsed(ctx, schema, params, (p) =>
    mutateOnce(ctx.book, ctx.rpcId, { operation, campaignId: p.campaign_id, requestId: p.request_id, sender: { controllerId: p.controller_id, epoch: p.controller_epoch ?? null } }, () => {
      const refusal = policyRefusal(ctx.control, p.constraints) ??
        (needsLease ? authority(ctx.book, ctx.control, p.campaign_id, p.controller_id, p.controller_epoch ?? -1) : undefined)
      return refusal !== undefined ? { refused: refusal } : apply(p)
    })
  )
}

function parsed<S extends z.ZodType>(ctx: Ctx, schema: S, params: unknown, then: (p: z.infer<S>) => RpcOutcome): RpcOutcome {
  const result = schema.safeParse(params)
  return result.success ? then(result.data) : invalidParams(ctx.rpcId, describeIssue(result.error))
}
