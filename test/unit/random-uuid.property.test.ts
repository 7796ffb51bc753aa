// randomUuid (src/core/random-uuid.ts), the gateway's request ids and JSON-RPC ids: what
// crypto.randomUUID writes — a version-4 UUID in lower-case hex, its version and variant bits set,
// every other digit random — over many fills of its pool of random bytes.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { genReqId } from '../../src/http/request-id.js'
import { randomUuid } from '../../src/core/random-uuid.js'
import type { IncomingMessage } from 'node:http'

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('randomUuid', () => {
  it('writes version-4 UUIDs as randomUUID does, none twice, every free digit taking every value', () => {
    const n = 20_000
    const ids = new Set<string>()
    // per position, the digits seen there
    const digits: Array<Set<string>> = Array.from({ length: 36 }, () => new Set())
    // per byte, the pairs of digits seen: a byte's two digits are its two halves, not one twice
    const pairs: Array<Set<string>> = Array.from({ length: 36 }, () => new Set())
    for (let i = 0; i < n; i++) {
      const id = randomUuid()
      expect(id).toMatch(V4)
      ids.add(id)
      for (let p = 0; p < 36; p++) digits[p]!.add(id[p]!)
      for (const p of [0, 2, 4, 6, 9, 11, 16, 21, 24, 26, 28, 30, 32, 34]) pairs[p]!.add(id.slice(p, p + 2))
    }
    expect(ids.size).toBe(n)
    for (const p of [0, 2, 4, 6, 9, 11, 16, 21, 24, 26, 28, 30, 32, 34]) expect(pairs[p]!.size).toBe(256)
    // randomUUID's own text has the same shape
    expect(randomUUID()).toMatch(V4)
    for (let p = 0; p < 36; p++) {
      if ([8, 13, 18, 23].includes(p)) expect([...digits[p]!]).toEqual(['-'])
      else if (p === 14) expect([...digits[p]!]).toEqual(['4'])
      else if (p === 19) expect([...digits[p]!].sort()).toEqual(['8', '9', 'a', 'b'])
      else expect(digits[p]!.size).toBe(16)
    }
  })

  it('is the id of a request without a well-formed x-request-id of its own', () => {
    const req = (h?: string): IncomingMessage => ({ headers: h === undefined ? {} : { 'x-request-id': h } }) as unknown as IncomingMessage
    expect(genReqId(req())).toMatch(V4)
    expect(genReqId(req('bad id with spaces'))).toMatch(V4)
    expect(genReqId(req('caller-id.1'))).toBe('caller-id.1')
  })
})
