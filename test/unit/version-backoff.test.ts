// The back-off of a version the remote refused with -32009 (docs/design.md#protocol-versions):
// the first wait, doubling per refused probe up to the maximum, a flood counted once, an answer
// over the version starting it again, an answer to a read sent before the refusal proving nothing.
import { describe, expect, it } from 'vitest'
import { createVersionBackoff, VERSION_RETRY_FIRST_MS, VERSION_RETRY_MAX_MS } from '../../src/discovery/version-backoff.js'

describe('createVersionBackoff', () => {
  it('doubles the wait for each refused probe, up to the maximum', () => {
    const b = createVersionBackoff()
    let now = 1_000_000
    const waits: number[] = []
    for (let i = 0; i < 9; i++) {
      expect(b.refuse('1.0', now)).toBe(true)
      const until = b.refusedUntil('1.0', now)!
      waits.push(until - now)
      expect(b.refusedUntil('1.0', until - 1)).toBe(until)
      expect(b.refusedUntil('1.0', until)).toBeUndefined()
      now = until
    }
    expect(waits).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
    expect(waits[0]).toBe(VERSION_RETRY_FIRST_MS)
    expect(Math.max(...waits)).toBe(VERSION_RETRY_MAX_MS)
    expect(b.refusedUntil('0.3', now)).toBeUndefined()
  })

  it('a flood counts once; an answer before the wait ends proves nothing, one after it starts again', () => {
    const b = createVersionBackoff()
    expect(b.refuse('1.0', 0)).toBe(true)
    for (let t = 1; t < 100; t += 10) expect(b.refuse('1.0', t)).toBe(false)
    expect(b.refusedUntil('1.0', 100)).toBe(VERSION_RETRY_FIRST_MS)
    // an answer to a read sent before the refusal
    b.answered('1.0', 200)
    expect(b.refusedUntil('1.0', 200)).toBe(VERSION_RETRY_FIRST_MS)
    // the probe refused: twice the wait
    expect(b.refuse('1.0', VERSION_RETRY_FIRST_MS)).toBe(true)
    expect(b.refusedUntil('1.0', VERSION_RETRY_FIRST_MS)).toBe(3 * VERSION_RETRY_FIRST_MS)
    // the next probe answered: the next refusal waits the first delay again
    b.answered('1.0', 3 * VERSION_RETRY_FIRST_MS)
    expect(b.refuse('1.0', 4 * VERSION_RETRY_FIRST_MS)).toBe(true)
    expect(b.refusedUntil('1.0', 4 * VERSION_RETRY_FIRST_MS)).toBe(5 * VERSION_RETRY_FIRST_MS)
    b.clear()
    expect(b.refusedUntil('1.0', 4 * VERSION_RETRY_FIRST_MS)).toBeUndefined()
  })
})
