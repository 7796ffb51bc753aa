// The secret's characters in the forms a text decoder reads them from (docs/design.md#secret-echo),
// as one regular expression with one alternation per character, so that a string partly encoded,
// each character its own way, is found, in time linear in the secret's length: raw; JSON-escaped
// (`\"`, `\/`, `\u0073` in either case, the backslash doubled any number of times as JSON is put in
// JSON again); percent-encoded, its UTF-8 bytes in either case, any number of times (`%73`,
// `%2573`); an HTML character reference, decimal or hex (leading zeros, the `;` left out as a
// parser allows) or named; `\xNN` (a UTF-8 byte, as bytes literals write it, or a code unit below
// 0x100, as JavaScript reads it) and `\u{…}` (any leading zeros); quoted-printable `=XX`, with its
// soft line breaks between characters in a second expression. One layer of percent-encoding over
// an escape (`%5Cx73`, `%26%23115%3B`) is the caller's: it searches the text decoded once
// (src/core/secret-match.ts), when a `%XX` writes one of the escapes' characters (`syntax`).

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')

/** a hex digit in either case */
const hexDigit = (d: string): string => /[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d
const hexNumber = (n: number, width: number): string => [...n.toString(16).padStart(width, '0')].map(hexDigit).join('')

/** one backslash or more: an escape's, doubled each time the text is put in a JSON string again */
const BACKSLASHES = '\\\\+'
/** a line break: LF or CRLF, raw or JSON-escaped */
const LINE_BREAK = `(?:\\r?\\n|(?:${BACKSLASHES}r)?${BACKSLASHES}n)`
/** quoted-printable's soft line break, which its decoder drops */
const SOFT_BREAK = `(?:=${LINE_BREAK})?`

/**
 * HTML's named character references of ASCII punctuation (the WHATWG list; none exists for
 * `-`, `~` or a letter or digit). The four legacy names are read without their `;` too.
 */
const HTML_NAMES: Record<string, string[]> = {
  '!': ['excl'],
  '"': ['quot', 'QUOT'],
  '#': ['num'],
  $: ['dollar'],
  '%': ['percnt'],
  '&': ['amp', 'AMP'],
  "'": ['apos'],
  '(': ['lpar'],
  ')': ['rpar'],
  '*': ['ast', 'midast'],
  '+': ['plus'],
  ',': ['comma'],
  '.': ['period'],
  '/': ['sol'],
  ':': ['colon'],
  ';': ['semi'],
  '<': ['lt', 'LT'],
  '=': ['equals'],
  '>': ['gt', 'GT'],
  '?': ['quest'],
  '@': ['commat'],
  '[': ['lsqb', 'lbrack'],
  '\\': ['bsol'],
  ']': ['rsqb', 'rbrack'],
  '^': ['Hat'],
  _: ['lowbar', 'UnderBar'],
  '`': ['grave', 'DiacriticalGrave'],
  '{': ['lcub', 'lbrace'],
  '|': ['verbar', 'vert', 'VerticalLine'],
  '}': ['rcub', 'rbrace'],
  '\t': ['Tab'],
  '\n': ['NewLine']
}
const LEGACY_NAMES = new Set(['quot', 'QUOT', 'amp', 'AMP', 'lt', 'LT', 'gt', 'GT'])

/**
 * The escapes of one character, by what they start with (one group each, so that irregexp tries
 * each start once): `\` (JSON's `\u0073`, `\x73` of each UTF-8 byte, `\u{73}`, and `\xE9` of a
 * code unit below 0x100), `=` (quoted-printable, a soft line break allowed between two bytes), `&`
 * (HTML's numeric and named references) and `%` (each UTF-8 byte, encoded any number of times).
 */
function escapes (c: string): string[] {
  const cp = c.codePointAt(0)!
  const units = Array.from({ length: c.length }, (_, i) => c.charCodeAt(i))
  const bytes = [...Buffer.from(c, 'utf8')]
  const afterBackslash = [
    units.map((u) => `u${hexNumber(u, 4)}`).join(BACKSLASHES),
    bytes.map((b) => `x${hexNumber(b, 2)}`).join(BACKSLASHES),
    `u\\{0*${hexNumber(cp, 1)}\\}`,
    ...(cp >= 0x80 && cp < 0x100 ? [`x${hexNumber(cp, 2)}`] : [])
  ]
  const afterAmpersand = [`#(?:0*${cp}|[xX]0*${hexNumber(cp, 1)});?`, ...(HTML_NAMES[c] ?? []).map((n) => `${n}${LEGACY_NAMES.has(n) ? ';?' : ';'}`)]
  return [
    `${BACKSLASHES}(?:${afterBackslash.join('|')})`,
    bytes.map((b) => `=${hexNumber(b, 2)}`).join(SOFT_BREAK),
    `&(?:${afterAmpersand.join('|')})`,
    bytes.map((b) => `%(?:25)*${hexNumber(b, 2)}`).join('')
  ]
}

/**
 * One character in each form a text decoder reads it from, any of them at each character.
 * `plain` is the same without the escapes, which start with `%`, `&`, `\u`, `\x` or `=`.
 */
function textChar (c: string): { plain: string; all: string } {
  const json = JSON.stringify(c).slice(1, -1)
  // a JSON escape's backslash is doubled each time the text is put in a JSON string again
  const plain = c === '\\' ? [BACKSLASHES] : [escape(c), json.startsWith('\\') ? BACKSLASHES + escape(json.slice(1)) : escape(json)]
  if (c === '/') plain.push(`${BACKSLASHES}\\/`)
  if (c === ' ') plain.push('\\+')
  const group = (forms: string[]): string => {
    const unique = [...new Set(forms)]
    return unique.length === 1 ? unique[0]! : `(?:${unique.join('|')})`
  }
  return { plain: group(plain), all: group([...plain, ...escapes(c)]) }
}

export interface TextForms {
  /** the raw secret and JSON's short escapes of its characters */
  plain: string
  /** every character in any of its forms */
  text: string
  /** the same with a quoted-printable soft line break allowed between two characters */
  softText: string
  /** the bytes the escapes of the secret's characters are written with (what a percent layer over one can hide) */
  syntax: Uint8Array
}

export function textForms (secret: string): TextForms {
  const chars = [...secret].map(textChar)
  const all = chars.map((c) => c.all)
  const syntax = new Uint8Array(256)
  const json = [...secret].map((c) => JSON.stringify(c).slice(1, -1)).filter((j) => j.startsWith('\\')).join('')
  const names = [...secret].flatMap((c) => HTML_NAMES[c] ?? []).join('')
  for (const c of `\\uxX{}=&#;\r\nrn0123456789abcdefABCDEF${json}${names}`) syntax[c.charCodeAt(0)] = 1
  return { plain: chars.map((c) => c.plain).join(''), text: all.join(''), softText: all.join(SOFT_BREAK), syntax }
}

/** escapesIn: the text holds what an escape starts with — `%`, `&`, a backslash before `u` or `x`, `=` before two hex digits */
const ESCAPE = 1
/** escapesIn: the text holds what a quoted-printable soft line break starts with, `=` before a line break, raw or JSON-escaped */
export const SOFT_BREAK_START = 2

/** what the text holds of what the text forms' escapes start with (ESCAPE, SOFT_BREAK_START); `percent`: whether it holds a `%` */
export function escapesIn (s: string, percent: boolean): number {
  let found = percent ? ESCAPE : 0
  for (let i = s.indexOf('='); i !== -1; i = s.indexOf('=', i + 1)) {
    const c = s.charCodeAt(i + 1)
    if (c === 13 || c === 10 || c === 92) found |= SOFT_BREAK_START
    else if (isHexDigit(c) && isHexDigit(s.charCodeAt(i + 2))) found |= ESCAPE
  }
  if ((found & ESCAPE) !== 0 || s.includes('&')) return found | ESCAPE
  for (let i = s.indexOf('\\'); i !== -1; i = s.indexOf('\\', i + 1)) {
    let j = i + 1
    while (s.charCodeAt(j) === 92) j++
    const c = s.charCodeAt(j)
    if (c === 117 || c === 120) return found | ESCAPE
    i = j - 1
  }
  return found
}

const isHexDigit = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 102)
