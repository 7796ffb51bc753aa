// The OpenAPI document from the routes' zod schemas (docs/design.md#rest-interface), for
// @fastify/swagger's `transform` and `transformObject`. What it adds to a plain conversion:
//
// - One name per component. A schema registered with `.meta({ id })` (zod's global registry) is
//   one component, written in the direction it is used: a request body as zod's input, an answer
//   as its output. fastify-type-provider-zod 7 writes every registered schema twice, `X` and
//   `XInput`, whichever it is used as; here a component used both ways must read the same both
//   ways, or the document is refused (give each direction its own id).
// - Each route's answers from its one declaration (`answers`, schemas/responses.ts): a success
//   status says what it means; an error status is an error body whose `code` is an enum of the
//   codes this route can answer with that status, described code by code from the error table.
// - Response headers a client acts on: Retry-After, WWW-Authenticate, Idempotent-Replayed.
// - A body that may be left out (`.nullish()`) is documented as optional.
//
// A route that documents itself wrongly (an error status without codes, a success status
// without a description, no operationId) fails the document rather than shipping a guess.
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import { z } from 'zod'
import { ERROR_TABLE, GatewayError, type ErrorCode } from '../core/errors.js'
import { ErrorDetailSchema } from '../../schemas/rest.js'
import { codesWithStatus, type RouteAnswers } from '../../schemas/responses.js'

type Io = 'input' | 'output'
type Json = Record<string, unknown>

const COMPONENTS = '#/components/schemas/'
const ROOT = '__route_schema__'
const SHARED = '__component__:'
/** a custom operation field the transform leaves for transformObject: the body may be left out */
const BODY_OPTIONAL = 'x-gateway-body-optional'

const PARAMS = { target: 'openapi-3.0', cycles: 'ref', reused: 'inline', unrepresentable: 'any' } as const

/** keywords zod writes that are no part of an OpenAPI 3.0 schema, or that name the schema itself */
const DROPPED = new Set(['$id', 'id', '$schema', 'unevaluatedProperties', 'dependentSchemas', 'patternProperties', 'propertyNames', 'contentEncoding', 'contentMediaType'])
const ONE_SCHEMA = new Set(['items', 'additionalProperties', 'not'])
const MANY_SCHEMAS = new Set(['allOf', 'anyOf', 'oneOf'])

/**
 * Drops DROPPED from schema positions only (a property may well be called `id`), and the bounds
 * zod writes for every `.int()` (the safe-integer range: nobody chose them), and points each
 * component reference at #/components/schemas.
 */
function clean (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean)
  if (value === null || typeof value !== 'object') return value
  const out: Json = {}
  for (const [k, v] of Object.entries(value as Json)) {
    if (DROPPED.has(k)) continue
    if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) continue
    if (k === '$ref' && typeof v === 'string') out[k] = componentRef(v)
    else if (k === 'properties' && v !== null && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, clean(s)]))
    else if (ONE_SCHEMA.has(k) && v !== null && typeof v === 'object') out[k] = clean(v)
    else if (MANY_SCHEMAS.has(k) && Array.isArray(v)) out[k] = v.map(clean)
    else out[k] = v
  }
  return out
}

/** zod's reference to a registered schema (`<uri>#/definitions/<id>` or the uri itself) as a component reference */
function componentRef (ref: string): string {
  if (ref.startsWith(COMPONENTS)) return ref
  const id = /^__component__:.*#\/(?:definitions|\$defs)\/([^/]+)$/.exec(ref)?.[1]
  if (id === undefined) throw new Error(`the OpenAPI document cannot reference ${ref}: only a schema registered with .meta({ id }) is a component`)
  return COMPONENTS + id
}

/** one route part or answer as JSON Schema; a registered schema, and any nested in it, as a component reference */
export function schemaJson (schema: z.ZodType, io: Io): Json {
  const id = z.globalRegistry.get(schema)?.id
  if (id !== undefined) return { $ref: COMPONENTS + id }
  const one = z.registry<{ id: string }>()
  one.add(schema, { id: ROOT })
  const { schemas } = z.toJSONSchema(one, { ...PARAMS, io, metadata: z.globalRegistry, uri: (name) => SHARED + name })
  return clean(schemas[ROOT]) as Json
}

const RETRY_AFTER = { type: 'integer', minimum: 1, description: 'Seconds to wait before sending the request again.' }
const WWW_AUTHENTICATE = { type: 'string', description: 'Bearer realm="openoperator-gateway"' }
const REPLAYED = { type: 'string', enum: ['true'], description: 'Present when this is the stored answer of an earlier request with the same request id: nothing was sent again.' }

