// Reading a text the way a decoder reads an encoding of the secret's bytes
// (docs/design.md#secret-echo), from a candidate found by src/core/secret-encodings.ts: what the
// decoder skips is skipped (whitespace in base64, raw or JSON-escaped, anywhere; the same and `:`
// or `-` between hex bytes), case folded where the alphabet has none, base64's url-safe `-` and
// `_` read as `+` and `/`, and one layer of percent-encoding read through (`%2B`, `%20`, `%41`).
// The common candidate — a character that is, or is not, the needle's next one — is settled by a
// table lookup without a call (docs/design.md#hot-path).

/** how a form is read: base64 skips whitespace anywhere; hex folds case and skips whitespace, `:` and `-` between bytes; base32 (and base32hex) folds case */
export const BASE64 = 0
export const HEX = 1
export const BASE32 = 2
export type Kind = typeof BASE64 | typeof HEX | typeof BASE32

/** a form with its anchor: the needle's character at `at`, which the search looks for */
export interface Entry { needle: string; kind: Kind; at: number }

/** the value of a hex digit, or -1 */
function hexValue (c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  const l = c | 0x20
  return l >= 97 && l <= 102 ? l - 87 : -1
}

/** the byte a `%XX` at i writes, or -1 */
export function percentAt (s: string, i: number): number {
  if (s.charCodeAt(i) !== 37) return -1
  const h = hexValue(s.charCodeAt(i + 1))
  const l = hexValue(s.charCodeAt(i + 2))
  return h < 0 || l < 0 ? -1 : (h << 4) | l
}

/**
 * The text with one layer of percent-encoding read (`%XX` as the byte it writes, one character a
 * byte); `from`, when given, learns where each character of the result starts in the text (and, at
 * the result's length, the text's end)
 */
export function percentDecoded (s: string, from?: number[]): string {
  let out = ''
  let last = 0
  for (let i = s.indexOf('%'); i !== -1; i = s.indexOf('%', i + 1)) {
    const b = percentAt(s, i)
    if (b < 0) continue
    if (from !== undefined) for (let k = last; k < i; k++) from.push(k)
    from?.push(i)
    out += s.slice(last, i) + String.fromCharCode(b)
    last = i + 3
    i += 2
  }
  if (from !== undefined) for (let k = last; k <= s.length; k++) from.push(k)
  return last === 0 ? s : out + s.slice(last)
}

/** whether the text holds a `%XX` that writes one of the bytes `wanted` marks */
export function percentWrites (s: string, wanted: Uint8Array): boolean {
  for (let i = s.indexOf('%'); i !== -1; i = s.indexOf('%', i + 1)) {
    const b = percentAt(s, i)
    if (b >= 0 && wanted[b] === 1) return true
  }
  return false
}

/** the width in the text of the symbol last read by symbolAt or symbolBefore */
let width = 1

/** the character at i, a `%XX` read as the byte it writes (-1 past the end) */
function symbolAt (s: string, i: number): number {
  const b = percentAt(s, i)
  if (b >= 0) {
    width = 3
    return b
  }
  width = 1
  return i < s.length ? s.charCodeAt(i) : -1
}

/** the character that ends at i (exclusive), a `%XX` read as the byte it writes (-1 before the start) */
function symbolBefore (s: string, i: number): number {
  const b = i >= 3 ? percentAt(s, i - 3) : -1
  if (b >= 0) {
    width = 3
    return b
  }
  width = 1
  return i > 0 ? s.charCodeAt(i - 1) : -1
}

const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 13 || c === 10
/** a JSON escape's letter for a line break or a tab */
const isEscapedSpace = (c: number): boolean => c === 110 || c === 114 || c === 116

/** past what a decoder skips, from i on: whitespace raw, percent-encoded or JSON-escaped; with `marks`, `:` and `-` too */
function skipForward (s: string, i: number, marks: boolean): number {
  for (;;) {
    const c = symbolAt(s, i)
    if (isSpace(c) || (marks && (c === 58 || c === 45))) {
      i += width
    } else if (c === 92) {
      // a JSON escape: one backslash or more (JSON in JSON), then n, r or t
      let j = i + width
      let e = symbolAt(s, j)
      while (e === 92) {
        j += width
        e = symbolAt(s, j)
      }
      if (!isEscapedSpace(e)) return i
      i = j + width
    } else {
      return i
    }
  }
}

