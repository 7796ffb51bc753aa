// Identical reads in flight share one upstream call (docs/design.md#coalescing): the first caller
// of a key starts the call, every caller of the same key until it settles gets the same promise,
// and the key is free again once it has. What a key's entry holds is cleared when it settles: an
// entry left pointing at a settled call kept its parsed answer alive into the old generation
// whenever the map's table was rebuilt (src/core/live-list.ts explains why), as
// async-cache-dedupe's in-flight map did (docs/design.md#hot-path).

interface InFlight<R> { promise: Promise<R> | undefined }

/** a coalesced call, and how many keys have one in flight (docs/design.md#bounded-maps: none once all settle) */
export type Coalesced<A, R> = ((a: A) => Promise<R>) & { inFlight: () => number }

/**
 * `run`, coalesced by `keyOf`: while a call for a key is in flight, calling again with the same key
 * (whatever the other arguments) answers that call's promise and calls `onShared`.
 */
export function coalesced<A, R> (keyOf: (a: A) => string, run: (a: A) => Promise<R>, onShared?: () => void): Coalesced<A, R> {
  // a new map each time this one empties: V8 rebuilds a map's table in the generation the map is
  // in, so a long-lived map's every rebuild (every few insertions and removals) was a table made
  // straight in the old generation, ~170 B a read at 1,000 req/s; a map that empties within a
  // scavenge or two stays young, and so do its tables (docs/design.md#hot-path)
  let inFlight = new Map<string, InFlight<R>>()
  // the call's own promise to every caller, not an async wrapper awaiting it: a waiter of a
  // coalesced read costs no promise of its own (docs/design.md#hot-path)
  const call = (a: A): Promise<R> => {
    const key = keyOf(a)
    const shared = inFlight.get(key)?.promise
    if (shared !== undefined) {
      onShared?.()
      return shared
    }
    const entry: InFlight<R> = { promise: undefined }
    const done = (): void => {
      entry.promise = undefined
      if (inFlight.get(key) === entry) {
        inFlight.delete(key)
        if (inFlight.size === 0) inFlight = new Map()
      }
    }
    const promise = run(a)
    entry.promise = promise
    inFlight.set(key, entry)
    promise.then(done, done)
    return promise
  }
  return Object.assign(call, { inFlight: () => inFlight.size })
}
