// The forms the upstream secret takes when a remote writes it back (docs/design.md#secret-echo):
// a remote that echoes its credential may have encoded it on the way (base64 in a token or a
// blob, percent-encoding in a URI, hex in a digest-like field). One regular expression per form,
// built once at start: the secret raw, JSON-escaped or percent-encoded (encodeURIComponent or a
// form, hex digits in either case); its base64, standard or url-safe, at each of the three
// alignments it can have inside a longer encoded string (which covers the base64 of
// `Bearer <secret>` and of a whole header); and its hex, lower or upper case. Measured against
// one alternation of all the forms, one `includes` per literal form and an Aho–Corasick automaton
// (bench/secret-guard.ts, docs/design.md#hot-path).
import { ERROR_TABLE, GatewayError, type ErrorCode } from './errors.js'

/** below this the forms are too short to tell from ordinary text (docs/design.md#configuration) */
export const MIN_SECRET_LENGTH = 16

export interface SecretMatcher {
  /** true when the text carries the secret in any form; a Buffer is read byte for byte */
  test: (text: string | Buffer) => boolean
  /** the text with every form of the secret replaced by `censor` */
  replace: (text: string, censor: string) => string
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
/** a hex digit in either case */
const hexDigit = (d: string): string => /[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d
const hexNumber = (n: number, width: number): string => [...n.toString(16).padStart(width, '0')].map(hexDigit).join('')

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

/** one backslash or more: a JSON escape, in a JSON string again any number of times */
const BACKSLASHES = '\\\\+'
/** a line break a base64 decoder skips: LF or CRLF, raw or JSON-escaped */
const BREAK = `(?:\\r?\\n|(?:${BACKSLASHES}r)?${BACKSLASHES}n)?`

/**
 * One character in each form a text decoder reads it from, any of them at each character (a
 * string partly encoded decodes as well): raw; JSON-escaped (`\"`, `\/`, `\u0073` in either
 * case); percent-encoded, its UTF-8 bytes in either case and encoded any number of times
 * (`%73`, `%2573`); an HTML character reference, decimal or hex (`&#115;`, `&#x73;`, `&#X73;`,
 * leading zeros, the `;` left out as a parser allows) or named. Linear in the secret's length.
 * `plain` is the same without the forms that start with `%`, `&` or `\u`.
 */
function textChar (c: string): { plain: string; all: string } {
  const cp = c.codePointAt(0)!
  const units = Array.from({ length: c.length }, (_, i) => c.charCodeAt(i))
  const json = JSON.stringify(c).slice(1, -1)
  // a JSON escape's backslash is doubled each time the text is put in a JSON string again
  const plain = c === '\\' ? [BACKSLASHES] : [escape(c), json.startsWith('\\') ? BACKSLASHES + escape(json.slice(1)) : escape(json)]
  if (c === '/') plain.push(`${BACKSLASHES}\\/`)
  if (c === ' ') plain.push('\\+')
  const all = [
    ...plain,
    units.map((u) => `${BACKSLASHES}u${hexNumber(u, 4)}`).join(''),
    [...Buffer.from(c, 'utf8')].map((b) => `%(?:25)*${hexNumber(b, 2)}`).join(''),
    `&#0*${cp};?`,
    `&#[xX]0*${hexNumber(cp, 1)};?`,
    ...(HTML_NAMES[c] ?? []).map((n) => `&${n}${LEGACY_NAMES.has(n) ? ';?' : ';'}`)
  ]
  const group = (forms: string[]): string => {
    const unique = [...new Set(forms)]
    return unique.length === 1 ? unique[0]! : `(?:${unique.join('|')})`
  }
  return { plain: group(plain), all: group(all) }
}

/** a base64 character of the standard or the url-safe alphabet, `+` and `/` also percent- or JSON-escaped */
function base64Char (c: string): string {
  if (c === '+') return '(?:\\+|-|%2[bB])'
  if (c === '/') return `(?:\\/|_|%2[fF]|${BACKSLASHES}\\/)`
  return c
}

/**
 * The characters of an encoding that depend on the secret alone, for each alignment: inside a
 * longer string the secret starts at byte offset 0 … group - 1 of a group of `group` bytes (3 for
 * base64, 5 for base32), and only the groups it fills entirely encode the same way whatever
 * surrounds it.
 */
function aligned (bytes: Buffer, group: number, encode: (b: Buffer) => string): string[] {
  return Array.from({ length: group }, (_, skip) => {
    const rest = bytes.subarray(skip)
    return encode(rest.subarray(0, rest.length - (rest.length % group)))
  })
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
/** RFC 4648 §6 base32 of whole 5-byte groups (no padding) */
function base32 (bytes: Buffer): string {
  let out = ''
  for (let i = 0; i + 5 <= bytes.length; i += 5) {
    let v = 0n
    for (let j = 0; j < 5; j++) v = (v << 8n) | BigInt(bytes[i + j]!)
    for (let k = 7; k >= 0; k--) out += BASE32[Number((v >> BigInt(k * 5)) & 31n)]
  }
  return out
}

export interface SecretForms {
  /** the text forms without an escape that starts with `%`, `&` or `\u`: raw, JSON's short escapes */
  plain: string
  /** the text forms, each character in any of its forms */
  text: string
  /** base64, either alphabet, a line break allowed between any two characters, at each of 3 alignments */
  base64: string[]
  /** the same without line breaks, for a text that holds none */
  base64Unbroken: string[]
  /** plain strings: base32 upper and lower case at each of 5 alignments, hex lower and upper case */
  literals: string[]
}

/** the pattern sources by kind (the bench builds its alternatives from them) */
export function secretForms (secret: string): SecretForms {
  const bytes = Buffer.from(secret, 'utf8')
  const hex = bytes.toString('hex')
  const chars = [...secret].map(textChar)
  const b32 = aligned(bytes, 5, base32).filter((p) => p !== '')
  return {
    plain: chars.map((c) => c.plain).join(''),
    text: chars.map((c) => c.all).join(''),
    base64: [...new Set(aligned(bytes, 3, (b) => [...b.toString('base64')].map(base64Char).join(BREAK)).filter((p) => p !== ''))],
    base64Unbroken: [...new Set(aligned(bytes, 3, (b) => [...b.toString('base64')].map(base64Char).join('')).filter((p) => p !== ''))],
    literals: [...new Set([...b32, ...b32.map((p) => p.toLowerCase()), hex, hex.toUpperCase()])]
  }
}

/** one pattern source per form of the secret (the literals need no escaping: base32 and hex digits) */
export function secretPatterns (secret: string): string[] {
  const f = secretForms(secret)
  return [f.text, ...f.base64, ...f.literals]
}

/** base32's and hex's characters by how rarely ordinary text holds them, rarest first (English letter frequencies; digits between) */
const RARE_FIRST = 'qzjxkv9876543210bpygfwmucldrhsnioate'

/**
 * A search for a literal needle (base32, hex) by its rarest character: each occurrence of that
 * character (`indexOf` of one character, a memchr) is a candidate, compared whole. `includes`
 * skips by the needle's length only when the text's characters are not in the needle, and a
 * lower-case base32 needle shares its letters with any text: measured ten times the instructions.
 */
export function literalSearch (needle: string): (s: string) => boolean {
  const lower = needle.toLowerCase()
  let at = 0
  for (const c of RARE_FIRST) {
    const i = lower.indexOf(c)
    if (i >= 0) {
      at = i
      break
    }
  }
  const anchor = needle[at]!
  return (s) => {
    for (let i = s.indexOf(anchor, at); i !== -1; i = s.indexOf(anchor, i + 1)) if (s.startsWith(needle, i - at)) return true
    return false
  }
}

export function secretMatcher (secret: string): SecretMatcher {
  const f = secretForms(secret)
  // one expression per form, not one alternation of them all: irregexp searches an alternation
  // position by position — measured 2–5× slower; the escaped text forms only when the text holds
  // a character such an escape starts with, the line breaks of base64 only when it holds one (an
  // optional group after each character stops irregexp's look-ahead: six times the instructions);
  // the literals by their rarest character (bench/secret-guard.ts, docs/design.md#hot-path)
  const plain = new RegExp(f.plain)
  const text = new RegExp(f.text)
  const base64 = f.base64.map((s) => new RegExp(s))
  const base64Unbroken = f.base64Unbroken.map((s) => new RegExp(s))
  const literals = f.literals.map(literalSearch)
  const all = new RegExp(secretPatterns(secret).join('|'), 'g')
  return {
    test: (input) => {
      // latin1: one char per byte, so an ASCII form matches the bytes exactly, without a UTF-8 decode
      const s = typeof input === 'string' ? input : input.toString('latin1')
      if (plain.test(s)) return true
      if ((s.includes('%') || s.includes('&') || s.includes('\\u')) && text.test(s)) return true
      for (const r of s.includes('\n') || s.includes('\\n') ? base64 : base64Unbroken) if (r.test(s)) return true
      for (const search of literals) if (search(s)) return true
      return false
    },
    replace: (input, censor) => input.replace(all, censor)
  }
}

/**
 * Whether an upstream answer carries the secret (docs/design.md#secret-echo): its text as it came
 * and, when the text uses a JSON escape that can hide a printable character (`\u0065`, `\/`),
 * the parsed value again as JSON.stringify writes it — the form every later use of it sees.
 */
export function answerCarriesSecret (matcher: SecretMatcher, text: string | Buffer, json: unknown): boolean {
  if (matcher.test(text)) return true
  if (json === undefined || !(text.includes('\\u') || text.includes('\\/'))) return false
  return matcher.test(JSON.stringify(json))
}

/** what a JSON number can print (JSON.stringify writes `1e+21`, `-0.5`) */
const NUMBER_TEXT = /^[0-9.e+-]+$/i
/** the characters of JSON's own structure, which an answer holds between the values it carries */
const JSON_STRUCTURE = /["\\{}[\],:]/

/**
 * Whether an answer made only of values from a remote answer that passed answerCarriesSecret, put
 * together by JSON.stringify, and of the gateway's fixed text, can be sent without the guard's
 * search again (docs/design.md#hot-path). Each string value comes out exactly as JSON.stringify
 * wrote it in that search, or as the remote's own text held it; a number may come out written
 * differently (`1.5e3` → `1500`), and the fixed text and the structure are new. So: no form of the
 * secret (raw, hex, base32, base64) may be written with a number's characters alone, and the
 * secret holds no character of JSON's structure. False sends every such answer through the guard.
 */
export function entryScanSuffices (secret: string): boolean {
  if (JSON_STRUCTURE.test(secret)) return false
  const bytes = Buffer.from(secret, 'utf8')
  const b32 = aligned(bytes, 5, base32)
  const forms = [
    secret, bytes.toString('hex'), ...b32,
    ...aligned(bytes, 3, (b) => b.toString('base64')), ...aligned(bytes, 3, (b) => b.toString('base64url'))
  ].filter((f) => f !== '')
  return !forms.some((f) => NUMBER_TEXT.test(f))
}

/** the characters of a UUID as `randomUUID` writes it: lower-case hex digits and `-` */
const UUID_TEXT = /^[0-9a-f-]+$/
/** the longest run of hex digits in a UUID (its last group) */
const UUID_LONGEST_RUN = 12

/**
 * Whether no form of the secret can lie inside a UUID written as `randomUUID` writes it
 * (8-4-4-4-12 lower-case hex digits), so that the access line need not search a request id of that
 * shape (docs/design.md#hot-path). Inside such a text only lower-case hex digits and `-` can be a
 * form's characters: every escape starts with `%`, `&` or `\`, a line break in base64 is `\n`,
 * and of base64's two extra characters only `+` has a form there (`-`, url-safe). So a form that
 * fits is written with those characters alone and, if it holds no `-`, is one of the UUID's runs of
 * hex digits, 12 characters at most. False when any form is so written: the raw secret, its base64
 * at each alignment (`+` read as `-`), its base32 in either case and its hex in either case.
 */
export function uuidScanSuffices (secret: string): boolean {
  const bytes = Buffer.from(secret, 'utf8')
  const b32 = aligned(bytes, 5, base32)
  const hex = bytes.toString('hex')
  const forms = [
    secret, hex, hex.toUpperCase(), ...b32, ...b32.map((f) => f.toLowerCase()),
    ...aligned(bytes, 3, (b) => b.toString('base64').replaceAll('+', '-'))
  ].filter((f) => f !== '')
  return !forms.some((f) => UUID_TEXT.test(f) && (f.includes('-') || f.length <= UUID_LONGEST_RUN))
}

/**
 * Whether the secret occurs in what the gateway answers by itself, whatever the remote does —
 * every error body, the probes' answers: the guard would turn such an answer into a 502 for
 * everyone, so the configuration refuses the secret instead (docs/design.md#configuration).
 */
export function inFixedAnswers (secret: string): boolean {
  const matcher = secretMatcher(secret)
  const errors = (Object.keys(ERROR_TABLE) as ErrorCode[]).map((code) => JSON.stringify(new GatewayError(code).toBody()))
  const probes = [true, false].map((b) => JSON.stringify({ status: 'ok', ready: b, draining: b, checks: { card: b, ledger: b, redis: b }, mode: b ? 'controller' : 'observer' }))
  return [...errors, ...probes].some((t) => matcher.test(t))
}
