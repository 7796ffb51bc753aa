// The bound in front of the read connections (docs/design.md#load-shedding). The read Pool has a
// fixed number of sockets; without a gate its queue grows without limit and a burst waits past
// every deadline. The gate counts reads in flight plus reads waiting, sheds a read at once when
// that count reaches its bound, and sheds a waiting read as soon as it can no longer finish
// before its deadline, judged from a moving average of how long a read holds its socket. A
// shed read never left the process: `saturated`, `nothingSent`, with a Retry-After hint.
import { UpstreamCallError } from './errors.js'
import { LiveList, type LiveNode } from '../core/live-list.js'

export interface ReadGateOptions {
  /** reads that may hold a socket at once (the Pool's connections) */
  slots: number
  /** reads in flight plus reads waiting; past it a read is shed at once */
  max: number
  now?: () => number
}

export interface ReadGate {
  /**
   * Waits for a socket. `priority` (discovery) skips the bound and the estimate and waits at the
   * front; a waiter leaves the queue as a `timeout` at its deadline (a timer armed only for a read
   * that has to wait: the free-socket path allocates none) or when `signal` aborts.
   */
  acquire: (deadline: number, signal?: AbortSignal, priority?: boolean) => Promise<Ticket>
  /** gives the socket back; `representative` reads (JSON-RPC, not discovery) feed the estimate */
  release: (ticket: Ticket, representative: boolean) => void
  stats: () => { inFlight: number; waiting: number; averageMs: number | undefined }
}

/** one socket held: when it was taken */
export interface Ticket { start: number }
/** a ticket and its place on the gate's list of held sockets */
type Held = Ticket & { node?: LiveNode<Held> }

interface Waiter { deadline: number; resolve: (t: Ticket) => void; reject: (err: unknown) => void; signal: AbortSignal | undefined; onAbort: () => void; timer: NodeJS.Timeout | undefined }

const ALPHA = 0.2

export function retryAfterSeconds (averageMs: number | undefined): number {
  return Math.min(60, Math.max(1, Math.ceil((averageMs ?? 1000) / 1000)))
}

/**
 * When each socket is expected to be free, soonest first (into `out`, which is returned): a free
 * one now, a held one when it has been held for the average. Waiter `p` takes the (p mod
 * slots)-th of them, p div slots rounds later, and holds it for the average too. Tickets are held
 * in the order they were taken, so their times come out in order unless the wall clock stepped
 * back between two takes: the sort, and its allocation, is only paid then (it ran on every
 * acquire and release while reads queued).
 */
export function freeTimes (held: LiveList<Ticket>, slots: number, t: number, avg: number, out: number[] = []): number[] {
  out.length = 0
  // the free sockets, free now: before every held one (each is at t or later)
  for (let i = held.size; i < slots; i++) out.push(t)
  let sorted = true
  // along the nodes, not an iterator: nothing allocated per held socket (src/core/live-list.ts)
  for (let n = held.first; n !== undefined; n = n.next) {
    if (n.item === undefined) continue
    const at = Math.max(t, n.item.start + avg)
    if (out.length > 0 && at < out[out.length - 1]!) sorted = false
    out.push(at)
  }
  return sorted ? out : out.sort((a, b) => a - b)
}

export function createReadGate (o: ReadGateOptions): ReadGate {
  const slots = Math.max(1, Math.min(o.slots, o.max))
  const now = o.now ?? Date.now
  const waiting: Waiter[] = []
  // in the order taken; a list, not a Set, which kept tickets into the old generation (src/core/live-list.ts)
  const held = new LiveList<Held>()
  let averageMs: number | undefined

  const shed = (): UpstreamCallError =>
    new UpstreamCallError('saturated', { nothingSent: true, retryAfterSeconds: retryAfterSeconds(averageMs) })

  /** freeTimes' array, reused: each caller reads it at once (docs/design.md#hot-path) */
  const freeScratch: number[] = []
  const freeAt = (t: number, avg: number): number[] => freeTimes(held, slots, t, avg, freeScratch)

  /**
   * Plus a quarter of the average as a margin: the average is an estimate, and a read predicted
   * to end just at its deadline would most likely hold a socket only to time out.
   */
  function expectedEnd (free: number[], position: number, avg: number): number {
    return free[position % slots]! + (Math.floor(position / slots) + 1) * avg + avg / 4
  }

  function leave (w: Waiter): void {
    w.signal?.removeEventListener('abort', w.onAbort)
    if (w.timer !== undefined) clearTimeout(w.timer)
  }

  /** after the estimate changes: a waiter that can no longer finish in time goes now, not at its deadline */
  function shedFutile (): void {
    if (averageMs === undefined || waiting.length === 0) return
    const free = freeAt(now(), averageMs)
    let position = 0
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i]!
      if (expectedEnd(free, position, averageMs) <= w.deadline) { position++; continue }
      waiting.splice(i--, 1)
      leave(w)
      w.reject(shed())
    }
  }

  function admit (): void {
    while (held.size < slots && waiting.length > 0) {
      const w = waiting.shift()!
      leave(w)
      w.resolve(take())
    }
  }

  function take (): Ticket {
    const t: Held = { start: now(), node: undefined }
    t.node = held.add(t)
    return t
  }

  return {
    acquire: async (deadline, signal, priority = false) => {
      if (held.size < slots && waiting.length === 0) return take()
      if (!priority) {
        if (held.size + waiting.length >= o.max) throw shed()
        if (averageMs !== undefined && expectedEnd(freeAt(now(), averageMs), waiting.length, averageMs) > deadline) throw shed()
      }
      if (signal?.aborted === true) throw new UpstreamCallError('timeout', { nothingSent: true })
      return await new Promise<Ticket>((resolve, reject) => {
        const w: Waiter = {
          deadline,
          resolve,
          reject,
          signal,
          timer: undefined,
          onAbort: () => {
            const i = waiting.indexOf(w)
            if (i < 0) return
            waiting.splice(i, 1)
            leave(w)
            reject(new UpstreamCallError('timeout', { nothingSent: true }))
          }
        }
        signal?.addEventListener('abort', w.onAbort, { once: true })
        w.timer = setTimeout(w.onAbort, Math.max(0, deadline - now()))
        w.timer.unref()
        if (priority) waiting.unshift(w)
        else waiting.push(w)
      })
    },
    release: (ticket, representative) => {
      const node = (ticket as Held).node
      if (node?.item === undefined) return
      held.remove(node)
      if (representative) {
        const heldMs = now() - ticket.start
        averageMs = averageMs === undefined ? heldMs : averageMs + ALPHA * (heldMs - averageMs)
        shedFutile()
      }
      admit()
    },
    stats: () => ({ inFlight: held.size, waiting: waiting.length, averageMs })
  }
}
