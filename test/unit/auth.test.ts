// Token digests (docs/design.md#authentication): what an operator computes with `sha256sum` for
// GATEWAY_CALLERS is what the gateway computes per request.
import { describe, expect, it } from 'vitest'
import { findCaller, indexCallers, sha256Hex } from '../../src/callers/tokens.js'

// FIPS 180-2's test vector for SHA-256("abc")
const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'

describe('auth digests', () => {
  it('sha256Hex is the standard SHA-256, lower-case hex', () => {
    expect(sha256Hex('abc')).toBe(ABC)
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('a caller is found by the digest of its bearer token, whatever case the digest was written in', () => {
    const caller = { name: 'ops', tokenSha256: ABC.toUpperCase(), scopes: ['read' as const] }
    const index = indexCallers([caller])
    expect(findCaller(index, 'Bearer abc')).toBe(caller)
    expect(findCaller(index, 'bearer abc')).toBe(caller)
    expect(findCaller(index, 'Bearer abd')).toBeNull()
    expect(findCaller(index, 'Basic abc')).toBeNull()
    expect(findCaller(index, 'Bearer abc extra')).toBeNull()
    expect(findCaller(index, undefined)).toBeNull()
  })
})
