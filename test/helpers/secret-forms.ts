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

// The forms CONTRACT §14 adds (issue 45): whitespace inside base64, case and separators in hex,
// case in base32 and base32hex, `\xNN` and `\u{…}` escapes, quoted-printable, one percent layer
// over any form. Written from the RFCs and the languages' rules, not from src/core/secret-match.ts.

/** `text` with `sepAt(i)` put before each character i (the empty string for none) */
export const sprinkle = (text: string, sepAt: (i: number) => string): string =>
  [...text].map((c, i) => sepAt(i) + c).join('')

/** each letter upper case where `upperAt(i)` says, lower case elsewhere */
export const mixCase = (text: string, upperAt: (i: number) => boolean): string =>
  [...text].map((c, i) => upperAt(i) ? c.toUpperCase() : c.toLowerCase()).join('')

const B32HEX = '0123456789ABCDEFGHIJKLMNOPQRSTUV'

/** RFC 4648 §7 base32hex: base32's bit groups, the "extended hex" alphabet */
export const base32hex = (bytes: Buffer, pad = true): string =>
  [...base32(bytes, pad)].map((c) => c === '=' ? c : B32HEX[B32.indexOf(c)]!).join('')

/** base32hex, either case (Python's `b32hexdecode(s, casefold=True)`) */
export function base32hexDecode (text: string): Buffer {
  return base32Decode([...text.toUpperCase()].map((c) => c === '=' ? c : B32[B32HEX.indexOf(c)] ?? '!').join(''))
}

/** hex, each digit's case by `upperAt`, `sepAt(i)` between byte i - 1 and byte i (`aa:bb`, `AA-bb`, `aa bb`) */
export const hexSeparated = (bytes: Buffer, upperAt: (i: number) => boolean, sepAt: (i: number) => string): string =>
  [...bytes].map((b, i) => (i === 0 ? '' : sepAt(i)) + mixCase(b.toString(16).padStart(2, '0'), (j) => upperAt(2 * i + j))).join('')

/**
 * A hex decoder as tools read digests: two digits of either case per byte, and between bytes any
 * run of spaces (Python's `bytes.fromhex`), `:` or `-`; anything else is refused
 */
export function hexDecode (text: string): Buffer {
  const m = /^(?:[0-9a-fA-F]{2}(?:[ :-]*(?=[0-9a-fA-F])|$))*$/.exec(text)
  if (m === null) throw new Error(`not separated hex: ${text}`)
  return Buffer.from(text.replace(/[ :-]/g, ''), 'hex')
}

/** each UTF-8 byte as `\xNN` (Python's bytes literals, C strings), the digits' case by `upperAt` */
export const xEscapedBytes = (text: string, upperAt: (i: number) => boolean = () => false): string =>
  [...Buffer.from(text)].map((b, i) => `\\x${mixCase(b.toString(16).padStart(2, '0'), (j) => upperAt(2 * i + j))}`).join('')

/** each code point as `\u{…}` with `zeros` leading zeros (JavaScript, ES2015), the digits' case by `upperAt` */
export const braceEscaped = (text: string, zeros: number, upperAt: (i: number) => boolean = () => false): string =>
  [...text].map((c, i) => `\\u{${'0'.repeat(zeros)}${mixCase(c.codePointAt(0)!.toString(16), (j) => upperAt(i + j))}}`).join('')

/**
 * What a bytes literal's escapes give (Python's `codecs.escape_decode`): `\xNN` a byte, `\\`,
 * `\"` and `\'` the character escaped, any other character its UTF-8 bytes; then the bytes as UTF-8
 */
export function xBytesDecode (text: string): string {
  const bytes: number[] = []
  for (let i = 0; i < text.length;) {
    const m = /^\\x([0-9a-fA-F]{2})/.exec(text.slice(i, i + 4))
    if (m !== null) {
      bytes.push(parseInt(m[1]!, 16))
      i += 4
    } else if (text[i] === '\\' && '\\"\''.includes(text[i + 1] ?? '')) {
      bytes.push(text.charCodeAt(i + 1))
      i += 2
    } else {
      const c = String.fromCodePoint(text.codePointAt(i)!)
      bytes.push(...Buffer.from(c))
      i += c.length
    }
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(bytes))
}

/**
 * Quoted-printable (RFC 2045 §6.7): the UTF-8 bytes `pick` selects as `=XX` (the digits' case by
 * `upperAt`), the others raw, `=` always encoded; `softBreakAt(i)` puts a soft line break (`=` and
 * CRLF) before byte i
 */
export function quotedPrintable (text: string, pick: (i: number) => boolean, upperAt: (i: number) => boolean = () => true, softBreakAt: (i: number) => boolean = () => false): string {
  return [...Buffer.from(text)].map((b, i) => {
    const c = String.fromCharCode(b)
    const raw = b >= 0x21 && b <= 0x7e && c !== '=' && !pick(i)
    return (softBreakAt(i) && i > 0 ? '=\r\n' : '') + (raw ? c : `=${mixCase(b.toString(16).padStart(2, '0'), (j) => upperAt(2 * i + j))}`)
  }).join('')
}

/** a quoted-printable decoder (RFC 2045 §6.7, as Python's `quopri` reads it): `=XX` either case, soft line breaks dropped */
export function qpDecode (text: string): string {
  const bytes: number[] = []
  const s = text.replace(/=\r?\n/g, '')
  for (let i = 0; i < s.length;) {
    const m = /^=([0-9a-fA-F]{2})/.exec(s.slice(i, i + 3))
    if (m !== null) {
      bytes.push(parseInt(m[1]!, 16))
      i += 3
    } else if (s[i] === '=') {
      throw new Error(`a bare = at ${i}`)
    } else {
      const c = String.fromCodePoint(s.codePointAt(i)!)
      bytes.push(...Buffer.from(c))
      i += c.length
    }
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(bytes))
}
