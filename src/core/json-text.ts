// JSON text written by hand on the hot path (docs/design.md#hot-path): each JSON.stringify call
// pays a fixed ~2 k instructions to set up its serializer before it writes a byte, several times
// what a short string costs to check. These write exactly what JSON.stringify writes
// (test/unit/json-text.property.test.ts), and hand anything they do not handle to it.

/** strings longer than this go to JSON.stringify, whose scan is native */
const SHORT = 256

/**
 * JSON.stringify(s) for a string: quoted as it is when it holds no character JSON escapes (a
 * control character, `"`, `\`) nor a UTF-16 surrogate (a lone one is escaped); otherwise, and for
 * long strings, JSON.stringify's own text.
 */
export function jsonString (s: string): string {
  if (s.length > SHORT) return JSON.stringify(s)
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s)
  }
  return '"' + s + '"'
}

/** JSON.stringify(v) for a value read as a string or nothing: the string's text, else `null` */
export function jsonStringOrNull (v: unknown): string {
  return typeof v === 'string' ? jsonString(v) : 'null'
}

/** JSON.stringify(v) for a value read as a finite number or nothing: String(n) is its text, else `null` */
export function jsonNumberOrNull (v: unknown): string {
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : 'null'
}
