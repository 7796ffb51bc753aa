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
const hexOf = (bytes: Buffer): string => [...bytes.toString('hex')].map(hexDigit).join('')

/** one character raw, JSON-escaped, or percent-encoded in either case; letters and digits are never encoded */
function textChar (c: string): string {
  if (/[A-Za-z0-9]/.test(c)) return c
  const forms = new Set([escape(c), escape(JSON.stringify(c).slice(1, -1)), `%${hexOf(Buffer.from(c, 'latin1'))}`])
  return `(?:${[...forms].join('|')})`
}

/** a base64 character of the standard or the url-safe alphabet, `+` and `/` also percent-encoded */
function base64Char (c: string): string {
  if (c === '+') return '(?:\\+|-|%2[bB])'
  if (c === '/') return '(?:\\/|_|%2[fF])'
  return c
}

/**
 * The base64 characters that depend on the secret alone, for each alignment: inside a longer
 * string the secret starts at byte offset 0, 1 or 2 of a 3-byte group, and only the groups it
 * fills entirely encode the same way whatever surrounds it.
 */
function base64Patterns (bytes: Buffer): string[] {
  return [0, 1, 2].map((skip) => {
    const rest = bytes.subarray(skip)
    const whole = rest.subarray(0, rest.length - (rest.length % 3))
    return [...whole.toString('base64')].map(base64Char).join('')
  })
}

/** one pattern source per form of the secret: raw/JSON/percent, base64 at each alignment, hex lower and upper */
export function secretPatterns (secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const hex = bytes.toString('hex')
  return [...new Set([[...secret].map(textChar).join(''), ...base64Patterns(bytes), hex, hex.toUpperCase()])]
}

export function secretMatcher (secret: string): SecretMatcher {
  const sources = secretPatterns(secret)
  // one expression per form, not one alternation of them all: irregexp searches a literal (most
  // forms are one) with a string search, an alternation position by position — measured 2–5×
  // slower (bench/secret-guard.ts, docs/design.md#hot-path)
  const each = sources.map((s) => new RegExp(s))
  const all = new RegExp(sources.join('|'), 'g')
  return {
    test: (text) => {
      // latin1: one char per byte, so an ASCII form matches the bytes exactly, without a UTF-8 decode
      const s = typeof text === 'string' ? text : text.toString('latin1')
      for (const r of each) if (r.test(s)) return true
      return false
    },
    replace: (text, censor) => text.replace(all, censor)
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
