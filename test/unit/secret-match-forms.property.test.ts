// The secret in the forms CONTRACT §14 adds to §13's (docs/design.md#secret-echo, issue 45), over
// random secrets, random text around them (so every alignment of base64 and base32) and random
// placement of what a decoder skips: base64 and base64url with spaces, tabs and bare CRs anywhere;
// hex of mixed case with `:`, `-` or spaces between bytes; base32 and base32hex of mixed case;
// `\xNN` and `\u{…}` escapes; quoted-printable; and one layer of percent-encoding over each of
// these and over §13's forms. Each form is first read back by a decoder — Node's own (Buffer,
// TextDecoder, the JavaScript parser through `vm`, decodeURIComponent) or a reference decoder of
// test/helpers/secret-forms.ts — and only then must the guard find it: in the text, in JSON, in
// JSON in JSON, as bytes, through answerCarriesSecret, and `replace` (the log's scrub) must leave
// none of it, in a line the logger writes too. And the
// other way round: random task payloads without the secret — hex digests of any case and
// separators, base64 blobs broken by whitespace, UUIDs, base32 and base32hex ids, percent-encoded
// URLs, escapes — pass untouched.
import { createHash } from 'node:crypto'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import type pino from 'pino'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { createLogger } from '../../src/core/logger.js'
import { MIN_SECRET_LENGTH, answerCarriesSecret, secretMatcher, type SecretMatcher } from '../../src/core/secret-match.js'
import {
  base32, base32Decode, base32hex, base32hexDecode, braceEscaped, hexDecode, hexSeparated, htmlDecode, htmlRefs, mixCase,
  percentEveryByte, qpDecode, quotedPrintable, sprinkle, uEscaped, xBytesDecode, xEscapedBytes
} from '../helpers/secret-forms.js'
import { SYNC_PROPERTY } from '../helpers/sync-property.js'

const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: MIN_SECRET_LENGTH, maxLength: 64 })
/** any text around the secret: its length puts the secret at every alignment of base64's and base32's groups */
const around = fc.string({ maxLength: 9 })
/** what a decision at position i picks: a random cycle of choices */
const picks = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<(i: number) => T> =>
  fc.array(arb, { minLength: 1, maxLength: 97 }).map((a) => (i: number) => a[i % a.length]!)

/** the whitespace Node's base64 decoder skips, one or more, or nothing (most often) */
const B64_SEP = fc.constantFrom('', '', '', '', ' ', '\t', '\r', '\n', '\r\n', '  ', ' \t', '\t\r')
/** what tools put between a digest's bytes, or nothing */
const HEX_SEP = fc.constantFrom('', '', ':', '-', ' ', '  ')

interface Choices { sep: (i: number) => string; hexSep: (i: number) => string; upper: (i: number) => boolean; pick: (i: number) => boolean; zeros: number }
const choices: fc.Arbitrary<Choices> = fc.record({ sep: picks(B64_SEP), hexSep: picks(HEX_SEP), upper: picks(fc.boolean()), pick: picks(fc.boolean()), zeros: fc.nat(6) })

/** a JavaScript string literal's content, as the JavaScript parser reads it */
const jsDecode = (literal: string): string => runInNewContext(`"${literal}"`) as string
const fromB64 = (f: string): string => Buffer.from(f, 'base64').toString()
const fromB64url = (f: string): string => Buffer.from(f, 'base64url').toString()
const b64 = (t: string): string => Buffer.from(t).toString('base64')
/** a raw character in a string literal: `"`, `\` and control characters escaped, as a remote writing one must */
const jsRaw = (c: string): string => JSON.stringify(c).slice(1, -1)

type Form = [encode: (text: string, c: Choices) => string, decode: (form: string) => string]

