// The read gate (docs/design.md#load-shedding) on a fake clock: the bound on reads in flight plus
// waiting, the shed of a read that could not finish before its deadline, discovery's priority.
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { runs } from '../helpers/runs.js'
import { createReadGate, freeTimes, type Ticket } from '../../src/upstream/read-gate.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { LiveList } from '../../src/core/live-list.js'

const never = (): AbortSignal => new AbortController().signal

function gateAt (slots: number, max: number): { gate: ReturnType<typeof createReadGate>; clock: { t: number } } {
  const clock = { t: 0 }
  return { gate: createReadGate({ slots, max, now: () => clock.t }), clock }
}

// The gate's deadline timers are fake too, and all run once a test ends: a read the test left waiting
// times out then, within that test, and if nothing handles its promise the unhandled rejection fails
// the test (test/helpers/unhandled-rejections.ts). On real timers a dropped waiter's deadline of
// 10_000 on the fake clock was a real 10 s timer that rejected its promise in whatever file the
// worker ran 10 s later (isolate: false), or never, had the worker exited by then.
beforeEach(() => { vi.useFakeTimers() })
afterEach(() => {
  vi.runAllTimers()
  vi.useRealTimers()
})

async function shedOf (p: Promise<unknown>): Promise<UpstreamCallError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(UpstreamCallError)
  return err as UpstreamCallError
}

describe('read gate', () => {
  it('sheds at once past in-flight plus waiting, nothing sent, with a Retry-After hint', async () => {
    const { gate } = gateAt(2, 3)
    const first = await gate.acquire(10_000, never())
    await gate.acquire(10_000, never())
    const waiting = gate.acquire(10_000, never())
    const err = await shedOf(gate.acquire(10_000, never()))
    expect(err.kind).toBe('saturated')
    expect(err.nothingSent).toBe(true)
    expect(err.retryAfterSeconds).toBe(1)
    expect(gate.stats()).toMatchObject({ inFlight: 2, waiting: 1 })
    // the read that waits is settled here, not dropped: it takes the socket given back
    gate.release(first, false)
    await expect(waiting).resolves.toBeDefined()
    expect(gate.stats()).toMatchObject({ inFlight: 2, waiting: 0 })
  })

  it('sheds a read that cannot finish before its deadline, and a waiter once the estimate says so', async () => {
    const { gate, clock } = gateAt(1, 100)
    const first = await gate.acquire(10_000, never())
    clock.t = 2000
    gate.release(first, true) // a read holds its socket ~2 s
    const held = await gate.acquire(5000, never())
    // one ahead: starts at ~4000, ends at ~6000 > 5000
    expect((await shedOf(gate.acquire(5000, never()))).kind).toBe('saturated')
    expect(gate.stats().waiting).toBe(0)
    // within its deadline: it waits
    const waiter = gate.acquire(7000, never())
    expect(gate.stats().waiting).toBe(1)
    clock.t = 4000
    gate.release(held, true)
    await expect(waiter).resolves.toMatchObject({ start: 4000 })
    expect(gate.stats().averageMs).toBe(2000)
  })

  it('a waiter whose deadline passes leaves the queue as a timeout; discovery waits first and is never shed', async () => {
    const { gate } = gateAt(1, 2)
    const t: Ticket = await gate.acquire(10_000, never())
    const ac = new AbortController()
    const waiting = gate.acquire(10_000, ac.signal)
    const discovery = gate.acquire(10_000, never(), true) // past the bound, still queued, at the front
    ac.abort()
    const err = await shedOf(waiting)
    expect(err.kind).toBe('timeout')
    expect(err.nothingSent).toBe(true)
    gate.release(t, false)
    await expect(discovery).resolves.toBeDefined()
    expect(gate.stats().averageMs).toBeUndefined()
  })

  it('every way out of the queue rejects the acquire its caller holds, and nothing else: the deadline, the signal, both at once, the estimate', async () => {
    const { gate, clock } = gateAt(1, 100)
    const held = await gate.acquire(60_000, never())
    const byDeadline = shedOf(gate.acquire(1000, never()))
    const aborted = new AbortController()
    const bySignal = shedOf(gate.acquire(60_000, aborted.signal))
    // the signal aborted at the deadline, before the gate's timer and after it
    const abortFirst = new AbortController()
    setTimeout(() => { abortFirst.abort() }, 2000)
    const signalFirst = shedOf(gate.acquire(2000, abortFirst.signal))
    const timerFirst = new AbortController()
    const deadlineFirst = shedOf(gate.acquire(2000, timerFirst.signal))
    setTimeout(() => { timerFirst.abort() }, 2000)
    aborted.abort()
    vi.advanceTimersByTime(2000)
    for (const err of await Promise.all([byDeadline, bySignal, signalFirst, deadlineFirst])) expect(err).toMatchObject({ kind: 'timeout', nothingSent: true })
    expect(gate.stats().waiting).toBe(0)
    // queued without an estimate, then futile by the first one: shed when the socket comes back
    const futile = shedOf(gate.acquire(5000, never()))
    clock.t = 4000
    gate.release(held, true)
    expect(await futile).toMatchObject({ kind: 'saturated', nothingSent: true })
    expect(gate.stats()).toMatchObject({ inFlight: 0, waiting: 0, averageMs: 4000 })
  })
})

describe('when the sockets are expected free (freeTimes)', () => {
  /** the definition: every held socket at its start plus the average (not before now), the free ones now, soonest first */
  const definition = (starts: number[], slots: number, t: number, avg: number): number[] => {
    const at = starts.map((s) => Math.max(t, s + avg))
    while (at.length < slots) at.push(t)
    return at.sort((a, b) => a - b)
  }

  it('equals the sorted definition, for starts in order and out of it (a wall clock stepped back), into a reused array', () => {
    const out: number[] = []
    fc.assert(fc.property(
      fc.array(fc.record({ start: fc.integer({ min: -5000, max: 5000 }), released: fc.boolean() }), { maxLength: 24 }), fc.boolean(), fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: -1000, max: 6000 }), fc.integer({ min: 0, max: 3000 }),
      (raw, inOrder, slots, t, avg) => {
        const taken = inOrder ? [...raw].sort((a, b) => a.start - b.start) : raw
        // every ticket taken, then some given back: the list as the gate leaves it
        const held = new LiveList<Ticket>()
        const nodes = taken.map(({ start }) => held.add({ start }))
        taken.forEach(({ released }, i) => { if (released) held.remove(nodes[i]!) })
        const starts = taken.filter(({ released }) => !released).map(({ start }) => start)
        // the same array each time, left longer or shorter by the run before
        expect([...freeTimes(held, slots, t, avg, out)]).toEqual(definition(starts, slots, t, avg))
      }), { numRuns: runs(2000) })
  })
})
