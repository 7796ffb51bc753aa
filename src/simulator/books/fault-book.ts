// Injected faults, consumed in the order they were injected. Each request takes at most one
// fault of the kinds that make sense for it; `times` counts down and the fault is removed
// at zero. Argus-only kinds wait for an Argus read so a stray tasks/get cannot eat them.
import { formatFaultRule } from './fault-spec.js'
import type { ControlOperation, Fault, FaultTarget } from '../types.js'

export type RouteName = 'agent-card' | 'agent-json' | 'health' | 'a2a-docs' | 'wrong-route' | 'rpc'

/** What a request is, as far as fault targets are concerned. */
export interface FaultContext {
  route: RouteName
  rpcMethod?: string
  argusOperation?: string
  /** the path of a wrong route */
  path?: string
  /** the campaign-control operation the call is, when campaign control is served */
  operation?: ControlOperation | 'submit'
}

/** A fault in force, as `GET /_sim/faults` lists it: the rule, and how many requests it still takes (null: every one until cleared). */
export interface FaultListing {
  rule: string
  remaining: number | null
}

interface Entry {
  target: FaultTarget
  fault: Fault
  remaining: number
  text: string
}

/** Faults that only an Argus message/send can take (they shape the Argus answer). */
export type ArgusFault = Extract<Fault, { kind: 'argus-error' | 'task-states' }>
export type RequestFault = Exclude<Fault, ArgusFault>

const RPC_ONLY: ReadonlySet<Fault['kind']> = new Set(['rpc-error', 'wrong-id', 'result', 'raw-result', 'hold'])

export class FaultBook {
  private entries: Entry[] = []

  inject (target: FaultTarget, fault: Fault, times = Infinity, text?: string): void {
    if (!(times > 0)) throw new TypeError('times must be positive')
    if (fault.kind === 'task-states' && fault.states.length === 0) throw new TypeError('task-states needs at least one state')
    this.entries.push({ target, fault, remaining: times, text: text ?? formatFaultRule(target, fault) })
  }

  /** Removes every fault; returns how many there were. */
  clear (): number {
    const n = this.entries.length
    this.entries = []
    return n
  }

  list (): FaultListing[] {
    return this.entries.map((e) => ({ rule: e.text, remaining: Number.isFinite(e.remaining) ? e.remaining : null }))
  }

  /** The next fault for this request, excluding the Argus-only kinds. */
  takeForRequest (ctx: FaultContext): RequestFault | undefined {
    return this.take(ctx, (f): f is RequestFault => {
      if (f.kind === 'argus-error' || f.kind === 'task-states') return false
      return ctx.route === 'rpc' || !RPC_ONLY.has(f.kind)
    })
  }

  /** The next fault of one Argus-only kind, taken when an Argus read gets that far. */
  takeArgus<K extends ArgusFault['kind']>(ctx: FaultContext, kind: K): Extract<ArgusFault, { kind: K }> | undefined {
    return this.take(ctx, (f): f is Extract<ArgusFault, { kind: K }> => f.kind === kind)
  }

  private take<F extends Fault>(ctx: FaultContext, accept: (f: Fault) => f is F): F | undefined {
    const index = this.entries.findIndex((e) => matches(e.target, ctx) && accept(e.fault))
    if (index < 0) return undefined
    const entry = this.entries[index]!
    entry.remaining -= 1
    if (entry.remaining <= 0) this.entries.splice(index, 1)
    return entry.fault as F
  }
}

function matches (target: FaultTarget, ctx: FaultContext): boolean {
  if (target === 'card') return ctx.route === 'agent-card' || ctx.route === 'agent-json'
  if (typeof target === 'string') return target === ctx.route
  if ('wrongRoute' in target) return ctx.route === 'wrong-route' && ctx.path === target.wrongRoute
  if (ctx.route !== 'rpc') return false
  if ('operation' in target) return ctx.operation === target.operation
  if ('rpcMethod' in target) return target.rpcMethod === ctx.rpcMethod
  return ctx.argusOperation !== undefined && target.argusOperation === ctx.argusOperation
}
