// The one mapping of zod issues to text (src/core/validation.ts, docs/design.md#errors): the path and
// what is wrong, from the issue's kind and the schema's bounds, never from the value given.
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { READABLE, invalidRequest, issueLines, pathText, type RequestPart } from '../../src/core/validation.js'

const lines = (schema: z.ZodType, value: unknown, part: RequestPart = 'body'): string[] => {
  const r = schema.safeParse(value, READABLE)
  if (r.success) throw new Error('expected a refusal')
  return issueLines(r.error.issues, part)
}

describe('validation messages', () => {
  it('writes paths as a person does', () => {
    expect(pathText([])).toBe('')
    expect(pathText(['parts', 0, 'text'])).toBe('parts[0].text')
    expect(pathText([1, 'controllerId'])).toBe('[1].controllerId')
    expect(pathText(['data', 'a b', 'idempotency-key'])).toBe('data["a b"].idempotency-key')
    expect(pathText(['x'.repeat(100)])).toBe('x'.repeat(64))
  })

  it('words each kind of issue from the schema, not the value', () => {
    const s = z.strictObject({
      n: z.number().int().min(1).max(10).optional(),
      gt: z.number().gt(0).optional(),
      s: z.string().min(1).max(4).optional(),
      s3: z.string().min(3).optional(),
      a: z.array(z.string()).min(2).max(3).optional(),
      e: z.enum(['x', 'y']).optional(),
      l: z.literal('only').optional(),
      o: z.object({ deep: z.boolean() }).optional(),
      m: z.number().multipleOf(5).optional(),
      u: z.url().optional(),
      r: z.string().regex(/^a+$/).optional(),
      own: z.string().regex(/^b+$/, 'must be b and only b').optional()
    })
    expect(lines(s, { n: 0 })).toEqual(['n: must be at least 1'])
    expect(lines(s, { n: 11 })).toEqual(['n: must be at most 10'])
    expect(lines(s, { n: 1.5 })).toEqual(['n: must be a whole number'])
    expect(lines(s, { n: '1' })).toEqual(['n: must be a number'])
    expect(lines(s, { gt: 0 })).toEqual(['gt: must be greater than 0'])
    expect(lines(s, { s: '' })).toEqual(['s: must not be empty'])
    expect(lines(s, { s: 'abcde' })).toEqual(['s: must be at most 4 characters'])
    expect(lines(s, { s3: 'ab' })).toEqual(['s3: must be at least 3 characters'])
    expect(lines(s, { a: ['x'] })).toEqual(['a: must hold at least 2 items'])
    expect(lines(s, { a: ['x', 'y', 'z', 'w'] })).toEqual(['a: must hold at most 3 items'])
    expect(lines(s, { a: ['x', 2] })).toEqual(['a[1]: must be a string'])
    expect(lines(s, { e: 'z' })).toEqual(['e: must be one of "x", "y"'])
    expect(lines(s, { l: 'other' })).toEqual(['l: must be "only"'])
    expect(lines(s, { o: {} })).toEqual(['o.deep: required'])
    expect(lines(s, { o: [] })).toEqual(['o: must be a JSON object'])
    expect(lines(s, { m: 7 })).toEqual(['m: must be a multiple of 5'])
    expect(lines(s, { u: 'not a url' })).toEqual(['u: must be a valid url'])
    expect(lines(s, { r: 'b' })).toEqual(['r: does not have the expected form'])
    // the schema's own message where it reads better
    expect(lines(s, { own: 'a' })).toEqual(['own: must be b and only b'])
    expect(lines(s, { zz: 1, yy: 2 })).toEqual(['unknown fields: zz, yy'])
    expect(lines(s, null)).toEqual(['body: must be a JSON object'])
  })

  it('names the part of the request the problem is in', () => {
    const s = z.strictObject({ limit: z.coerce.number().int().min(1) })
    expect(lines(s, { limit: '0', verbose: '1' }, 'querystring')).toEqual(['query parameter limit: must be at least 1', 'unknown query parameter: verbose'])
    expect(lines(z.strictObject({ id: z.string().min(2) }), { id: 'x' }, 'params')).toEqual(['path parameter id: must be at least 2 characters'])
    expect(lines(z.looseObject({ 'idempotency-key': z.string().max(2) }), { 'idempotency-key': 'xyz' }, 'headers')).toEqual(['header idempotency-key: must be at most 2 characters'])
  })

  it('never repeats the value it refused, whatever its shape', () => {
    const secret = 'sk-live-0123456789abcdef-TOKEN'
    const s = z.strictObject({
      n: z.number().optional(),
      e: z.enum(['a', 'b']).optional(),
      s: z.string().max(4).optional(),
      r: z.string().regex(/^x$/).optional(),
      l: z.literal('fixed').optional(),
      d: z.discriminatedUnion('kind', [z.object({ kind: z.literal('p') }), z.object({ kind: z.literal('q') })]).optional(),
      c: z.string().refine(() => false, 'is not accepted').optional()
    })
    const refused = s.safeParse({ n: secret, e: secret, s: secret, r: secret, l: secret, d: { kind: secret }, c: secret }, READABLE)
    expect(refused.success).toBe(false)
    const error = invalidRequest(refused.error!.issues)
    expect(error.code).toBe('invalid_request')
    expect(error.statusCode).toBe(400)
    expect(error.message.split('; ')).toHaveLength(7)
    expect(JSON.stringify(error.toBody())).not.toContain('TOKEN')
  })

  it('names at most eight problems and counts the rest', () => {
    const shape = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, z.string()]))
    const r = z.object(shape).safeParse({}, READABLE)
    expect(invalidRequest(r.error!.issues).message).toBe('f0: required; f1: required; f2: required; f3: required; f4: required; f5: required; f6: required; f7: required; and 4 more problems')
    const keys = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 1]))
    expect(lines(z.strictObject({}), keys)).toEqual(['unknown fields: k0, k1, k2, k3, k4, k5, k6, k7 and 2 more'])
  })
})