/** the forms of §14, each with the decoder that reads it back */
const FORMS: Record<string, Form> = {
  'base64, whitespace anywhere': [(t, c) => sprinkle(b64(t), c.sep), fromB64],
  'base64 without padding, whitespace anywhere': [(t, c) => sprinkle(b64(t).replace(/=+$/, ''), c.sep), fromB64],
  'base64url, whitespace anywhere': [(t, c) => sprinkle(Buffer.from(t).toString('base64url'), c.sep), fromB64url],
  'base64 in a JSON string, whitespace anywhere': [(t, c) => JSON.stringify(sprinkle(b64(t), c.sep)).slice(1, -1), (f) => fromB64(JSON.parse(`"${f}"`) as string)],
  'hex, mixed case, separators between bytes': [(t, c) => hexSeparated(Buffer.from(t), c.upper, c.hexSep), (f) => hexDecode(f).toString()],
  'hex, mixed case': [(t, c) => hexSeparated(Buffer.from(t), c.upper, () => ''), (f) => hexDecode(f).toString()],
  'hex, colons (aa:bb)': [(t) => hexSeparated(Buffer.from(t), () => false, () => ':'), (f) => hexDecode(f).toString()],
  'hex, upper case, dashes': [(t) => hexSeparated(Buffer.from(t), () => true, () => '-'), (f) => hexDecode(f).toString()],
  'hex, spaces (bytes.fromhex)': [(t) => hexSeparated(Buffer.from(t), () => false, () => ' '), (f) => hexDecode(f).toString()],
  'base32, mixed case': [(t, c) => mixCase(base32(Buffer.from(t)), c.upper), (f) => base32Decode(f).toString()],
  'base32, mixed case, unpadded': [(t, c) => mixCase(base32(Buffer.from(t), false), c.upper), (f) => base32Decode(f).toString()],
  base32hex: [(t) => base32hex(Buffer.from(t)), (f) => base32hexDecode(f).toString()],
  'base32hex, lower case': [(t) => base32hex(Buffer.from(t)).toLowerCase(), (f) => base32hexDecode(f).toString()],
  'base32hex, mixed case, unpadded': [(t, c) => mixCase(base32hex(Buffer.from(t), false), c.upper), (f) => base32hexDecode(f).toString()],
  '\\x escape of every UTF-8 byte (a bytes literal)': [(t, c) => xEscapedBytes(t, c.upper), xBytesDecode],
  '\\x escape of some UTF-8 bytes, the others raw': [(t, c) => [...t].map((ch, i) => c.pick(i) ? xEscapedBytes(ch, c.upper) : jsRaw(ch)).join(''), xBytesDecode],
  'JavaScript escapes: \\x below U+0100, \\u{…} above': [(t, c) => [...t].map((ch, i) => ch.codePointAt(0)! < 0x100 ? `\\x${mixCase(ch.codePointAt(0)!.toString(16).padStart(2, '0'), (j) => c.upper(i + j))}` : braceEscaped(ch, c.zeros, c.upper)).join(''), jsDecode],
  '\\u{…} escape of every character, leading zeros': [(t, c) => braceEscaped(t, c.zeros, c.upper), jsDecode],
  '\\u{…} escape of some characters, the others raw': [(t, c) => [...t].map((ch, i) => c.pick(i) ? braceEscaped(ch, c.zeros, c.upper) : jsRaw(ch)).join(''), jsDecode],
  'quoted-printable, every byte': [(t, c) => quotedPrintable(t, () => true, c.upper), qpDecode],
  'quoted-printable, some bytes': [(t, c) => quotedPrintable(t, c.pick, c.upper), qpDecode],
  'quoted-printable, some bytes, soft line breaks': [(t, c) => quotedPrintable(t, c.pick, c.upper, (i) => c.sep(i) !== ''), qpDecode]
}

