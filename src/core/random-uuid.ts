// A version-4 UUID's text as randomUUID writes it (lower-case hex, RFC 9562), from the same
// cryptographic source, written as one flat string (docs/design.md#hot-path): Node's randomUUID joins
// twenty pieces — about twenty small strings allocated — and the rope that makes is copied flat
// again when it is checked as a header or joined into a request body (what that cost:
// BENCHMARKS.md#hot-path-choices).
// The gateway's request ids and its JSON-RPC ids. test/unit/random-uuid.property.test.ts holds the
// form and the bits.
import { randomFillSync } from 'node:crypto'

const IDS_PER_FILL = 128
const random = Buffer.allocUnsafeSlow(16 * IDS_PER_FILL)
let nextId = IDS_PER_FILL
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0))
const DASH = 0x2d

/** a random (version 4) UUID, as crypto.randomUUID writes one */
export function randomUuid (): string {
  if (nextId === IDS_PER_FILL) {
    randomFillSync(random)
    nextId = 0
  }
  const o = nextId++ * 16
  const r = random
  const h = HEX
  // the version (4) and the variant (10xx) bits
  const v = (r[o + 6]! & 0x0f) | 0x40
  const n = (r[o + 8]! & 0x3f) | 0x80
  return String.fromCharCode(
    h[r[o]! >> 4]!, h[r[o]! & 15]!, h[r[o + 1]! >> 4]!, h[r[o + 1]! & 15]!, h[r[o + 2]! >> 4]!, h[r[o + 2]! & 15]!, h[r[o + 3]! >> 4]!, h[r[o + 3]! & 15]!, DASH,
    h[r[o + 4]! >> 4]!, h[r[o + 4]! & 15]!, h[r[o + 5]! >> 4]!, h[r[o + 5]! & 15]!, DASH,
    h[v >> 4]!, h[v & 15]!, h[r[o + 7]! >> 4]!, h[r[o + 7]! & 15]!, DASH,
    h[n >> 4]!, h[n & 15]!, h[r[o + 9]! >> 4]!, h[r[o + 9]! & 15]!, DASH,
    h[r[o + 10]! >> 4]!, h[r[o + 10]! & 15]!, h[r[o + 11]! >> 4]!, h[r[o + 11]! & 15]!, h[r[o + 12]! >> 4]!, h[r[o + 12]! & 15]!,
    h[r[o + 13]! >> 4]!, h[r[o + 13]! & 15]!, h[r[o + 14]! >> 4]!, h[r[o + 14]! & 15]!, h[r[o + 15]! >> 4]!, h[r[o + 15]! & 15]!)
}
