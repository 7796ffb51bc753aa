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
   * front; a waiter leaves the queue as a `timeout` at its deadline (by the gate's one timer, armed
   * for the soonest deadline waiting: no timer per waiter) or when `signal` aborts.
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

/** a read waiting for a socket; `onAbort` only when it came with a signal */
interface Waiter { deadline: number; resolve: (t: Ticket) => void; reject: (err: unknown) => void; signal: AbortSignal | undefined; onAbort: (() => void) | undefined }

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
  // written over by index, its length set once at the end: emptied first (`length = 0`), V8 let go
  // of the array's store and made a new one on every call, while reads queued (docs/design.md#hot-path)
  let k = 0
  // the free sockets, free now: before every held one (each is at t or later)
  for (let i = held.size; i < slots; i++) out[k++] = t
  let sorted = true
  // along the nodes, not an iterator: nothing allocated per held socket (src/core/live-list.ts)
  for (let n = held.first; n !== undefined; n = n.next) {
    if (n.item === undefined) continue
    const at = Math.max(t, n.item.start + avg)
    if (k > 0 && at < out[k - 1]!) sorted = false
    out[k++] = at
  }
  out.length = k
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
  /**
   * One timer for every waiter's deadline, armed for `timerAt`, the soonest deadline waiting when it
   * was armed; left to run when that waiter goes earlier (it then finds nothing due and is armed
   * again for the next). A timer per waiter was a Timeout and, its delay being new each time, a
   * list of Node's timers for every read that waited: ~1.5 KB a waiting read (docs/design.md#hot-path)
   */
  timer: NodeJS.Timeout | undefined
  timerAt: number
}

export function createReadGate (o: ReadGateOptions): ReadGate {
  const g: GateState = {
    slots: Math.max(1, Math.min(o.slots, o.max)),
    max: o.max,
    now: o.now ?? Date.now,
    waiting: [],
    held: new LiveList<Held>(),
    averageMs: undefined,
    freeScratch: [],
    timer: undefined,
    timerAt: Infinity
  }
  return {
    acquire: (deadline, signal, priority) => acquire(g, deadline, signal, priority),
    release: (ticket, representative) => { release(g, ticket, representative) },
    stats: () => ({ inFlight: g.held.size, waiting: g.waiting.length, averageMs: g.averageMs })
  }
}

/** the promise itself, not an async frame around it: a read that finds a socket free pays one promise (docs/design.md#hot-path) */
function acquire (g: GateState, deadline: number, signal: AbortSignal | undefined, priority = false): Promise<Ticket> {
  if (g.held.size < g.slots && g.waiting.length === 0) return Promise.resolve(take(g))
  if (!priority) {
    if (g.held.size + g.waiting.length >= g.max) return Promise.reject(shed(g))
    if (g.averageMs !== undefined && expectedEnd(g, freeAt(g, g.now(), g.averageMs), g.waiting.length, g.averageMs) > deadline) return Promise.reject(shed(g))
  }
  if (signal?.aborted === true) return Promise.reject(timedOut())
  return new Promise<Ticket>((resolve, reject) => { wait(g, { deadline, resolve, reject, signal, onAbort: undefined }, priority) })
}

const timedOut = (): UpstreamCallError => new UpstreamCallError('timeout', { nothingSent: true })

function wait (g: GateState, w: Waiter, priority: boolean): void {
  if (w.signal !== undefined) {
    w.onAbort = () => {
      const i = g.waiting.indexOf(w)
      if (i < 0) return
      g.waiting.splice(i, 1)
      leave(w)
      w.reject(timedOut())
    }
    w.signal.addEventListener('abort', w.onAbort, { once: true })
  }
  if (priority) g.waiting.unshift(w)
  else g.waiting.push(w)
  if (g.timer === undefined || w.deadline < g.timerAt) arm(g, w.deadline, g.now())
}

/** the gate's timer for `at`, from `from` (now, or the deadline just passed when the clock stands behind it) */
function arm (g: GateState, at: number, from: number): void {
  if (g.timer !== undefined) clearTimeout(g.timer)
  g.timerAt = at
  g.timer = setTimeout(expire, Math.max(0, at - from), g)
  g.timer.unref()
}

/** the gate's timer: every waiter whose deadline has come leaves as a timeout, and it is armed for the soonest left */
function expire (g: GateState): void {
  g.timer = undefined
  const due = g.timerAt
  let next = Infinity
  for (let i = 0; i < g.waiting.length; i++) {
    const w = g.waiting[i]!
    if (w.deadline <= due) {
      g.waiting.splice(i--, 1)
      leave(w)
      w.reject(timedOut())
    } else if (w.deadline < next) next = w.deadline
  }
  if (next !== Infinity) arm(g, next, Math.max(due, g.now()))
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
  if (w.onAbort !== undefined) w.signal?.removeEventListener('abort', w.onAbort)
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