/** §13's forms, under which one percent layer is searched too */
const FORMS_13: Record<string, Form> = {
  raw: [(t) => t, (f) => f],
  base64: [(t) => b64(t), fromB64],
  'base64, line breaks': [(t) => sprinkle(b64(t), (i) => i % 7 === 6 ? '\r\n' : ''), fromB64],
  base64url: [(t) => Buffer.from(t).toString('base64url'), fromB64url],
  hex: [(t) => Buffer.from(t).toString('hex'), (f) => Buffer.from(f, 'hex').toString()],
  base32: [(t) => base32(Buffer.from(t)), (f) => base32Decode(f).toString()],
  'JSON \\u': [(t) => uEscaped(t), (f) => JSON.parse(`"${f}"`) as string],
  'HTML references': [(t) => htmlRefs(t, 'hex'), htmlDecode]
}

/** one layer of percent-encoding over each form: as encodeURIComponent writes it, and every byte (either case) */
const PERCENT_LAYER: Record<string, Form> = Object.fromEntries(Object.entries({ ...FORMS, ...FORMS_13 }).flatMap(([name, [encode, decode]]) => [
  [`${name}, percent-encoded`, [(t: string, c: Choices) => encodeURIComponent(encode(t, c)), (f: string) => decode(decodeURIComponent(f))]],
  [`${name}, every byte percent-encoded`, [(t: string, c: Choices) => percentEveryByte(encode(t, c), c.upper(0)), (f: string) => decode(decodeURIComponent(f))]]
] satisfies Array<[string, Form]>))

/** the guard finds `form` wherever an answer can hold it; `replace` leaves nothing of it */
function expectFound (m: SecretMatcher, name: string, form: string): void {
  expect(m.test(form), name).toBe(true)
  const once = JSON.stringify({ x: form })
  expect(m.test(once), `${name} in JSON`).toBe(true)
  expect(m.test(JSON.stringify({ y: once })), `${name} in JSON in JSON`).toBe(true)
  // bytes are read one character a byte (latin1): a raw character beyond ASCII is not that character there
  if (Buffer.byteLength(once) === once.length) expect(m.test(Buffer.from(once)), `${name} as bytes`).toBe(true)
  expect(answerCarriesSecret(m, once, JSON.parse(once)), `${name}, an upstream answer`).toBe(true)
  const line = `{"msg":"seen","v":${once},"n":1}\n`
  expect(m.test(m.replace(line, '[REDACTED]')), `${name} replaced`).toBe(false)
}

function checkAll (forms: Record<string, Form>, secret: string, before: string, after: string, c: Choices): void {
  const text = `${before}${secret}${after}`
  const m = secretMatcher(secret)
  for (const [name, [encode, decode]] of Object.entries(forms)) {
    const form = encode(text, c)
    // what the guard must find is what a decoder reads back
    expect(decode(form), `${name} decodes: ${JSON.stringify(form)}`).toBe(text)
    expectFound(m, `${name}: ${JSON.stringify(form)}`, form)
  }
}

describe('the secret in §14\'s forms', SYNC_PROPERTY, () => {
  it('is found in each, at any alignment, whatever is skipped where, once a decoder has read it back', () => {
    fc.assert(fc.property(printable, around, around, choices, (secret, before, after, c) => {
      checkAll(FORMS, secret, before, after, c)
    }), { numRuns: runs(150) })
  })

  it('is found under one layer of percent-encoding over any form, §13\'s too (base64 in a URL query)', () => {
    fc.assert(fc.property(printable, around, around, choices, (secret, before, after, c) => {
      checkAll(PERCENT_LAYER, secret, before, after, c)
    }), { numRuns: runs(60) })
  })

  it('is found when it is not ASCII: escapes of its code points or of its UTF-8 bytes, its bytes in every encoding', () => {
    const unicode = fc.string({ unit: 'grapheme', minLength: MIN_SECRET_LENGTH, maxLength: 24 }).filter((s) => Buffer.byteLength(s) >= MIN_SECRET_LENGTH)
    fc.assert(fc.property(unicode, around, choices, (secret, before, c) => {
      checkAll(FORMS, secret, before, '', c)
    }), { numRuns: runs(60) })
  })

  it('is found in a URL query as a remote signs a link: base64 with its padding percent-encoded', () => {
    fc.assert(fc.property(printable, around, choices, (secret, before, c) => {
      const m = secretMatcher(secret)
      const sig = encodeURIComponent(sprinkle(b64(`${before}${secret}`), c.sep))
      const uri = `https://files.example/f.txt?expires=1700000000&sig=${sig}&x=1`
      expect(fromB64(decodeURIComponent(/[?&]sig=([^&]*)/.exec(new URL(uri).search)![1]!))).toBe(`${before}${secret}`)
      expectFound(m, uri, uri)
    }), { numRuns: runs(100) })
  })
})

