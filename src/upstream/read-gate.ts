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

/** what one gate holds (createReadGate): its bound, its clock, the waiters and the held sockets, the estimate */
interface GateState {
  readonly slots: number
  readonly max: number
  readonly now: () => number
  readonly waiting: Waiter[]
  /** in the order taken; a list, not a Set, which kept tickets into the old generation (src/core/live-list.ts) */
  readonly held: LiveList<Held>
  /** how long a representative read holds its socket, a moving average; undefined before the first */
  averageMs: number | undefined
  /** freeTimes' array, reused: each caller reads it at once (docs/design.md#hot-path) */
  readonly freeScratch: number[]
}

export function createReadGate (o: ReadGateOptions): ReadGate {
  const g: GateState = {
    slots: Math.max(1, Math.min(o.slots, o.max)),
    max: o.max,
    now: o.now ?? Date.now,
    waiting: [],
    held: new LiveList<Held>(),
    averageMs: undefined,
    freeScratch: []
  }
  return {
    acquire: (deadline, signal, priority) => acquire(g, deadline, signal, priority),
    release: (ticket, representative) => { release(g, ticket, representative) },
    stats: () => ({ inFlight: g.held.size, waiting: g.waiting.length, averageMs: g.averageMs })
  }
}

async function acquire (g: GateState, deadline: number, signal: AbortSignal | undefined, priority = false): Promise<Ticket> {
  if (g.held.size < g.slots && g.waiting.length === 0) return take(g)
  if (!priority) {
    if (g.held.size + g.waiting.length >= g.max) throw shed(g)
    if (g.averageMs !== undefined && expectedEnd(g, freeAt(g, g.now(), g.averageMs), g.waiting.length, g.averageMs) > deadline) throw shed(g)
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
        const i = g.waiting.indexOf(w)
        if (i < 0) return
        g.waiting.splice(i, 1)
        leave(w)
        reject(new UpstreamCallError('timeout', { nothingSent: true }))
      }
    }
    signal?.addEventListener('abort', w.onAbort, { once: true })
    w.timer = setTimeout(w.onAbort, Math.max(0, deadline - g.now()))
    w.timer.unref()
    if (priority) g.waiting.unshift(w)
    else g.waiting.push(w)
  })
}

function release (g: GateState, ticket: Ticket, representative: boolean): void {
  const node = (ticket as Held).node
  if (node?.item === undefined) return
  g.held.remove(node)
  if (representative) {
    const heldMs = g.now() - ticket.start
    g.averageMs = g.averageMs === undefined ? heldMs : g.averageMs + ALPHA * (heldMs - g.averageMs)
    shedFutile(g)
  }
  admit(g)
}

function shed (g: GateState): UpstreamCallError {
  return new UpstreamCallError('saturated', { nothingSent: true, retryAfterSeconds: retryAfterSeconds(g.averageMs) })
}

function freeAt (g: GateState, t: number, avg: number): number[] {
  return freeTimes(g.held, g.slots, t, avg, g.freeScratch)
}

/**
 * Plus a quarter of the average as a margin: the average is an estimate, and a read predicted
 * to end just at its deadline would most likely hold a socket only to time out.
 */
function expectedEnd (g: GateState, free: number[], position: number, avg: number): number {
  return free[position % g.slots]! + (Math.floor(position / g.slots) + 1) * avg + avg / 4
}

function leave (w: Waiter): void {
  w.signal?.removeEventListener('abort', w.onAbort)
  if (w.timer !== undefined) clearTimeout(w.timer)
}

/** after the estimate changes: a waiter that can no longer finish in time goes now, not at its deadline */
function shedFutile (g: GateState): void {
  const averageMs = g.averageMs
  if (averageMs === undefined || g.waiting.length === 0) return
  const free = freeAt(g, g.now(), averageMs)
  let position = 0
  for (let i = 0; i < g.waiting.length; i++) {
    const w = g.waiting[i]!
    if (expectedEnd(g, free, position, averageMs) <= w.deadline) { position++; continue }
    g.waiting.splice(i--, 1)
    leave(w)
    w.reject(shed(g))
  }
}

function admit (g: GateState): void {
  while (g.held.size < g.slots && g.waiting.length > 0) {
    const w = g.waiting.shift()!
    leave(w)
    w.resolve(take(g))
  }
}

function take (g: GateState): Ticket {
  const t: Held = { start: g.now(), node: undefined }
  t.node = g.held.add(t)
  return t
}
