// The in-flight list (src/core/live-list.ts) and the read coalescer (src/argus/coalesce.ts): both
// keep nothing of an entry once it is done — the reason they exist (docs/design.md#hot-path) —
// and otherwise behave as the Set and the in-flight map they replace.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { LiveList, type LiveNode } from '../../src/core/live-list.js'
import { coalesced } from '../../src/argus/coalesce.js'

describe('LiveList', () => {
  it('holds what a Set would, in its order, under any sequence of adds and removes, and a removed node keeps nothing', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(20)), { maxLength: 200 }), (ops) => {
      const list = new LiveList<string>()
      const model = new Map<number, LiveNode<string>>()
      let id = 0
      for (const [add, pick] of ops) {
        if (add || model.size === 0) {
          model.set(id, list.add(`item-${id}`, id))
          id++
        } else {
          const key = [...model.keys()][pick % model.size]!
          const node = model.get(key)!
          list.remove(node)
          list.remove(node) // twice: the second does nothing
          expect(node).toEqual({ item: undefined, at: key, prev: undefined, next: undefined })
          model.delete(key)
        }
        expect(list.size).toBe(model.size)
        // oldest first, as a Set iterates
        expect([...list.entries()].map(([item, at]) => `${item}@${at}`)).toEqual([...model.keys()].map((k) => `item-${k}@${k}`))
        // the walk the hot path takes: from first along next, nothing allocated per entry
        const walked: string[] = []
        for (let n = list.first; n !== undefined; n = n.next) walked.push(n.item!)
        expect(walked).toEqual([...model.keys()].map((k) => `item-${k}`))
      }
    }), { numRuns: runs(100) })
  })
})

describe('coalesced', () => {
  it('shares one call per key while it is in flight, answers each caller, and frees the key once it settles', async () => {
    const calls: string[] = []
    let shared = 0
    const releases: Array<(v: string) => void> = []
    const f = coalesced((a: { key: string; n: number }) => a.key, async (a) => {
      calls.push(`${a.key}#${a.n}`)
      return await new Promise<string>((resolve) => releases.push(resolve))
    }, () => { shared++ })
    const a1 = f({ key: 'a', n: 1 })
    const a2 = f({ key: 'a', n: 2 })
    const b1 = f({ key: 'b', n: 1 })
    expect(calls).toEqual(['a#1', 'b#1'])
    expect(shared).toBe(1)
    releases[0]!('A')
    releases[1]!('B')
    expect(await Promise.all([a1, a2, b1])).toEqual(['A', 'A', 'B'])
    // settled: the next call of the key is a call of its own
    const a3 = f({ key: 'a', n: 3 })
    expect(calls).toEqual(['a#1', 'b#1', 'a#3'])
    releases[2]!('A3')
    expect(await a3).toBe('A3')
  })

  it('shares a failure with every caller of the call, and the next call tries again', async () => {
    let n = 0
    const f = coalesced((k: string) => k, async () => {
      n++
      await new Promise((resolve) => setImmediate(resolve))
      if (n === 1) throw new Error('boom')
      return n
    })
    const results = await Promise.allSettled([f('k'), f('k')])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await f('k')).toBe(2)
  })
  it('against a model: every caller gets the call in flight for its key when it called, however the calls settle and the map empties', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(
        fc.record({ op: fc.constant('call' as const), key: fc.constantFrom('a', 'b', 'c') }),
        fc.record({ op: fc.constant('settle' as const), pick: fc.nat() })
      ), { maxLength: 60 }),
      async (ops) => {
        let next = 0
        const pending: Array<{ id: number; key: string; resolve: (v: number) => void }> = []
        const f = coalesced((k: string) => k, async (k) => await new Promise<number>((resolve) => { pending.push({ id: next, key: k, resolve }); next++ }))
        // the model: the call in flight per key, and what each caller must get
        const inFlight = new Map<string, number>()
        const expected: number[] = []
        const got: Array<Promise<number>> = []
        for (const o of ops) {
          if (o.op === 'call') {
            if (!inFlight.has(o.key)) inFlight.set(o.key, next)
            expected.push(inFlight.get(o.key)!)
            got.push(f(o.key))
          } else if (pending.length > 0) {
            const [p] = pending.splice(o.pick % pending.length, 1)
            inFlight.delete(p!.key)
            p!.resolve(p!.id)
            // the settlement reaches the coalescer before the next operation
            await new Promise((resolve) => setImmediate(resolve))
          }
        }
        for (const p of pending) p.resolve(p.id)
        expect(await Promise.all(got)).toEqual(expected)
      }
    ), { numRuns: runs(200) })
  })
})
