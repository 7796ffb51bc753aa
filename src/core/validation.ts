// What a schema found wrong, in words (docs/design.md#errors): the one place a zod issue
// becomes text, for the REST interface (400 invalid_request) and the configuration alike. A
// message is the field's path and a sentence the gateway wrote from the kind of issue and the
// schema's own bounds — never the value that was given, which may be a secret or a token. A
// schema's own message (zod's `error:` param) comes first where it reads better.
import type { z } from 'zod'
import { GatewayError } from './errors.js'

type RawIssue = z.core.$ZodRawIssue
type Issue = z.core.$ZodIssue

/** how many problems one message names; the rest are counted */
const MAX_LISTED = 8
/** a key the caller chose is shown to this length at most */
const MAX_KEY = 64

const plural = (n: number | bigint, one: string, many: string): string => `${n} ${Number(n) === 1 ? one : many}`
const shown = (v: unknown): string => typeof v === 'string' ? JSON.stringify(v) : String(v)
const oneOf = (values: readonly unknown[]): string =>
  values.length === 1 ? shown(values[0]) : `one of ${values.slice(0, 12).map(shown).join(', ')}${values.length > 12 ? ', …' : ''}`

const TYPE_NAMES: Record<string, string> = {
  object: 'a JSON object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  null: 'null'
}

function tooSmall (iss: Extract<RawIssue, { code: 'too_small' }>): string {
  const min = iss.minimum
  switch (iss.origin) {
    case 'number': case 'int': case 'bigint':
      return iss.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`
    case 'string':
      if (iss.exact === true) return `must be exactly ${plural(min, 'character', 'characters')}`
      return Number(min) === 1 ? 'must not be empty' : `must be at least ${plural(min, 'character', 'characters')}`
    case 'array': case 'set':
      if (iss.exact === true) return `must hold exactly ${plural(min, 'item', 'items')}`
      return Number(min) === 1 ? 'must not be empty' : `must hold at least ${plural(min, 'item', 'items')}`
    default:
      return 'is too small'
  }
}

function tooBig (iss: Extract<RawIssue, { code: 'too_big' }>): string {
  const max = iss.maximum
  switch (iss.origin) {
    case 'number': case 'int': case 'bigint':
      return iss.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`
    case 'string':
      return `must be at most ${plural(max, 'character', 'characters')}`
    case 'array': case 'set':
      return `must hold at most ${plural(max, 'item', 'items')}`
    default:
      return 'is too large'
  }
}

/**
 * zod's error map for every parse a person reads the result of: the gateway's sentence for each
 * kind of issue. Only the issue's kind and the schema's bounds are read; `input` only to tell a
 * missing field from a wrong one.
 */
export function issueMessage (iss: RawIssue): string {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required'
      return `must be ${TYPE_NAMES[iss.expected] ?? iss.expected}`
    case 'too_small': return tooSmall(iss)
    case 'too_big': return tooBig(iss)
    case 'invalid_value': return `must be ${oneOf(iss.values)}`
    case 'invalid_format':
      // a pattern says nothing a person reads: the schemas that use one give their own message
      return ['regex', 'starts_with', 'ends_with', 'includes'].includes(iss.format) ? 'does not have the expected form' : `must be a valid ${iss.format}`
    case 'not_multiple_of': return `must be a multiple of ${iss.divisor}`
    case 'unrecognized_keys': return plural(iss.keys.length, 'unknown field', 'unknown fields')
    case 'invalid_union': {
      // a discriminated union names the discriminator's values
      const options = 'options' in iss && Array.isArray(iss.options) ? iss.options as unknown[] : []
      return options.length > 0 ? `must be ${oneOf(options)}` : 'matches none of the accepted forms'
    }
    case 'invalid_key': return 'has a key that is not accepted'
    case 'invalid_element': return 'has an element that is not accepted'
    default: return 'is invalid'
  }
}

/** parse options that word every issue with the gateway's sentences */
export const READABLE = { error: issueMessage } as const

/**
 * `schema.safeParse(data, READABLE)` at the cost of a plain parse when the data is valid: zod 4
 * leaves its compiled fast path when a parse is given an error map, many times slower on the
 * task route's params and an empty query (BENCHMARKS.md#hot-path-choices), so the readable
 * messages are built only for what is refused
 */
export function parseReadable<T> (schema: z.ZodType<T>, data: unknown): { success: true; data: T } | { success: false; issues: z.core.$ZodIssue[] } {
  const plain = schema.safeParse(data)
  if (plain.success) return { success: true, data: plain.data }
  return { success: false, issues: schema.safeParse(data, READABLE).error?.issues ?? plain.error.issues }
}

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/

/** a path as a person writes it: `parts[0].text`, `[1].controllerId`, `data["a b"]`; after `root` when given */
export function pathText (path: readonly PropertyKey[], root = ''): string {
  let out = root
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`
    else {
      const k = String(p).slice(0, MAX_KEY)
      out += IDENTIFIER.test(k) ? `${out === '' ? '' : '.'}${k}` : `[${JSON.stringify(k)}]`
    }
  }
  return out
}

/** where in a request a schema looked: Fastify's names for the parts */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers'

const PARTS: Record<RequestPart, { field: string; unknown: string; whole: string }> = {
  body: { field: '', unknown: 'field', whole: 'body' },
  querystring: { field: 'query parameter ', unknown: 'query parameter', whole: 'query' },
  params: { field: 'path parameter ', unknown: 'path parameter', whole: 'path' },
  headers: { field: 'header ', unknown: 'header', whole: 'headers' }
}

/** each issue as `path: what is wrong`; unknown keys named themselves (the caller's own, and the likeliest mistake) */
export function issueLines (issues: readonly Issue[], part: RequestPart = 'body'): string[] {
  const p = PARTS[part]
  const lines = new Set<string>()
  for (const i of issues) {
    if (i.code === 'unrecognized_keys') {
      const names = i.keys.slice(0, MAX_LISTED).map((k) => pathText([...i.path, k]))
      const more = i.keys.length > MAX_LISTED ? ` and ${i.keys.length - MAX_LISTED} more` : ''
      lines.add(`unknown ${p.unknown}${i.keys.length === 1 ? '' : 's'}: ${names.join(', ')}${more}`)
    } else {
      lines.add(`${i.path.length === 0 ? p.whole : `${p.field}${pathText(i.path)}`}: ${i.message}`)
    }
  }
  return [...lines]
}

/** the 400 for a request a schema refused: every problem named, at most MAX_LISTED of them */
export function invalidRequest (issues: readonly Issue[], part: RequestPart = 'body'): GatewayError {
  const lines = issueLines(issues, part)
  const more = lines.length > MAX_LISTED ? `; and ${plural(lines.length - MAX_LISTED, 'more problem', 'more problems')}` : ''
  return new GatewayError('invalid_request', { message: `${lines.slice(0, MAX_LISTED).join('; ')}${more}` })
}

/**
 * The configuration's problems (src/config/), one line each: `PORT: must be …`, or under a
 * variable that holds JSON, `GATEWAY_CALLERS[1].controllerId: required for …`
 */
export function configLines (issues: readonly Issue[], variable = ''): string[] {
  const lines: string[] = []
  for (const i of issues) {
    if (i.code === 'unrecognized_keys') for (const k of i.keys) lines.push(`${pathText([...i.path, k], variable)}: unknown field`)
    else lines.push(`${pathText(i.path, variable) || 'configuration'}: ${i.message}`)
  }
  return lines
}
