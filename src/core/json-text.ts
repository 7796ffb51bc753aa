// JSON text written by hand on the hot path (docs/design.md#hot-path): each JSON.stringify call
// pays a fixed cost to set up its serializer before it writes a byte, more than a short string
// costs to check (BENCHMARKS.md#hot-path-choices). These write exactly what JSON.stringify writes
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

/** 10^9: a whole number is written as two parts below 2^31 */
const GIGA = 1_000_000_000
const NINE_ZEROS = '000000000'

/**
 * JSON.stringify(n) for a whole number from 0 to 2^53 (a time in ms since the epoch), written from
 * two parts below 2^31: V8 writes a number past 2^31 through a cache whose strings it allocates in
 * the old generation (docs/design.md#hot-path), and JSON.stringify pays its fixed cost instead.
 * Anything else goes to JSON.stringify.
 */
export function jsonWholeNumber (n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) return JSON.stringify(n)
  if (n < GIGA) return String(n | 0)
  const high = Math.floor(n / GIGA)
  const low = String((n - high * GIGA) | 0)
  return String(high | 0) + NINE_ZEROS.slice(low.length) + low
}

/**
 * JSON.stringify(Math.round(ms * 1000) / 1000) for a duration in ms (the access line's
 * `responseTime`): a whole number of µs written as ms with up to three decimals and no trailing
 * zero — the shortest text that reads back as that number, which is what JSON.stringify writes.
 * Past 2^31 µs (35 minutes), negative or not finite: JSON.stringify.
 */
export function jsonMillis (ms: number): string {
  const us = Math.round(ms * 1000)
  if (!(us >= 0 && us < 2147483648)) return JSON.stringify(us / 1000)
  const whole = (us / 1000) | 0
  let frac = us - whole * 1000
  if (frac === 0) return String(whole)
  let digits = 3
  while (frac % 10 === 0) {
    frac = frac / 10
    digits--
  }
  const f = String(frac)
  return String(whole) + '.' + '00'.slice(0, digits - f.length) + f
}
