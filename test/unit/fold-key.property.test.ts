// The key fold's printable-ASCII path (src/control/rules.ts, docs/design.md#constraints-envelope)
// folds exactly as the full definition does: a key that differs would be a constraints key or a
// reserved field let through, or a plain key refused.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkBodyRules, foldKey, foldKeyFully } from '../../src/control/rules.js'

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 })

describe('foldKey', () => {
  it('folds printable ASCII exactly as the full fold', () => {
    fc.assert(fc.property(printable, (k) => { expect(foldKey(k)).toBe(foldKeyFully(k)) }), { numRuns: 5000 })
  })

  it('folds any other key by the full fold', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), (k) => { expect(foldKey(k)).toBe(foldKeyFully(k)) }), { numRuns: 2000 })
  })

  it('the spellings of constraints and the reserved fields, ASCII or not, are still refused', () => {
    for (const key of ['Constraints', 'CON_STRAINTS', 'con-straints', 'ＣＯＮＳＴＲＡＩＮＴＳ', 'conſtraints', 'con\u00adstraints']) {
      expect(() => { checkBodyRules({ a: { [key]: {} } }) }, key).toThrow(expect.objectContaining({ code: 'constraints_not_relaxable' }))
    }
    for (const key of ['Controller_Id', 'CONTROLLER-EPOCH', 'argus-supervisor', 'controller\u200bid']) {
      expect(() => { checkBodyRules({ [key]: 1 }) }, key).toThrow(expect.objectContaining({ code: 'reserved_field' }))
    }
  })
})