/** the error codes whose answer a mutation stores, and so replays (docs/design.md#outcomes) */
const STORED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'policy_rejected', 'not_found', 'stale_epoch', 'lease_held_by_other', 'lease_expired', 'task_not_cancelable',
  'upstream_rejected', 'upstream_invalid_response', 'lease_readback_mismatch', 'capability_unavailable', 'ambiguous_write'
])
/** the codes answered with Retry-After */
const RETRY_AFTER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['rate_limited', 'reconcile_too_early', 'upstream_unavailable', 'overloaded', 'shutting_down'])

/** the error body of one status of one route: the shared ErrorDetail, its code one of this route's codes with that status */
function errorBody (codes: readonly ErrorCode[]): Json {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: { allOf: [schemaJson(ErrorDetailSchema, 'output'), { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } }] }
    },
    additionalProperties: false
  }
}

function errorResponse (codes: [ErrorCode, ...ErrorCode[]], replays: boolean): Json {
  const headers: Json = {}
  if (codes.some((c) => RETRY_AFTER_CODES.has(c))) headers['Retry-After'] = RETRY_AFTER
  if (codes.includes('unauthorized')) headers['WWW-Authenticate'] = WWW_AUTHENTICATE
  if (replays && codes.some((c) => STORED.has(c))) headers['Idempotent-Replayed'] = REPLAYED
  const description = codes.map((c) => `- \`${c}\`${new GatewayError(c).retryable ? ' (retryable)' : ''}: ${ERROR_TABLE[c].message}`).join('\n')
  return {
    description,
    ...(Object.keys(headers).length > 0 && { headers }),
    content: { 'application/json': { schema: errorBody(codes) } }
  }
}

function okResponse (schema: z.ZodType, doc: RouteAnswers['ok'][number], replays: boolean): Json {
  const binary = doc.mediaType !== undefined && doc.mediaType !== 'application/json'
  return {
    description: doc.description,
    ...(replays && { headers: { 'Idempotent-Replayed': REPLAYED } }),
    content: { [doc.mediaType ?? 'application/json']: { schema: binary ? { type: 'string', format: 'binary' } : schemaJson(schema, 'output') } }
  }
}

const acceptsUndefined = (s: z.ZodType): boolean => s.safeParse(undefined).success

export const transform: SwaggerTransform = ({ schema, url, route }) => {
  if (schema === undefined || schema === null || schema.hide === true) return { schema: { hide: true }, url }
  const where = `${String(route.method)} ${url}`
  const { response, answers, headers, querystring, body, params, ...rest } = schema as typeof schema & Record<string, unknown>
  if (typeof rest.operationId !== 'string') throw new Error(`${where}: every documented route needs an operationId`)
  if (answers === undefined) throw new Error(`${where}: declare its answers with answers() (schemas/responses.ts)`)
  const out: Json = { ...rest }
  // the scope the route needs (src/http/auth.ts), first thing a caller reads
  const scope = route.config?.scope
  if (scope !== undefined) out.description = [`Needs the \`${scope}\` scope.`, rest.description].filter((x) => typeof x === 'string' && x !== '').join(' ')
  for (const [part, s] of Object.entries({ headers, querystring, params, body })) {
    if (s !== undefined) out[part] = schemaJson(s as z.ZodType, 'input')
  }
  if (body !== undefined && acceptsUndefined(body as z.ZodType)) out[BODY_OPTIONAL] = true

  const responses: Json = {}
  for (const [status, s] of Object.entries((response ?? {}) as Record<string, z.ZodType>)) {
    const code = Number(status)
    if (code >= 400) {
      const codes = codesWithStatus(answers.errors, code)
      const [first, ...others] = codes
      if (first === undefined) throw new Error(`${where}: ${status} is in its responses but none of its error codes has that status`)
      responses[status] = errorResponse([first, ...others], answers.replays)
    } else {
      const doc = answers.ok[code]
      if (doc === undefined || doc.description === '') throw new Error(`${where}: ${status} needs a description`)
      responses[status] = okResponse(s, doc, answers.replays)
    }
  }
  for (const c of answers.errors) {
    if (responses[String(ERROR_TABLE[c].status)] === undefined) throw new Error(`${where}: ${c} is declared but ${ERROR_TABLE[c].status} is not in its responses`)
  }
  out.response = responses
  return { schema: out, url }
}

