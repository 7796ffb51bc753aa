// How deep a parsed JSON value nests, measured without recursion (docs/design.md#front-door):
// JSON.parse reads any depth, but every recursive walk after it — JSON.stringify, canonicalize, a
// spelling comparison, a canonical card — overflows the stack somewhere past ten thousand levels,
// and an overflow is a 500. A walk that may meet a caller's or a remote's value asks this first.
// (A remote's answer is bounded on its text before parsing: src/upstream/json-depth.ts.)

/** whether `v` nests deeper than `max` levels, `v` itself being level 1 (a scalar is level 0) */
export function deeperThan (v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]]
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!
    if (x === null || typeof x !== 'object') continue
    if (depth > max) return true
    // only containers are pushed: a request's many strings cost no entry (docs/design.md#hot-path)
    if (Array.isArray(x)) {
      for (const y of x) if (y !== null && typeof y === 'object') stack.push([y, depth + 1])
    } else {
      for (const k in x) {
        const y = (x as Record<string, unknown>)[k]
        if (y !== null && typeof y === 'object' && Object.hasOwn(x, k)) stack.push([y, depth + 1])
      }
    }
  }
  return false
}
