// Measured clocks only (docs/design.md#one-clock): every deadline is written and judged on the
// ledger's clock, and a lease on the remote's. This replica measures how far its own clock is
// from the ledger's (at start, every 30 s, and before a mutation when it has no measurement) and
// from the remote's: from a lease a claim or renewal returns (`expires_at` against the TTL asked)
// and from the `Date` of a lease read's answer, each within the round trip. A lease-dependent
// send waits for a measurement of the remote's clock: its own, or one another replica wrote to the
// ledger no more than 30 s ago, else a lease read takes one. A step of this replica's wall clock
// against its monotonic clock, past a quarter of the margin, invalidates every measurement at
// once; a smaller drift moves the remote's measurement with it. Each offset is an interval
// [lo, hi] (peer minus local, ms): a lease decision takes its worst end, the margin checks the
// value nearest zero (a measurement can understate a skew by its width, never invent one).
import { GatewayError } from '../core/errors.js'

export type ClockPeer = 'ledger' | 'remote'

/** peer minus local, ms: the peer's clock reads local + x for some x in [lo, hi] */
export interface ClockInterval { lo: number; hi: number }

/** the remote's clock as measured, against the ledger's: what replicas share (docs/design.md#one-clock) */
export interface SharedClocks {
  /** the remote's offset from the ledger's clock, stamped by the ledger with its own now */
  put: (remoteMinusLedger: ClockInterval) => Promise<void>
  /** the freshest such measurement no older than `maxAgeMs` on the ledger's clock, with its age */
  fresh: (maxAgeMs: number) => Promise<(ClockInterval & { ageMs: number }) | undefined>
}

export interface ClockWatchOptions {
  /** this replica's wall clock */
  now: () => number
  /** this replica's monotonic clock (default performance.now): steps of `now` are judged against it */
  monotonic?: () => number
  /** the ledger's clock (one round trip) */
  ledgerNow: () => Promise<number>
  /** the largest offset either peer may have (GATEWAY_LEASE_SAFETY_MS) */
  marginMs: number
  /** how often the ledger's offset is measured (default 30 s) */
  intervalMs?: number
  /** measurements shared through the ledger; absent (one writer): none */
  shared?: SharedClocks | undefined
  onOffset?: (peer: ClockPeer, offsetMs: number) => void
  /** the wall clock stepped: every measurement was dropped */
  onStep?: (stepMs: number) => void
  onError?: (err: unknown) => void
}

export interface ClockWatch {
  /** measures the ledger's offset now */
  measureLedger: () => Promise<number>
  /** a lease a claim or renewal returned: its expiry against the TTL asked, sent and answered at */
  observeLease: (expiresAtSeconds: number, ttlSeconds: number, sentAt: number, answeredAt: number) => void
  /** the `Date` of a remote's answer (whole seconds), sent and answered at */
  observeDate: (dateMs: number, sentAt: number, answeredAt: number) => void
  /**
   * Before a mutation. 503 clock_skew when a peer's offset is past the margin, or when the remote's
   * clock cannot be measured. A claim is judged on the ledger's offset alone (it depends on no
   * lease, and is how the remote's clock is measured again once put right); anything else first
   * has a measurement of the remote's clock — its own, a fresh shared one, or `measure` (a lease
   * read) — and answers it, for the lease decision.
   */
  ready: (o: { claim: boolean; measure?: () => Promise<unknown> }) => Promise<ClockInterval | undefined>
  /** the remote's offset now, if measured (the lease decision of a send already past `ready`) */
  remote: () => ClockInterval | undefined
  /** the offsets last measured (undefined: not yet) and whether both are within the margin */
  status: () => { ok: boolean; ledgerOffsetMs: number | undefined; remoteOffsetMs: number | undefined; remoteWidthMs: number | undefined; marginMs: number }
  start: () => Promise<void>
  stop: () => void
}

/** the point of [lo, hi] nearest zero */
export const nearestZero = ({ lo, hi }: ClockInterval): number => lo > 0 ? lo : hi < 0 ? hi : 0

