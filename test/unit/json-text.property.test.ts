// The hot path's hand-written JSON text (src/core/json-text.ts, docs/design.md#hot-path) is
// JSON.stringify's text, exactly, for every string: control characters, quotes, backslashes,
// lone and paired surrogates, non-ASCII, long strings; and for the number-or-null and
// string-or-null readings of any value.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonNumberOrNull, jsonString, jsonStringOrNull } from '../../src/core/json-text.js'

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
    fc.assert(fc.property(text, (s) => { expect(jsonString(s)).toBe(JSON.stringify(s)) }), { numRuns: 3000 })
  })

  it('writes a value read as a string or nothing, or a finite number or nothing, as JSON.stringify writes the reading', () => {
    const values = fc.oneof(text, fc.double(), fc.integer(), fc.constantFrom(-0, 1e21, 5e-324, Infinity, -Infinity, NaN), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.object())
    fc.assert(fc.property(values, (v) => {
      expect(jsonStringOrNull(v)).toBe(JSON.stringify(typeof v === 'string' ? v : null))
      expect(jsonNumberOrNull(v)).toBe(JSON.stringify(typeof v === 'number' && Number.isFinite(v) ? v : null))
    }), { numRuns: 3000 })
  })
})
