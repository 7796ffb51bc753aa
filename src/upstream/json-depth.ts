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

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * The same verdict as `exceedsDepth(JSON.parse(text))` for any text JSON.parse accepts, from the
 * bytes, before parsing (docs/design.md#hot-path): brackets outside strings open and close a
 * level. One pass, no allocation — the walk of the parsed tree cost a stack entry per node.
 * What it says of text that is not JSON does not matter: JSON.parse refuses it anyway.
 */
export function exceedsDepthBytes (bytes: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!
    if (inString) {
      if (b === BACKSLASH) i++
      else if (b === QUOTE) inString = false
    } else if (b === QUOTE) {
      inString = true
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--
    }
  }
  return false
}