/**
 * what a lease-dependent send must still have of the lease beyond the safety margin: the
 * measured offset's width and the offset itself, added (docs/design.md#one-clock). With
 * `lo <= hi`, `hi <= |nearestZero| + width`, so a lease past this on the local clock has at least
 * the margin left on the remote's, whichever end of the interval is true
 */
export const clockAllowanceMs = (remote: ClockInterval): number => (remote.hi - remote.lo) + Math.abs(nearestZero(remote))

/** 503 clock_skew: this replica's offset to `peer`, past the margin; nothing was sent */
export function clockSkew (peer: ClockPeer, m: ClockInterval, marginMs: number): GatewayError {
  const ms = Math.round(nearestZero(m))
  return new GatewayError('clock_skew', {
    message: `This replica's clock is ${Math.abs(ms)} ms ${ms > 0 ? 'behind' : 'ahead of'} the ${peer}'s, past the ${marginMs} ms safety margin; nothing was sent. Fix the clock (NTP) or retry on another replica.`
  })
}

/** how long another replica's measurement may be used (docs/design.md#one-clock) */
export const SHARED_MAX_AGE_MS = 30_000

interface Measured extends ClockInterval {
  /** a shared measurement is used until then (monotonic ms); an own one until a step */
  until?: number
}

/** one replica's clock watch: what it was built with, and what it measured */
interface ClockState {
  o: ClockWatchOptions
  mono: () => number
  /** the ledger's offset, and the remote's, as last measured (undefined: not measured, or dropped) */
  ledger: Measured | undefined
  remote: Measured | undefined
  /** wall minus monotonic when last looked at: its change is a step of the wall clock */
  anchor: number
  /** a quarter of the margin */
  stepLimit: number
  timer: NodeJS.Timeout | undefined
}

const report = (s: ClockState, peer: ClockPeer, m: ClockInterval): void => { s.o.onOffset?.(peer, nearestZero(m)) }
const past = (s: ClockState, m: ClockInterval | undefined): boolean => m !== undefined && Math.abs(nearestZero(m)) > s.o.marginMs

/**
 * the wall clock against the monotonic one since last looked: a step past a quarter of the
 * margin drops every measurement (true); a smaller drift moves the remote's with it
 */
function stepped (s: ClockState): boolean {
  const d = s.o.now() - s.mono() - s.anchor
  s.anchor += d
  if (Math.abs(d) > s.stepLimit) {
    s.ledger = undefined
    s.remote = undefined
    s.o.onStep?.(d)
    return true
  }
  // this clock moved d against the monotonic clock: a peer's is now d nearer (or further)
  if (s.remote !== undefined && d !== 0) s.remote = { lo: s.remote.lo - d, hi: s.remote.hi - d, until: s.remote.until }
  return false
}

async function measureLedger (s: ClockState): Promise<number> {
  stepped(s)
  const sent = s.o.now()
  const theirs = await s.o.ledgerNow()
  const back = s.o.now()
  if (stepped(s)) throw new GatewayError('clock_skew', { message: 'This replica\'s clock stepped while it was measured; nothing was sent. Retry.' })
  s.ledger = { lo: theirs - back, hi: theirs - sent }
  report(s, 'ledger', s.ledger)
  return nearestZero(s.ledger)
}

function setRemote (s: ClockState, m: ClockInterval): void {
  s.remote = m
  report(s, 'remote', m)
  const l = s.ledger
  if (s.o.shared === undefined || l === undefined) return
  // remote − ledger = (remote − local) − (ledger − local)
  s.o.shared.put({ lo: Math.floor(m.lo - l.hi), hi: Math.ceil(m.hi - l.lo) }).catch((err: unknown) => s.o.onError?.(err))
}

/** a measurement is taken only when no step came between its send and its answer */
function observe (s: ClockState, m: ClockInterval): void {
  if (stepped(s)) return
  setRemote(s, m)
}

