// The forms of the upstream secret the guard finds (docs/design.md#secret-echo), on arbitrary
// secrets: whatever surrounds it, the secret raw, JSON-escaped, percent-encoded (either hex case,
// encodeURIComponent or a form, every byte or some, once or several times), as JSON `\u` escapes
// or HTML character references, in base64 or base64url at any alignment (so the base64 of
// `Bearer <secret>` or of a whole header) with or without line breaks or padding, in base32 of
// either case at any alignment, or in hex of either case, is found — and characters encoded each
// their own way in one string; a text without it is left alone; and `replace` leaves none of it
// behind. Each encoding is checked against a decoder first, so what is found is what a decoder
// would give back.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { MIN_SECRET_LENGTH, answerCarriesSecret, inFixedAnswers, secretMatcher, uuidScanSuffices } from '../../src/core/secret-match.js'
import { base32, base32Decode, base32hex, broken, htmlDecode, htmlRefs, mixed, percentDecode, percentEveryByte, uEscaped, type HtmlStyle } from '../helpers/secret-forms.js'
import { SYNC_PROPERTY } from '../helpers/sync-property.js'

const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: MIN_SECRET_LENGTH, maxLength: 64 })
const around = fc.string({ maxLength: 8 })

/** every encoding of a text that carries the secret somewhere inside; base64 broken every `every` characters */
function encodings (text: string, every = 4): Record<string, string> {
  const b = Buffer.from(text)
  const pct = encodeURIComponent(text)
  const b64 = b.toString('base64')
  const html: HtmlStyle[] = ['decimal', 'decimal, leading zeros', 'decimal, no semicolon', 'hex', 'HEX', 'hex, leading zeros', 'named']
  return {
    raw: text,
    json: JSON.stringify(text),
    encodeURIComponent: pct,
    'percent, lower-case hex': pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    form: new URLSearchParams({ k: text }).toString(),
    base64: b64,
    base64url: b.toString('base64url'),
    'base64, percent-encoded': encodeURIComponent(b64),
    hex: b.toString('hex'),
    HEX: b.toString('hex').toUpperCase(),
    ...newEncodings(text, every),
    ...Object.fromEntries(html.map((style) => [`HTML references, ${style}`, htmlRefs(text, style)]))
  }
}

/** the forms the guard first missed (issue 24), each with the decoder that reads the text back */
function newEncodings (text: string, every: number): Record<string, string> {
  return Object.fromEntries(Object.entries(DECODERS).map(([name, [encode]]) => [name, encode(text, every)]))
}

const b64 = (t: string): string => Buffer.from(t).toString('base64')
const fromB64 = (s: string): string => Buffer.from(s, 'base64').toString()
const DECODERS: Record<string, [(t: string, every: number) => string, (form: string) => string]> = {
  'every byte percent-encoded': [(t) => percentEveryByte(t), (f) => percentDecode(f)],
  'every byte percent-encoded, lower-case hex': [(t) => percentEveryByte(t, false), (f) => percentDecode(f)],
  'every byte percent-encoded twice (%2573)': [(t) => percentEveryByte(t, true, 2), (f) => percentDecode(f, 2)],
  'every byte percent-encoded three times, lower case': [(t) => percentEveryByte(t, false, 3), (f) => percentDecode(f, 3)],
  'base64 without padding': [(t) => b64(t).replace(/=+$/, ''), fromB64],
  'base64, LF every few characters': [(t, n) => broken(b64(t), n, '\n'), fromB64],
  'base64, CRLF every few characters': [(t, n) => broken(b64(t), n, '\r\n'), fromB64],
  'base64 in a JSON string, \\n every few characters': [(t, n) => JSON.stringify(broken(b64(t), n, '\n')).slice(1, -1), (f) => fromB64(JSON.parse(`"${f}"`) as string)],
  'base64 in a JSON string, \\r\\n every few characters': [(t, n) => JSON.stringify(broken(b64(t), n, '\r\n')).slice(1, -1), (f) => fromB64(JSON.parse(`"${f}"`) as string)],
  'base64url without padding, LF every few characters': [(t, n) => broken(Buffer.from(t).toString('base64url'), n, '\n'), (f) => Buffer.from(f, 'base64url').toString()],
  'MIME base64 (CRLF every 76)': [(t) => broken(b64(t), 76, '\r\n'), fromB64],
  'PEM base64 (LF every 64)': [(t) => broken(b64(t), 64, '\n'), fromB64],
  base32: [(t) => base32(Buffer.from(t)), (f) => base32Decode(f).toString()],
  'base32 without padding': [(t) => base32(Buffer.from(t), false), (f) => base32Decode(f).toString()],
  'base32, lower case': [(t) => base32(Buffer.from(t)).toLowerCase(), (f) => base32Decode(f).toString()],
  'base32, lower case without padding': [(t) => base32(Buffer.from(t), false).toLowerCase(), (f) => base32Decode(f).toString()],
  '\\u escape of every character': [(t) => uEscaped(t), (f) => JSON.parse(`"${f}"`) as string],
  '\\u escape of every character, upper-case hex': [(t) => uEscaped(t, true), (f) => JSON.parse(`"${f}"`) as string]
}

