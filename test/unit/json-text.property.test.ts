// The hot path's hand-written JSON text (src/core/json-text.ts, docs/design.md#hot-path) is
// JSON.stringify's text, exactly, for every string: control characters, quotes, backslashes,
// lone and paired surrogates, non-ASCII, long strings; and for the number-or-null and
// string-or-null readings of any value; and for the access line's time and response time.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { jsonMillis, jsonNumberOrNull, jsonString, jsonStringOrNull, jsonWholeNumber } from '../../src/core/json-text.js'

// any UTF-16 code unit, lone surrogates included, weighted towards the ones JSON escapes
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(0x00, 0x08, 0x0a, 0x1f, 0x20, 0x22, 0x2f, 0x5c, 0x7f, 0x80, 0x2028, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfeff),
  fc.integer({ min: 0x20, max: 0x7e })
)
const text = fc.oneof(
  fc.array(unit, { maxLength: 300 }).map((units) => String.fromCharCode(...units)),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ maxLength: 600 })
)

describe('hand-written JSON text', () => {
  it('writes every string as JSON.stringify does', () => {
    fc.assert(fc.property(text, (s) => { expect(jsonString(s)).toBe(JSON.stringify(s)) }), { numRuns: runs(3000) })
  })

  it('writes a value read as a string or nothing, or a finite number or nothing, as JSON.stringify writes the reading', () => {
    const values = fc.oneof(text, fc.double(), fc.integer(), fc.constantFrom(-0, 1e21, 5e-324, Infinity, -Infinity, NaN), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.object())
    fc.assert(fc.property(values, (v) => {
      expect(jsonStringOrNull(v)).toBe(JSON.stringify(typeof v === 'string' ? v : null))
      expect(jsonNumberOrNull(v)).toBe(JSON.stringify(typeof v === 'number' && Number.isFinite(v) ? v : null))
    }), { numRuns: runs(3000) })
  })

  it('writes a time in ms since the epoch, or any whole number up to 2^53, as JSON.stringify does', () => {
    const whole = fc.oneof(fc.maxSafeNat(), fc.integer({ min: 0, max: 2 ** 32 }), fc.integer({ min: 1.7e12, max: 2e12 }), fc.constantFrom(0, 1e9 - 1, 1e9, 1e9 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1))
    fc.assert(fc.property(whole, (n) => { expect(jsonWholeNumber(n)).toBe(JSON.stringify(n)) }), { numRuns: runs(5000) })
    // anything else is JSON.stringify's
    for (const n of [-1, 0.5, 2 ** 53, NaN, Infinity]) expect(jsonWholeNumber(n)).toBe(JSON.stringify(n))
  })

  it('writes a duration rounded to the µs as JSON.stringify writes Math.round(ms * 1000) / 1000', () => {
    const ms = fc.oneof(fc.double({ min: 0, max: 5e6, noNaN: true }), fc.double({ min: 0, max: 10, noNaN: true }), fc.integer({ min: 0, max: 2 ** 31 }).map((us) => us / 1000), fc.double(), fc.constantFrom(0, 0.0004, 0.0005, 0.001, 0.1, 1.5, 2147483.647, 2147483.648, -0, -1, Infinity, NaN))
    fc.assert(fc.property(ms, (x) => { expect(jsonMillis(x)).toBe(JSON.stringify(Math.round(x * 1000) / 1000)) }), { numRuns: runs(20000) })
  })
})