/** back past what a decoder skips, from i (exclusive) */
function skipBackward (s: string, i: number, marks: boolean): number {
  for (;;) {
    const c = symbolBefore(s, i)
    if (isSpace(c) || (marks && (c === 58 || c === 45))) {
      i -= width
    } else if (isEscapedSpace(c)) {
      let j = i - width
      if (symbolBefore(s, j) !== 92) return i
      do j -= width
      while (symbolBefore(s, j) === 92)
      i = j
    } else {
      return i
    }
  }
}

/** a character as the kind reads it: base64's url-safe `-` and `_` as `+` and `/`; hex folded to lower case, base32 to upper */
function fold (c: number, kind: Kind): number {
  if (kind === BASE64) return c === 45 ? 43 : c === 95 ? 47 : c
  if (kind === HEX) return c >= 65 && c <= 90 ? c | 0x20 : c
  return c >= 97 && c <= 122 ? c & ~0x20 : c
}

/** the symbol at i as the kind reads it, JSON's `\/` read as `/` in base64 */
function readForward (s: string, i: number, kind: Kind): number {
  const c = symbolAt(s, i)
  if (c === 92 && kind === BASE64) {
    let j = i + width
    let e = symbolAt(s, j)
    while (e === 92) {
      j += width
      e = symbolAt(s, j)
    }
    if (e === 47) {
      width = j + width - i
      return 47
    }
  }
  return fold(c, kind)
}

/** the symbol ending at i (exclusive) as the kind reads it */
function readBackward (s: string, i: number, kind: Kind): number {
  const c = symbolBefore(s, i)
  if (c === 47 && kind === BASE64) {
    const own = width
    let j = i - own
    if (symbolBefore(s, j) === 92) {
      do j -= width
      while (symbolBefore(s, j) === 92)
      width = i - j
    } else {
      width = own
    }
  }
  return fold(c, kind)
}

/** a decoder may skip something before the needle's character k: anywhere in base64, between bytes in hex, never in base32 */
const skipsBefore = (kind: Kind, k: number): boolean => kind === BASE64 || (kind === HEX && (k & 1) === 0)

/** in a kind's table: a character that may start something to read through (`%`, `\\`, what is skipped) */
const SPECIAL = 1
/**
 * Per kind, each ASCII character as the kind reads it when it stands for itself (folded, `-` and
 * `_` as `+` and `/` in base64), SPECIAL, or 0 when no form holds it: the common case of a
 * candidate — a character that is or is not the needle's next one — without a call
 */
const TABLES = ([BASE64, HEX, BASE32] as Kind[]).map((kind) => Uint8Array.from({ length: 128 }, (_, c) => {
  const ch = String.fromCharCode(c)
  if (c === 37 || (kind !== BASE32 && (c === 92 || isSpace(c))) || (kind === HEX && (c === 58 || c === 45))) return SPECIAL
  const alphabet = kind === BASE64 ? /[A-Za-z0-9+/_-]/ : kind === HEX ? /[0-9a-fA-F]/ : /[A-Za-z0-9]/
  return alphabet.test(ch) ? fold(c, kind) : 0
}))

/** where the match found by matchAt ends (exclusive) */
export let matchEnd = 0

/**
 * Whether the form is in the text around p, where the scan found its anchor (the character, or
 * its `%XX`): its start, or -1 (its end in matchEnd)
 */
export function matchAt (s: string, p: number, e: Entry): number {
  const n = e.needle
  const kind = e.kind
  const table = TABLES[kind]!
  let i = s.charCodeAt(p) === 37 ? p + 3 : p + 1
  for (let k = e.at + 1; k < n.length; k++) {
    const c = s.charCodeAt(i)
    const v = c < 128 ? table[c]! : 0
    const want = n.charCodeAt(k)
    if (v === want) {
      i++
    } else if (v !== SPECIAL) {
      return -1
    } else {
      if (skipsBefore(kind, k)) i = skipForward(s, i, kind === HEX)
      if (readForward(s, i, kind) !== want) return -1
      i += width
    }
  }
  let j = p
  for (let k = e.at - 1; k >= 0; k--) {
    const c = s.charCodeAt(j - 1)
    const v = c < 128 ? table[c]! : 0
    const want = n.charCodeAt(k)
    // a character stands for itself unless it ends a `%XX` or follows a backslash, raw or `%5C` (`\n`, `\/`)
    const itself = s.charCodeAt(j - 3) !== 37 && s.charCodeAt(j - 2) !== 92 && s.charCodeAt(j - 4) !== 37
    if (itself && v === want) {
      j--
    } else if (itself && v !== SPECIAL) {
      return -1
    } else {
      if (skipsBefore(kind, k + 1)) j = skipBackward(s, j, kind === HEX)
      if (readBackward(s, j, kind) !== want) return -1
      j -= width
    }
  }
  matchEnd = i
  return j
}
