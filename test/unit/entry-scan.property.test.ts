// An answer made only of a remote answer's values (the task projection) is not searched for the
// secret again on the way out (docs/design.md#hot-path): the upstream client searched the remote's
// text as it came in (answerCarriesSecret). This holds the one search equal to two, over arbitrary
// secrets and arbitrary remote texts that plant the secret in its forms — raw, hex, base64,
// inside strings, the characters `\u`-escaped, numbers written in exponent form: whenever the
// search as it came in finds nothing and entryScanSuffices(secret), neither the projection's JSON
// nor any value of the answer written by JSON.stringify carries the secret. And it shows why the
// two conditions are there: a secret of digits alone, written by the remote as a number in
// exponent form, comes out in the clear.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { isTask } from '../../schemas/a2a.js'
import { MIN_SECRET_LENGTH, answerCarriesSecret, entryScanSuffices, secretMatcher } from '../../src/core/secret-match.js'
import { projectTaskJson } from '../../src/argus/projection.js'
import { SYNC_PROPERTY } from '../helpers/sync-property.js'

const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: MIN_SECRET_LENGTH, maxLength: 40 })

/** JSON text of a value, each character of a string `\u`-escaped or not, each number in its own notation */
function write (v: unknown, escapeAt: (i: number) => boolean, numberForm: (n: number) => string): string {
  if (typeof v === 'string') {
    return '"' + [...v].map((c, i) => escapeAt(i) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(c).slice(1, -1)).join('') + '"'
  }
  if (typeof v === 'number') return numberForm(v)
  if (Array.isArray(v)) return '[' + v.map((x) => write(x, escapeAt, numberForm)).join(',') + ']'
  if (v !== null && typeof v === 'object') return '{' + Object.entries(v).map(([k, x]) => write(k, escapeAt, numberForm) + ':' + write(x, escapeAt, numberForm)).join(',') + '}'
  return JSON.stringify(v)
}

function values (v: unknown, out: unknown[] = []): unknown[] {
  out.push(v)
  if (v !== null && typeof v === 'object') for (const x of Object.values(v)) values(x, out)
  return out
}

/** a remote text planting the secret (or a form of it, or part of it) somewhere in a task */
const planted = (secret: string): fc.Arbitrary<string> => {
  const b = Buffer.from(secret)
  const form = fc.constantFrom(secret, b.toString('hex'), b.toString('base64'), b.toString('base64url'), secret.slice(1), secret.slice(0, -1), `x${secret}y`)
  const text = fc.oneof(form, fc.string({ maxLength: 12 }))
  const num = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(Number(secret.replace(/\D/g, '').slice(0, 16) || '0')))
  return fc.record({
    text,
    data: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(text, num)),
    name: text,
    id: fc.string({ minLength: 1, maxLength: 8 }),
    revision: num,
    stage: text,
    escape: fc.integer({ min: 0, max: 3 }),
    exponent: fc.boolean()
  }).map((r) => {
    const task = {
      id: r.id,
      contextId: r.name,
      kind: 'task',
      status: { state: 'completed' },
      artifacts: [{ artifactId: r.name, name: r.stage, parts: [{ kind: 'text', text: r.text }, { kind: 'data', data: r.data }] }],
      metadata: { argus_supervisor: { revision: r.revision, stage: r.stage } }
    }
    return write(task, (i) => r.escape > 0 && i % (r.escape + 1) === 0, (n) => r.exponent ? n.toExponential() : JSON.stringify(n))
  })
}

describe('the search as an answer comes in covers the projection', SYNC_PROPERTY, () => {
  it('for any secret the one search allows, nothing the entry search passed carries it on the way out', () => {
    fc.assert(fc.property(printable.filter(entryScanSuffices).chain((secret) => fc.tuple(fc.constant(secret), planted(secret))), ([secret, raw]) => {
      const m = secretMatcher(secret)
      const json = JSON.parse(raw) as unknown
      if (answerCarriesSecret(m, raw, json)) return
      expect(isTask(json)).toBe(true)
      expect(m.test(projectTaskJson(json as Parameters<typeof projectTaskJson>[0]))).toBe(false)
      for (const v of values(json)) expect(m.test(JSON.stringify(v))).toBe(false)
    }), { numRuns: runs(400) })
  })

  it('a secret of digits, or with JSON\'s structure in it, is searched again on the way out — and must be', () => {
    const digits = '1234567890123456'
    expect(entryScanSuffices(digits)).toBe(false)
    expect(entryScanSuffices('abc"def{ghi}jklmnop')).toBe(false)
    expect(entryScanSuffices('Zq3vQ8sL1xT7mN2pR5wY9kB4')).toBe(true)
    // the remote writes the secret as a number in exponent form: the entry search sees no digits in a row
    const raw = '{"n":1.234567890123456e15}'
    const m = secretMatcher(digits)
    expect(answerCarriesSecret(m, raw, JSON.parse(raw))).toBe(false)
    expect(m.test(JSON.stringify(JSON.parse(raw)))).toBe(true)
  })
})
