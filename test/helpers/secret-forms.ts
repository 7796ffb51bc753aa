// The encodings a decoder accepts (docs/design.md#secret-echo), written here without the
// gateway's code, with a decoder for each that the gateway does not have: the unit test of
// src/core/secret-match.ts and the secret-echo test over sockets plant them, after checking that each
// decodes back to what was encoded.

const hex2 = (b: number, upper: boolean): string => {
  const h = b.toString(16).padStart(2, '0')
  return upper ? h.toUpperCase() : h
}

/** every UTF-8 byte percent-encoded (letters and digits too), `times` times over: %73, %2573, %252573 */
export function percentEveryByte (text: string, upper = true, times = 1): string {
  let out = [...Buffer.from(text)].map((b) => `%${hex2(b, upper)}`).join('')
  for (let i = 1; i < times; i++) out = out.replace(/%/g, '%25')
  return out
}

/** decodeURIComponent `times` times */
export function percentDecode (text: string, times = 1): string {
  let out = text
  for (let i = 0; i < times; i++) out = decodeURIComponent(out)
  return out
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 §6 base32 */
export function base32 (bytes: Buffer, pad = true): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xfff
    bits += 8
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31]
  if (pad) while (out.length % 8 !== 0) out += '='
  return out
}

export function base32Decode (text: string): Buffer {
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const c of text.toUpperCase().replace(/=+$/, '')) {
    const v = B32.indexOf(c)
    if (v < 0) throw new Error(`not base32: ${c}`)
    value = ((value << 5) | v) & 0xfff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** a line break every `every` characters, as MIME (76, CRLF) and PEM (64, LF) write base64 */
export const broken = (text: string, every: number, sep: string): string => text.match(new RegExp(`[^]{1,${every}}`, 'g'))?.join(sep) ?? text

/** each UTF-16 unit as a JSON `\uXXXX` escape */
export const uEscaped = (text: string, upper = false): string =>
  Array.from({ length: text.length }, (_, i) => `\\u${hexUnit(text.charCodeAt(i), upper)}`).join('')
const hexUnit = (u: number, upper: boolean): string => {
  const h = u.toString(16).padStart(4, '0')
  return upper ? h.toUpperCase() : h
}

/** HTML's named references for ASCII punctuation (the WHATWG list), the legacy ones first */
export const HTML_NAMED: Record<string, string[]> = {
  '"': ['&quot;', '&QUOT;'],
  '&': ['&amp;', '&AMP;'],
  '<': ['&lt;', '&LT;'],
  '>': ['&gt;', '&GT;'],
  "'": ['&apos;'],
  '!': ['&excl;'],
  '#': ['&num;'],
  $: ['&dollar;'],
  '%': ['&percnt;'],
  '(': ['&lpar;'],
  ')': ['&rpar;'],
  '*': ['&ast;', '&midast;'],
  '+': ['&plus;'],
  ',': ['&comma;'],
  '.': ['&period;'],
  '/': ['&sol;'],
  ':': ['&colon;'],
  ';': ['&semi;'],
  '=': ['&equals;'],
  '?': ['&quest;'],
  '@': ['&commat;'],
  '[': ['&lsqb;', '&lbrack;'],
  '\\': ['&bsol;'],
  ']': ['&rsqb;', '&rbrack;'],
  '^': ['&Hat;'],
  _: ['&lowbar;', '&UnderBar;'],
  '`': ['&grave;', '&DiacriticalGrave;'],
  '{': ['&lcub;', '&lbrace;'],
  '|': ['&verbar;', '&vert;', '&VerticalLine;'],
  '}': ['&rcub;', '&rbrace;']
}

export type HtmlStyle = 'decimal' | 'decimal, leading zeros' | 'decimal, no semicolon' | 'hex' | 'HEX' | 'hex, leading zeros' | 'named'

/** every character as an HTML character reference of one style ('named': those that have a name, the rest as decimal) */
export function htmlRefs (text: string, style: HtmlStyle): string {
  return [...text].map((c) => htmlRef(c, style)).join('')
}

export function htmlRef (c: string, style: HtmlStyle): string {
  const cp = c.codePointAt(0)!
  switch (style) {
    case 'decimal': return `&#${cp};`
    case 'decimal, leading zeros': return `&#000${cp};`
    // a parser accepts it when no digit follows (the next reference starts with `&`)
    case 'decimal, no semicolon': return `&#${cp}`
    case 'hex': return `&#x${cp.toString(16)};`
    case 'HEX': return `&#X${cp.toString(16).toUpperCase()};`
    case 'hex, leading zeros': return `&#x00${cp.toString(16)};`
    case 'named': return HTML_NAMED[c]?.[0] ?? `&#${cp};`
  }
}

/** a reference decoder of what htmlRefs writes: numeric references and the names above */
export function htmlDecode (text: string): string {
  const names = new Map(Object.entries(HTML_NAMED).flatMap(([c, ns]) => ns.map((n) => [n, c] as const)))
  return text.replace(/&#[xX]([0-9a-fA-F]+);?|&#(\d+);?|&[A-Za-z]+;/g, (m, hex: string | undefined, dec: string | undefined) => {
    if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16))
    if (dec !== undefined) return String.fromCodePoint(parseInt(dec, 10))
    return names.get(m) ?? m
  })
}

/**
 * The text with the characters `pick` selects encoded one way and the others raw, as one decoder
 * reads them: percent (a raw `%` must be encoded), HTML (a raw `&` must be), JSON (a raw `"`, `\`
 * must be escaped). Returns the form and that decoder.
 */
export function mixed (text: string, pick: (i: number) => boolean, kind: 'percent' | 'html' | 'json'): { form: string; decode: (s: string) => string } {
  const chars = [...text]
  if (kind === 'percent') {
    return { form: chars.map((c, i) => pick(i) || c === '%' ? percentEveryByte(c, i % 2 === 0) : c).join(''), decode: decodeURIComponent }
  }
  if (kind === 'html') {
    const styles: HtmlStyle[] = ['decimal', 'hex', 'HEX', 'decimal, leading zeros', 'named']
    return { form: chars.map((c, i) => pick(i) || c === '&' ? htmlRef(c, styles[i % styles.length]!) : c).join(''), decode: htmlDecode }
  }
  return {
    form: chars.map((c, i) => pick(i) ? uEscaped(c, i % 2 === 0) : JSON.stringify(c).slice(1, -1)).join(''),
    decode: (s) => JSON.parse(`"${s}"`) as string
  }
}