/** a pseudo-random digest from a seed: the payloads' random bytes, reproducible from fast-check's seed */
const digest = (seed: number, n = 32): Buffer => {
  const out: Buffer[] = []
  for (let i = 0; out.length * 32 < n; i++) out.push(createHash('sha256').update(`${seed}:${i}`).digest())
  return Buffer.concat(out).subarray(0, n)
}

/** a task payload as a remote writes one: ids, digests, blobs, prose, URLs; none made from the secret */
const payload = fc.record({
  seeds: fc.array(fc.integer(), { minLength: 6, maxLength: 6 }),
  uuids: fc.array(fc.uuid(), { minLength: 1, maxLength: 3 }),
  upper: picks(fc.boolean()),
  sep: picks(B64_SEP),
  hexSep: fc.constantFrom('', ':', '-', ' '),
  words: fc.array(fc.constantFrom('campaign', 'attempt', 'loss', 'checkpoint', 'completed', 'run', 'the', 'of', 'x=1&y=%20', '\\x41', '\\u{41}', '=3D', '&#115;'), { maxLength: 30 }),
  numbers: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 4 })
}).map((p) => {
  const [a, b, c, d, e, f] = p.seeds.map((s) => digest(s, 48))
  return JSON.stringify({
    id: p.uuids[0],
    contextId: p.uuids.at(-1),
    sha256: a!.subarray(0, 32).toString('hex'),
    digest: hexSeparated(b!.subarray(0, 32), p.upper, () => p.hexSep),
    blob: sprinkle(c!.toString('base64'), p.sep),
    blobUrl: d!.toString('base64url'),
    base32Id: mixCase(base32(e!.subarray(0, 20), false), p.upper),
    base32hexId: base32hex(f!.subarray(0, 20), false).toLowerCase(),
    link: `https://files.example/f.txt?sig=${encodeURIComponent(c!.toString('base64'))}&id=${p.uuids.join(',')}`,
    text: p.words.join(' '),
    numbers: p.numbers
  })
})

describe('the log', () => {
  it('a line that carries a form is written without it', () => {
    fc.assert(fc.property(printable, around, choices, fc.constantFrom(...Object.keys(FORMS)), (secret, before, c, name) => {
      const form = FORMS[name]![0](`${before}${secret}`, c)
      const written: string[] = []
      const log = createLogger({ level: 'info', secrets: new Set([secret]), destination: { write: (s: string) => { written.push(s) } } as unknown as pino.DestinationStream })
      log.info({ seen: form, digest: 'ab:cd:ef' }, 'a line')
      expect(written).toHaveLength(1)
      expect(secretMatcher(secret).test(written[0]!), `${name}: ${written[0]!}`).toBe(false)
      expect(written[0]).toContain('[REDACTED]')
    }), { numRuns: runs(60) })
  })
})

describe('no false alarm', SYNC_PROPERTY, () => {
  it('a random task payload without the secret passes untouched', () => {
    fc.assert(fc.property(printable, payload, (secret, answer) => {
      const m = secretMatcher(secret)
      fc.pre(!answer.includes(secret))
      expect(m.test(answer), answer).toBe(false)
      expect(answerCarriesSecret(m, answer, JSON.parse(answer))).toBe(false)
      expect(m.replace(answer, '[REDACTED]')).toBe(answer)
    }), { numRuns: runs(300) })
  })
})