describe('secretMatcher', SYNC_PROPERTY, () => {
  it('finds the secret in every encoding, whatever surrounds it', () => {
    fc.assert(fc.property(printable, around, around, (secret, before, after) => {
      const m = secretMatcher(secret)
      for (const [name, form] of Object.entries(encodings(`${before}${secret}${after}`))) {
        expect(m.test(form), name).toBe(true)
        expect(m.test(Buffer.from(`{"x":"${form}"}`)), `${name} in a Buffer`).toBe(true)
        // as a JSON string value, and that JSON in a JSON string again: each escape's backslash doubled
        const once = JSON.stringify({ x: form })
        expect(m.test(once), `${name} in JSON`).toBe(true)
        expect(m.test(JSON.stringify({ y: once })), `${name} in JSON in JSON`).toBe(true)
      }
    }), { numRuns: runs(300) })
  })

  it('finds the secret with base64 line breaks anywhere (a break every 1 to 80 characters)', () => {
    fc.assert(fc.property(printable, around, around, fc.integer({ min: 1, max: 80 }), (secret, before, after, every) => {
      const m = secretMatcher(secret)
      for (const [name, form] of Object.entries(newEncodings(`${before}${secret}${after}`, every))) expect(m.test(form), name).toBe(true)
    }), { numRuns: runs(200) })
  })

  it('each new encoding is one a decoder reads back', () => {
    fc.assert(fc.property(printable, around, fc.integer({ min: 1, max: 80 }), (secret, before, every) => {
      const text = `${before}${secret}`
      for (const [name, [encode, decode]] of Object.entries(DECODERS)) expect(decode(encode(text, every)), name).toBe(text)
      for (const style of ['decimal', 'decimal, leading zeros', 'decimal, no semicolon', 'hex', 'HEX', 'hex, leading zeros', 'named'] as const) {
        expect(htmlDecode(htmlRefs(text, style)), style).toBe(text)
      }
    }), { numRuns: runs(100) })
  })

  it('finds the secret with some characters encoded and others raw, as one decoder reads them (percent, HTML, JSON)', () => {
    fc.assert(fc.property(printable, around, fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), (secret, before, picks) => {
      const m = secretMatcher(secret)
      for (const kind of ['percent', 'html', 'json'] as const) {
        const { form, decode } = mixed(secret, (i) => picks[i % picks.length]!, kind)
        expect(decode(form), kind).toBe(secret)
        expect(m.test(`${before}${form}`), `${kind}: ${form}`).toBe(true)
        expect(m.test(Buffer.from(`{"x":"${before}${form}"}`)), `${kind} in a Buffer`).toBe(true)
      }
    }), { numRuns: runs(300) })
  })

  it('the base64 and base32 of the secret at each alignment inside a longer encoded string', () => {
    const secret = 'an"odd\\secret/with+all=sorts?of&chars~'
    const m = secretMatcher(secret)
    for (let k = 0; k < 5; k++) {
      const text = `${'x'.repeat(k)}${secret}${'y'.repeat(k)}`
      for (const [name, form] of Object.entries(newEncodings(text, 7))) expect(m.test(form), `${name} at offset ${k}`).toBe(true)
    }
  })

  it('the base64 of the header values, for both schemes', () => {
    const secret = 'an"odd\\secret/with+all=sorts?of&chars~'
    const m = secretMatcher(secret)
    for (const header of [`Bearer ${secret}`, `Authorization: Bearer ${secret}`, `X-API-KEY: ${secret}`, `x-api-key=${secret}`]) {
      expect(m.test(Buffer.from(header).toString('base64')), header).toBe(true)
      expect(m.test(Buffer.from(header).toString('base64url')), header).toBe(true)
    }
  })

  it('leaves a text without the secret alone, and replaces every form in one that has it', () => {
    fc.assert(fc.property(printable, fc.string({ maxLength: 400 }), (secret, text) => {
      fc.pre(!text.includes(secret.slice(0, 12)))
      const m = secretMatcher(secret)
      expect(m.test(text)).toBe(false)
      const all = Object.values(encodings(secret)).join(' ')
      const scrubbed = m.replace(`${text} ${all}`, '[REDACTED]')
      expect(m.test(scrubbed)).toBe(false)
    }), { numRuns: runs(200) })
  })

  it('an upstream answer: a \\u escape or an escaped slash cannot hide the secret', () => {
    const secret = 'escape/secret-0123456789'
    const m = secretMatcher(secret)
    // in the text of the secret itself, the per-character forms find them on the text alone
    for (const text of ['{"id":"\\u0065scape/secret-0123456789"}', '{"id":"escape\\/secret-0123456789"}']) {
      expect(m.test(text), text).toBe(true)
      expect(answerCarriesSecret(m, text, JSON.parse(text)), text).toBe(true)
    }
    // inside another form (its hex, its base64), only the parsed value shows it
    const hex = Buffer.from(secret).toString('hex')
    const b64 = Buffer.from(secret).toString('base64')
    for (const text of [`{"id":"${hex[0]!}\\u00${hex.charCodeAt(1).toString(16)}${hex.slice(2)}"}`, `{"id":"${b64.slice(0, 4)}\\u00${b64.charCodeAt(4).toString(16)}${b64.slice(5)}"}`]) {
      expect(m.test(text), text).toBe(false)
      expect(answerCarriesSecret(m, text, JSON.parse(text)), text).toBe(true)
      expect(answerCarriesSecret(m, Buffer.from(text), JSON.parse(text)), text).toBe(true)
    }
    expect(answerCarriesSecret(m, '{"id":"t-1\\n"}', { id: 't-1\n' })).toBe(false)
  })

  it('no realistic secret matches an ordinary answer or one of the gateway\'s fixed answers', () => {
    const words = ['campaign', 'attempt', 'stage', 'evaluation', 'checkpoint', 'completed', 'https://files.example/e?x=1&y=%20', '&amp;', '&#115;', '\\u0041', 'QUJDREVGR0g=\nSUpL', 'MFRGGZDFMZTWQ2LK', '0123456789abcdef']
    const answer = JSON.stringify({ text: Array.from({ length: 300 }, (_, i) => words[(i * 7) % words.length]).join(' ') })
    fc.assert(fc.property(fc.oneof(printable, fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: MIN_SECRET_LENGTH, maxLength: 40 })), (secret) => {
      fc.pre(!answer.includes(secret.slice(0, 8)))
      expect(secretMatcher(secret).test(answer)).toBe(false)
      expect(inFixedAnswers(secret)).toBe(false)
    }), { numRuns: runs(300) })
  })

  it('finds the secret in the gateway\'s own fixed answers only when it is one of their words', () => {
    expect(inFixedAnswers('upstream_invalid_response')).toBe(true)
    expect(inFixedAnswers('a-random-value-0123456789')).toBe(false)
  })
})

