// The forms of the upstream secret the guard finds (docs/design.md#secret-echo): a remote that
// echoes its credential may have encoded it on the way (base64 in a token or a blob, percent-encoding
// in a URI, hex in a digest-like field, an escape in a string). Built once at start, in two parts:
// the secret's characters, each in any of its text forms (src/core/secret-text.ts, one regular
// expression, searched only when the text holds what an escape starts with), and its bytes in every
// encoding (src/core/secret-encodings.ts, needles found by a few shared anchor characters and read
// through what a decoder skips, src/core/secret-reading.ts). Both read one layer of
// percent-encoding through. Measured against the alternatives in bench/secret-guard.ts
// (docs/design.md#hot-path).
import { ERROR_TABLE, GatewayError, type ErrorCode } from './errors.js'
import { byteForms, encodedSearch } from './secret-encodings.js'
import { matchEnd, percentDecoded, percentWrites } from './secret-reading.js'
import { SOFT_BREAK_START, escapesIn, textForms } from './secret-text.js'

/** below this the forms are too short to tell from ordinary text (docs/design.md#configuration) */
export const MIN_SECRET_LENGTH = 16

export interface SecretMatcher {
  /** true when the text carries the secret in any form; a Buffer is read byte for byte */
  test: (text: string | Buffer) => boolean
  /** the text with every form of the secret replaced by `censor` */
  replace: (text: string, censor: string) => string
}

/** the most forms `replace` cuts out one by one before it gives the whole text up */
const REPLACE_ROUNDS = 64

export function secretMatcher (secret: string): SecretMatcher {
  const t = textForms(secret)
  // the raw form on every text (irregexp skips through a literal); the escaped text forms only when
  // the text holds what such an escape starts with, and with quoted-printable's soft line breaks
  // only when it holds one (an optional group between characters slows the whole expression,
  // BENCHMARKS.md#hot-path-choices); a percent-decoded copy of the text only when a `%XX` in it
  // writes a character of an escape (`%5C`, `%26`, not `%20`): the byte encodings read that layer
  // through themselves (docs/design.md#hot-path)
  const plain = new RegExp(t.plain)
  const text = new RegExp(t.text)
  const softText = new RegExp(t.softText)
  const everywhere = new RegExp(t.softText, 'g')
  const encoded = encodedSearch(secret)
  const escaped = (s: string, found: number): boolean => ((found & SOFT_BREAK_START) !== 0 ? softText : text).test(s)
  const test = (input: string | Buffer): boolean => {
    // latin1: one char per byte, so an ASCII form matches the bytes exactly, without a UTF-8 decode
    const s = typeof input === 'string' ? input : input.toString('latin1')
    if (plain.test(s)) return true
    const percent = s.includes('%')
    const found = escapesIn(s, percent)
    if (found !== 0 && escaped(s, found)) return true
    if (encoded.find(s, percent) >= 0) return true
    if (!percent || !percentWrites(s, t.syntax)) return false
    // an escape under one layer of percent-encoding (`%5Cx73`, `%26%23115%3B`): the text decoded once
    const decoded = percentDecoded(s)
    return softText.test(decoded)
  }
  return {
    test,
    replace: (input, censor) => {
      let out = input.replace(everywhere, censor)
      for (let round = 0; round < REPLACE_ROUNDS; round++) {
        const at = encoded.find(out, out.includes('%'))
        if (at < 0) break
        out = out.slice(0, at) + censor + out.slice(matchEnd)
      }
      out = cutDecoded(out, everywhere, censor)
      // a censor that made a form with what surrounds it, or more forms than the rounds: nothing of the text
      if (test(out)) return input.endsWith('\n') ? `${censor}\n` : censor
      return out
    }
  }
}

/** the text with each span whose percent-decoded form the expression matches replaced by `censor` */
function cutDecoded (s: string, everywhere: RegExp, censor: string): string {
  const from: number[] = []
  const decoded = percentDecoded(s, from)
  if (decoded === s) return s
  let out = ''
  let last = 0
  for (const m of decoded.matchAll(everywhere)) {
    out += s.slice(last, from[m.index]) + censor
    last = from[m.index + m[0].length]!
  }
  return out + s.slice(last)
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
 * secret (raw, hex, base32, base32hex, base64) may be written with a number's characters alone, and
 * the secret holds no character of JSON's structure — no form then crosses from one value into the
 * structure around it: what a decoder skips inside a form (whitespace, hex's `:` and `-`) never
 * stands next to a value in JSON.stringify's text without a `"` between. False sends every such
 * answer through the guard.
 */
export function entryScanSuffices (secret: string): boolean {
  if (JSON_STRUCTURE.test(secret)) return false
  // the byte forms in their canonical spelling — hex's separators and case add no character a
  // number lacks that its plain spelling has not — and base64's url-safe spelling
  const forms = byteForms(secret).map((f) => f.text)
  return ![secret, ...forms, ...forms.map((f) => f.replaceAll('+', '-').replaceAll('/', '_'))].some((f) => NUMBER_TEXT.test(f))
}

/** the characters of a UUID as `randomUUID` writes it: lower-case hex digits and `-` */
const UUID_TEXT = /^[0-9a-f-]+$/
/** the longest run of hex digits in a UUID (its last group) */
const UUID_LONGEST_RUN = 12
/** a UUID's hex digits, each of its dashes between two bytes */
const UUID_HEX_DIGITS = 32

/**
 * Whether no form of the secret can lie inside a UUID written as `randomUUID` writes it
 * (8-4-4-4-12 lower-case hex digits), so that the access line need not search a request id of that
 * shape (docs/design.md#hot-path). Inside such a text only lower-case hex digits and `-` can be a
 * form's characters: every escape starts with `%`, `&`, `\` or `=`, base64's whitespace is none of
 * them, and of base64's two extra characters only `+` has a form there (`-`, url-safe). So a form
 * that fits is written with those characters alone and, if it holds no `-`, is one of the UUID's
 * runs of hex digits, 12 characters at most. False when any form is so written: the raw secret, its
 * base64 at each alignment (`+` read as `-`), its base32 and base32hex, its hex — and its hex with a
 * `-` between bytes wherever the UUID has one, which fits when it has no more than the UUID's 32
 * digits (a secret of 16 bytes or fewer).
 */
export function uuidScanSuffices (secret: string): boolean {
  if (Buffer.byteLength(secret, 'utf8') * 2 <= UUID_HEX_DIGITS) return false
  const forms = byteForms(secret).map((f) => f.text.toLowerCase().replaceAll('+', '-'))
  return ![secret, ...forms].some((f) => UUID_TEXT.test(f) && (f.includes('-') || f.length <= UUID_LONGEST_RUN))
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
