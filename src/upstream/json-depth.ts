// The depth bound on what the remote sends (docs/design.md#upstream-wire-rules). JSON.parse
// accepts any nesting, but JSON.stringify, zod and the response serializer recurse, so a
// 10,000-deep answer would overflow the stack on the way out as a 500. An answer deeper than
// this is an invalid response instead; it is found on the text, before parsing, by a loop
// that keeps no stack at all — and most answers need no loop: with no more opening brackets than
// the bound, strings included, nothing can nest past it.

/** deeper than any real A2A answer (a task's payload sits ~6 levels down) */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * True when `bytes`, as JSON, nests objects or arrays more than `max` levels deep — for any text
 * JSON.parse accepts, the verdict a walk of the parsed tree gives — read from the bytes, before
 * parsing (docs/design.md#hot-path): brackets outside strings open and close a level. One pass,
 * no allocation (the tree walk it replaced cost a stack entry per node).
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

/**
 * The same verdict on the decoded text (docs/design.md#hot-path): UTF-8 never encodes a bracket,
 * a quote or a backslash inside another character, so the text's structure is the bytes'. An
 * answer with at most `max` opening brackets, counted by the native `indexOf` (strings included,
 * so this overcounts and never undercounts), cannot nest deeper than `max`: measured 5x cheaper
 * than the byte loop on a task answer, which is only run past that count.
 */
export function exceedsDepth (text: string, max: number = MAX_JSON_DEPTH): boolean {
  let openings = 0
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++openings > max) return exceedsDepthBytes(Buffer.from(text, 'utf8'), max)
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++openings > max) return exceedsDepthBytes(Buffer.from(text, 'utf8'), max)
  return false
}