/** a UUID as randomUUID writes it, with `text` laid over it from `at` when the shape allows (lower-case hex digits, `-` at 8, 13, 18, 23) */
function overlay (uuid: string, text: string, at: number): string | undefined {
  if (at + text.length > uuid.length) return undefined
  for (let i = 0; i < text.length; i++) {
    const dash = [8, 13, 18, 23].includes(at + i)
    if (dash ? text[i] !== '-' : !/[0-9a-f]/.test(text[i]!)) return undefined
  }
  return uuid.slice(0, at) + text + uuid.slice(at + text.length)
}

/** every form uuidScanSuffices weighs, as its text (base64's `+` as url-safe `-`) */
function plainForms (secret: string): string[] {
  const b = Buffer.from(secret)
  const shifted = [0, 1, 2].map((k) => b.subarray(k)).map((s) => s.subarray(0, s.length - (s.length % 3)))
  const fives = [0, 1, 2, 3, 4].map((k) => b.subarray(k)).map((s) => s.subarray(0, s.length - (s.length % 5)))
  const b32 = [...fives.map((s) => base32(s, false)), ...fives.map((s) => base32hex(s, false))]
  return [secret, b.toString('hex'), b.toString('hex').toUpperCase(), ...b32, ...b32.map((f) => f.toLowerCase()), ...shifted.map((s) => s.toString('base64').replaceAll('+', '-'))].filter((f) => f !== '')
}

