// The depth bound on what the remote sends (docs/design.md#upstream-wire-rules). JSON.parse
// accepts any nesting, but JSON.stringify, zod and the response serializer recurse, so a
// 10,000-deep answer would overflow the stack on the way out as a 500. A parsed answer deeper
// than this is an invalid response instead. The walk keeps its own stack: it cannot overflow.

/** deeper than any real A2A answer (a task's payload sits ~6 levels down) */
export const MAX_JSON_DEPTH = 64

/** true when `value` nests objects or arrays more than `max` levels deep */
export function exceedsDepth (value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false
  const stack: Array<{ v: object; d: number }> = [{ v: value, d: 1 }]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.d > max) return true
    const children = Array.isArray(top.v) ? top.v as unknown[] : Object.values(top.v)
    for (const c of children) {
      if (c !== null && typeof c === 'object') stack.push({ v: c, d: top.d + 1 })
    }
  }
  return false
}
