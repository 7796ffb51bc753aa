// One POST /a2a/ call as the handlers take it: the body parsed (or not), what faults it can
// match, the version it asked for, and, for a message/send, how it asked to be answered. Built
// by the route (or kept by a `hold` fault and built again on delivery); read by the dispatcher,
// both wires and the campaign-control submission.
import type { FaultContext } from '../books/fault-book.js'

export type ParsedBody = { ok: true; value: unknown } | { ok: false }

export function parseBody (raw: string): ParsedBody {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown }
  } catch {
    return { ok: false }
  }
}

/** One POST /a2a/ call as the handler takes it (now, or when a held one is delivered). */
export interface RpcInput {
  body: ParsedBody
  ctx: FaultContext
  /** The A2A-Version header as sent; undefined when absent. */
  version: string | undefined
}

/** How a message/send asked to be answered, as its wire spells it. */
export interface SendMode {
  /** Answer once the task is finished. */
  blocking: boolean
  /** The call explicitly asked for an answer at once (what a submission must ask). */
  atOnce: boolean
  /** The rule a submission that did not ask breaks, for the -32602 message. */
  atOnceRule: string
}