async function fromShared (s: ClockState): Promise<void> {
  const l = s.ledger
  if (s.o.shared === undefined || l === undefined) return
  const m = await s.o.shared.fresh(SHARED_MAX_AGE_MS)
  if (m === undefined || stepped(s) || s.ledger === undefined) return
  // remote − local = (remote − ledger) + (ledger − local)
  s.remote = { lo: m.lo + l.lo, hi: m.hi + l.hi, until: s.mono() + SHARED_MAX_AGE_MS - m.ageMs }
  report(s, 'remote', s.remote)
}

/** a shared measurement past its time is dropped */
function expireShared (s: ClockState): void {
  if (s.remote?.until !== undefined && s.mono() > s.remote.until) s.remote = undefined
}

async function ready (s: ClockState, { claim, measure }: { claim: boolean; measure?: () => Promise<unknown> }): Promise<ClockInterval | undefined> {
  stepped(s)
  if (s.ledger === undefined) await measureLedger(s)
  if (past(s, s.ledger)) throw clockSkew('ledger', s.ledger!, s.o.marginMs)
  if (claim) return undefined
  expireShared(s)
  if (s.remote === undefined) await fromShared(s)
  if (s.remote === undefined && measure !== undefined) {
    await measure()
    stepped(s)
  }
  if (s.remote === undefined) {
    throw new GatewayError('clock_skew', {
      message: 'The remote\'s clock has not been measured, and a lease read could not measure it (its answer had no Date); nothing was sent. A claim measures it.'
    })
  }
  if (past(s, s.remote)) throw clockSkew('remote', s.remote, s.o.marginMs)
  return { lo: s.remote.lo, hi: s.remote.hi }
}

function remoteNow (s: ClockState): ClockInterval | undefined {
  stepped(s)
  expireShared(s)
  return s.remote === undefined ? undefined : { lo: s.remote.lo, hi: s.remote.hi }
}

function status (s: ClockState): ReturnType<ClockWatch['status']> {
  const { ledger, remote } = s
  return {
    ok: !past(s, ledger) && !past(s, remote),
    ledgerOffsetMs: ledger === undefined ? undefined : nearestZero(ledger),
    remoteOffsetMs: remote === undefined ? undefined : nearestZero(remote),
    remoteWidthMs: remote === undefined ? undefined : remote.hi - remote.lo,
    marginMs: s.o.marginMs
  }
}

async function start (s: ClockState): Promise<void> {
  await measureLedger(s).catch((err: unknown) => s.o.onError?.(err))
  s.timer ??= setInterval(() => { measureLedger(s).catch((err: unknown) => s.o.onError?.(err)) }, s.o.intervalMs ?? 30_000)
  s.timer.unref()
}

function stop (s: ClockState): void {
  if (s.timer !== undefined) clearInterval(s.timer)
  s.timer = undefined
}

export function createClockWatch (o: ClockWatchOptions): ClockWatch {
  const mono = o.monotonic ?? (() => performance.now())
  const s: ClockState = { o, mono, ledger: undefined, remote: undefined, anchor: o.now() - mono(), stepLimit: o.marginMs / 4, timer: undefined }
  return {
    measureLedger: async () => await measureLedger(s),
    observeLease: (expiresAt, ttl, sentAt, answeredAt) => {
      // the remote set expires_at to its now plus the TTL, in whole seconds (floored, rounded or
      // ceiled: a second either way), at some moment between the send and the answer
      const remoteAt = (expiresAt - ttl) * 1000
      observe(s, { lo: remoteAt - 1000 - answeredAt, hi: remoteAt + 1000 - sentAt })
    },
    observeDate: (dateMs, sentAt, answeredAt) => {
      // HTTP's Date is the remote's now floored to the second, taken between the send and the answer
      observe(s, { lo: dateMs - answeredAt, hi: dateMs + 1000 - sentAt })
    },
    ready: async (r) => await ready(s, r),
    remote: () => remoteNow(s),
    status: () => status(s),
    start: async () => { await start(s) },
    stop: () => { stop(s) }
  }
}