// ---- components ---------------------------------------------------------------------------

/** every component reference in a part of the document */
function refsIn (v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) refsIn(x, out)
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Json)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith(COMPONENTS)) out.add(x.slice(COMPONENTS.length))
      else refsIn(x, out)
    }
  }
  return out
}

type Operation = Json & { requestBody?: Json; parameters?: unknown; responses?: unknown }

/**
 * The components the paths use, each once: written as zod's input when only requests use it, as
 * its output when answers do, and refused when both do and the two differ. Components used only
 * by other components take their user's direction.
 */
export const transformObject: SwaggerTransformObject = (documentObject) => {
  if (!('openapiObject' in documentObject)) throw new Error('the gateway documents itself in OpenAPI 3')
  const doc = documentObject.openapiObject
  const wanted = new Map<string, Set<Io>>()
  const want = (ids: Iterable<string>, io: Io): void => {
    for (const id of ids) {
      const s = wanted.get(id) ?? new Set<Io>()
      s.add(io)
      wanted.set(id, s)
    }
  }
  const paths: Json = {}
  const responses = sharedResponses()
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const methods: Json = {}
    for (const [method, raw] of Object.entries(item as Json)) {
      const op = { ...(raw as Operation) }
      if (op[BODY_OPTIONAL] === true && op.requestBody !== undefined) op.requestBody = { ...op.requestBody, required: false }
      delete op[BODY_OPTIONAL]
      op.responses = Object.fromEntries(Object.entries((op.responses ?? {}) as Record<string, Json>).map(([status, r]) => [status, responses.share(r)]))
      want(refsIn([op.requestBody, op.parameters]), 'input')
      want(refsIn([op.responses, responses.all]), 'output')
      methods[method] = op
    }
    paths[path] = methods
  }

  const forms: Record<Io, Record<string, unknown>> = {
    input: z.toJSONSchema(z.globalRegistry, { ...PARAMS, io: 'input', uri: (id) => COMPONENTS + id }).schemas,
    output: z.toJSONSchema(z.globalRegistry, { ...PARAMS, io: 'output', uri: (id) => COMPONENTS + id }).schemas
  }
  const schemas: Record<string, Json> = {}
  // answers first: where both directions read the same, the component is written as an answer
  const queue: Array<[string, Io]> = (['output', 'input'] as const).flatMap((io) => [...wanted].filter(([, ios]) => ios.has(io)).map(([id]): [string, Io] => [id, io]))
  const written = new Map<string, Io>()
  while (queue.length > 0) {
    const [id, io] = queue.shift()!
    const json = clean(forms[io][id]) as Json | undefined
    if (json === undefined) throw new Error(`component ${id} is referenced but not registered`)
    const before = written.get(id)
    if (before !== undefined) {
      if (before !== io && JSON.stringify(schemas[id]) !== JSON.stringify(json)) {
        throw new Error(`component ${id} is used in requests and in answers and reads differently in each: give each direction its own id`)
      }
      continue
    }
    written.set(id, io)
    schemas[id] = json
    for (const ref of refsIn(json)) queue.push([ref, io])
  }
  return { ...doc, paths, components: { ...doc.components, schemas: sortedKeys(schemas), responses: sortedKeys(responses.all) } } as unknown as ReturnType<SwaggerTransformObject>
}

const sortedKeys = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]!]))

/** the code an error response is about, when it is about one only */
function onlyCode (r: Json): string | undefined {
  const codes = ((((r.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined)?.properties as Json | undefined)?.error as Json | undefined
  const enumOf = ((codes?.allOf as Json[] | undefined)?.[1]?.properties as Json | undefined)?.code as Json | undefined
  const values = enumOf?.enum
  return Array.isArray(values) && values.length === 1 ? String(values[0]) : undefined
}

/**
 * An error response about one code reads the same on most routes (401 unauthorized, 429
 * rate_limited, …): it is written once under components/responses, named after its code
 * (`Unauthorized`), and referenced. A route whose answer for that code differs (its headers)
 * keeps its own inline.
 */
function sharedResponses (): { all: Record<string, Json>; share: (r: Json) => Json } {
  const all: Record<string, Json> = {}
  return {
    all,
    share: (r) => {
      const code = onlyCode(r)
      if (code === undefined) return r
      const name = code.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')
      const known = all[name]
      if (known === undefined) all[name] = r
      else if (JSON.stringify(known) !== JSON.stringify(r)) return r
      return { $ref: `#/components/responses/${name}` }
    }
  }
}
