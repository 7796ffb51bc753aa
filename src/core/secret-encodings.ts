// The secret's bytes as an encoding writes them (docs/design.md#secret-echo): base64 (standard or
// url-safe), hex, base32 and base32hex (RFC 4648 §4–§7). Each form is one needle, built once in a
// canonical spelling (base64's standard alphabet, hex in lower case, base32 in upper case), which
// stands for every spacing and case a decoder accepts: the text is read at a candidate the way a
// decoder reads it (src/core/secret-reading.ts). A candidate is an occurrence of an anchor
// character, found by `indexOf` (a memchr); anchors are chosen so that forms share them, so the
// search's cost grows with the few distinct anchors, not with the forms (docs/design.md#hot-path).
import { BASE32, BASE64, HEX, matchAt, percentAt, type Entry, type Kind } from './secret-reading.js'

export interface Needle { text: string; kind: Kind }

/**
 * The bytes of an encoding that depend on the secret alone, for each alignment: inside a longer
 * string the secret starts at byte offset 0 … group - 1 of a group of `group` bytes (3 for base64,
 * 5 for base32), and only the groups it fills entirely encode the same way whatever surrounds it.
 */
function aligned (bytes: Buffer, group: number): Buffer[] {
  return Array.from({ length: group }, (_, skip) => {
    const rest = bytes.subarray(skip)
    return rest.subarray(0, rest.length - (rest.length % group))
  }).filter((b) => b.length > 0)
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
const BASE32HEX_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUV'

/** RFC 4648 base32 (§6) or base32hex (§7) of whole 5-byte groups, no padding */
function base32 (bytes: Buffer, alphabet = BASE32_ALPHABET): string {
  let out = ''
  for (let i = 0; i + 5 <= bytes.length; i += 5) {
    let v = 0n
    for (let j = 0; j < 5; j++) v = (v << 8n) | BigInt(bytes[i + j]!)
    for (let k = 7; k >= 0; k--) out += alphabet[Number((v >> BigInt(k * 5)) & 31n)]
  }
  return out
}
const base32hex = (bytes: Buffer): string => base32(bytes, BASE32HEX_ALPHABET)

/** every encoded form of the secret, canonical: base64 at 3 alignments, hex, base32 and base32hex at 5 */
export function byteForms (secret: string): Needle[] {
  const bytes = Buffer.from(secret, 'utf8')
  const forms: Needle[] = [
    ...aligned(bytes, 3).map((b) => ({ text: b.toString('base64'), kind: BASE64 as Kind })),
    { text: bytes.toString('hex'), kind: HEX },
    ...aligned(bytes, 5).flatMap((b) => [{ text: base32(b), kind: BASE32 as Kind }, { text: base32hex(b), kind: BASE32 as Kind }])
  ]
  // base32 and base32hex agree on a group of digits 2–7 alone (`2222…`): one form then
  return [...new Map(forms.map((f) => [`${f.kind}${f.text}`, f])).values()]
}

/**
 * How often a character turns up in an ordinary answer, roughly, per 2 KiB: the candidates an
 * anchor costs. Counted over the recorded A2A answers (test/fixtures/recorded: JSON keys, UUIDs,
 * `kind`, `text`, `json`) and English prose: upper-case letters are rare but for the keys' `Id`,
 * digits and `a`–`f` common (hex ids), then lower case by English letter frequency.
 */
const FREQUENCY: Array<[string, number]> = [
  ['QXYFUZ', 0.5], ['DKGWELHVz', 1], ['APCBRJ', 1.5], ['q', 2], ['wTNM', 3], ['jSO', 4], ['y', 5], ['x96', 7],
  ['Ib', 8], ['73', 10], ['5kv4', 11], ['8', 13], ['f', 15], ['2', 18], ['hg', 20], ['1m', 25], ['lu', 30], ['p', 35],
  ['c', 40], ['0d', 50], ['nio', 60], ['r', 70], ['s', 80], ['ta', 90], ['e', 110]
]
const frequency = (c: string): number => FREQUENCY.find(([chars]) => chars.includes(c))?.[1] ?? 8
/** one more `indexOf` pass over an answer, in candidates' worth: a pass over 2 KiB costs about what five candidates do (BENCHMARKS.md#secret-forms-14) */
const PASS = 5

/** the characters the search looks for to find `c` as this kind reads it: both cases where the kind folds case */
function scanChars (c: string, kind: Kind): string[] {
  if (kind === BASE64 || c.toLowerCase() === c.toUpperCase()) return [c]
  return [c.toLowerCase(), c.toUpperCase()]
}

/** the needle as the anchors' keys spell it: lower case where the kind folds case */
const spelled = (f: Needle): string => f.kind === BASE64 ? f.text : f.text.toLowerCase()

/** a character a form can be anchored on: base64's `+` and `/` have other spellings (`-`, `_`, `\/`) */
const anchorable = (c: string, kind: Kind): boolean => kind !== BASE64 || /[A-Za-z0-9]/.test(c)

/**
 * The anchors: each form assigned the character whose passes and candidates cost least, a pass
 * already made for another form costing nothing more (greedy, cheapest per form first). Returns
 * each character to look for with the forms anchored on it.
 */
export function anchors (forms: Needle[]): Map<string, Entry[]> {
  const chosen = new Map<string, Entry[]>()
  let left = forms.filter((f) => f.text !== '')
  while (left.length > 0) {
    let best: { key: string; cost: number; takers: Needle[] } | undefined
    // a key: `0` and a character of base64, `1` and a character of a case-folding kind, in lower case
    const keys = new Set(left.flatMap((f) => [...f.text].filter((c) => anchorable(c, f.kind)).map((c) => f.kind === BASE64 ? `0${c}` : `1${c.toLowerCase()}`)))
    for (const key of keys) {
      const kind: Kind = key[0] === '0' ? BASE64 : HEX
      const c = key.slice(1)
      const takers = left.filter((f) => (f.kind === BASE64) === (kind === BASE64) && spelled(f).includes(c))
      const chars = scanChars(c, kind)
      const cost = chars.filter((x) => !chosen.has(x)).length * PASS + chars.reduce((n, x) => n + frequency(x), 0) * takers.length
      if (best === undefined || cost / takers.length < best.cost / best.takers.length) best = { key, cost, takers }
    }
    const c = best!.key.slice(1)
    for (const f of best!.takers) {
      const entry: Entry = { needle: f.text, kind: f.kind, at: spelled(f).indexOf(c) }
      for (const x of scanChars(c, f.kind)) chosen.set(x, [...(chosen.get(x) ?? []), entry])
    }
    left = left.filter((f) => !best!.takers.includes(f))
  }
  return chosen
}

export interface EncodedSearch {
  /** the start of a form in the text, or -1 (its end in matchEnd); `percent`: whether the text holds a `%` */
  find: (s: string, percent: boolean) => number
}

/** the search for every byte form of the secret */
export function encodedSearch (secret: string): EncodedSearch {
  const byChar = anchors(byteForms(secret))
  const chars = [...byChar.keys()]
  const lists = chars.map((c) => byChar.get(c)!)
  // the forms by the byte their anchor reads as, for an anchor percent-encoded (`%51`)
  const byByte: Array<Entry[] | undefined> = Array.from({ length: 256 }, (_, b) => byChar.get(String.fromCharCode(b)))
  return {
    find: (s, percent) => {
      for (let g = 0; g < chars.length; g++) {
        const c = chars[g]!
        const list = lists[g]!
        for (let i = s.indexOf(c); i !== -1; i = s.indexOf(c, i + 1)) {
          for (let k = 0; k < list.length; k++) {
            const at = matchAt(s, i, list[k]!)
            if (at >= 0) return at
          }
        }
      }
      if (!percent) return -1
      for (let i = s.indexOf('%'); i !== -1; i = s.indexOf('%', i + 1)) {
        const b = percentAt(s, i)
        const list = b >= 0 ? byByte[b] : undefined
        if (list === undefined) continue
        for (let k = 0; k < list.length; k++) {
          const at = matchAt(s, i, list[k]!)
          if (at >= 0) return at
        }
      }
      return -1
    }
  }
}
