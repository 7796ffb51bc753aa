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
 * The same verdict for an answer held both as bytes and as their decoded text (docs/design.md#hot-path).
 * An answer with at most `max` opening brackets cannot nest deeper than `max`; they are counted on
 * the text by the native `indexOf` (strings included, so this overcounts and never undercounts;
 * UTF-8 never encodes a bracket inside another character, so the text holds the bytes' brackets),
 * measured 5x cheaper than the byte loop on a task answer. Only past that count does the loop read
 * the bytes, so a large answer is never encoded again.
 */
export function exceedsDepth (text: string, bytes: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  return moreOpeningsThan(text, max) && exceedsDepthBytes(bytes, max)
}

const OPENINGS = ['{', '['] as const

function moreOpeningsThan (text: string, max: number): boolean {
  let openings = 0
  for (const open of OPENINGS) {
    for (let i = text.indexOf(open); i !== -1; i = text.indexOf(open, i + 1)) if (++openings > max) return true
  }
  return false
}
