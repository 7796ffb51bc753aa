// The forms of the upstream secret the guard finds (docs/design.md#secret-echo), on arbitrary
// secrets: whatever surrounds it, the secret raw, JSON-escaped, percent-encoded (either hex case,
// encodeURIComponent or a form), in base64 or base64url at any alignment (so the base64 of
// `Bearer <secret>` or of a whole header), or in hex of either case, is found; a text without it
// is left alone; and `replace` leaves none of it behind.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MIN_SECRET_LENGTH, answerCarriesSecret, inFixedAnswers, secretMatcher } from '../../src/secret-match.js'

const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: MIN_SECRET_LENGTH, maxLength: 64 })
const around = fc.string({ maxLength: 8 })

/** every encoding of a text that carries the secret somewhere inside */
function encodings (text: string): Record<string, string> {
  const b = Buffer.from(text)
  const pct = encodeURIComponent(text)
  return {
    raw: text,
    json: JSON.stringify(text),
    encodeURIComponent: pct,
    'percent, lower-case hex': pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    form: new URLSearchParams({ k: text }).toString(),
    base64: b.toString('base64'),
    base64url: b.toString('base64url'),
    'base64, percent-encoded': encodeURIComponent(b.toString('base64')),
    hex: b.toString('hex'),
    HEX: b.toString('hex').toUpperCase()
  }
}

describe('secretMatcher', () => {
  it('finds the secret in every encoding, whatever surrounds it', () => {
    fc.assert(fc.property(printable, around, around, (secret, before, after) => {
      const m = secretMatcher(secret)
      for (const [name, form] of Object.entries(encodings(`${before}${secret}${after}`))) {
        expect(m.test(form), name).toBe(true)
        expect(m.test(Buffer.from(`{"x":"${form}"}`)), `${name} in a Buffer`).toBe(true)
      }
    }), { numRuns: 300 })
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
    }), { numRuns: 200 })
  })

  it('an upstream answer: a \\u escape or an escaped slash cannot hide the secret', () => {
    const secret = 'escape/secret-0123456789'
    const m = secretMatcher(secret)
    for (const text of ['{"id":"\\u0065scape/secret-0123456789"}', '{"id":"escape\\/secret-0123456789"}']) {
      expect(m.test(text), text).toBe(false)
      expect(answerCarriesSecret(m, text, JSON.parse(text)), text).toBe(true)
      expect(answerCarriesSecret(m, Buffer.from(text), JSON.parse(text)), text).toBe(true)
    }
    expect(answerCarriesSecret(m, '{"id":"t-1\\n"}', { id: 't-1\n' })).toBe(false)
  })

  it('finds the secret in the gateway\'s own fixed answers only when it is one of their words', () => {
    expect(inFixedAnswers('upstream_invalid_response')).toBe(true)
    expect(inFixedAnswers('a-random-value-0123456789')).toBe(false)
  })
})
