// The read gate (docs/design.md#load-shedding) on a fake clock: the bound on reads in flight plus
// waiting, the shed of a read that could not finish before its deadline, discovery's priority.
import { describe, expect, it } from 'vitest'
import { createReadGate, type Ticket } from '../../src/upstream/read-gate.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'

const never = (): AbortSignal => new AbortController().signal

function gateAt (slots: number, max: number): { gate: ReturnType<typeof createReadGate>; clock: { t: number } } {
  const clock = { t: 0 }
  return { gate: createReadGate({ slots, max, now: () => clock.t }), clock }
}

async function shedOf (p: Promise<unknown>): Promise<UpstreamCallError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(UpstreamCallError)
  return err as UpstreamCallError
}

describe('read gate', () => {
  it('sheds at once past in-flight plus waiting, nothing sent, with a Retry-After hint', async () => {
    const { gate } = gateAt(2, 3)
    await gate.acquire(10_000, never())
    await gate.acquire(10_000, never())
    const waiting = gate.acquire(10_000, never())
    const err = await shedOf(gate.acquire(10_000, never()))
    expect(err.kind).toBe('saturated')
    expect(err.nothingSent).toBe(true)
    expect(err.retryAfterSeconds).toBe(1)
    expect(gate.stats()).toMatchObject({ inFlight: 2, waiting: 1 })
    void waiting
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
})