/** a UUID's dashes, by the hex digit they stand before */
const UUID_DASHES = [8, 12, 16, 20]

/** the secret's hex laid from each even hex digit of a UUID, a `-` between two bytes wherever the UUID has one: [text, where it starts] */
function dashedHex (secret: string): Array<[string, number]> {
  const hex = Buffer.from(secret).toString('hex')
  return Array.from({ length: 17 }, (_, k) => 2 * k).map((o): [string, number] => [
    [...hex].map((d, i) => (i > 0 && UUID_DASHES.includes(o + i) ? '-' : '') + d).join(''),
    o + UUID_DASHES.filter((b) => b <= o).length
  ])
}

describe('uuidScanSuffices', SYNC_PROPERTY, () => {
  it('is false for a secret of 16 bytes or fewer, whose hex with a `-` between bytes a UUID can spell', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 8, maxLength: 16 })
    fc.assert(fc.property(fc.uuid(), ascii, (uuid, secret) => {
      const [text, at] = dashedHex(secret).at(16 - secret.length)!
      const spelled = overlay(uuid, text, at)!
      expect(spelled).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(uuidScanSuffices(secret)).toBe(false)
      expect(secretMatcher(secret).test(spelled)).toBe(true)
    }), { numRuns: runs(100) })
  })

  const uuidish = fc.string({ unit: fc.constantFrom(...'0123456789abcdef-'), minLength: 8, maxLength: 24 })
  const secretArb = fc.oneof(printable, uuidish, fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 8, maxLength: 24 }))

  it('is false for a piece of a UUID, which the matcher finds in it', () => {
    fc.assert(fc.property(fc.uuid(), fc.nat(28), fc.integer({ min: 8, max: 36 }), (uuid, from, length) => {
      const piece = uuid.slice(from, from + length)
      fc.pre(piece.length >= 8 && (piece.includes('-') || piece.length <= 12))
      expect(uuidScanSuffices(piece)).toBe(false)
      expect(secretMatcher(piece).test(uuid)).toBe(true)
    }), { numRuns: runs(500) })
  })

  it('when true, no UUID holds a form of the secret: each form laid over a UUID wherever it fits, and random UUIDs, are clean', () => {
    fc.assert(fc.property(secretArb, fc.array(fc.uuid(), { minLength: 1, maxLength: 4 }), (secret, uuids) => {
      const m = secretMatcher(secret)
      const fitted = uuids.flatMap((u) => [
        ...plainForms(secret).flatMap((f) => Array.from({ length: 36 }, (_, at) => overlay(u, f, at))),
        ...dashedHex(secret).map(([f, at]) => overlay(u, f, at))
      ]).filter((u) => u !== undefined)
      if (uuidScanSuffices(secret)) {
        expect(fitted).toEqual([])
        for (const u of uuids) expect(m.test(u)).toBe(false)
      } else if (fitted.length > 0) {
        // the other way round: what the check refuses for is found there
        expect(m.test(fitted[0]!)).toBe(true)
      }
    }), { numRuns: runs(1000) })
  })
})
