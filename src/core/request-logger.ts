// A request's logger without pino's general child path (docs/design.md#hot-path). Fastify makes one
// logger per request, `logger.child({ reqId }, {})`. Given an options object, even an empty one,
// pino's child takes its general path: a new formatters object, the bindings walked and each value
// through JSON.stringify (the request id's text flattened on the way), `onChild` called — work the
// logger made here does not do (BENCHMARKS.md#hot-path-choices). For a request id alone, what
// that path makes is a logger whose prototype is the parent and whose bindings text is the
// parent's followed by `,"reqId":` and the id as JSON; everything else it sets is what the parent
// has already. `installRequestChild` gives
// Fastify's logger a `child` that makes exactly that when nothing of the parent would make pino's
// differ (judged once: no `onChild` hook, no bindings formatter, no serializer or redaction of the
// key), and calls pino's own child for any other call. test/unit/request-logger.property.test.ts
// holds the lines of the two loggers byte for byte equal.
//
// An id the gateway made itself (`madeRequestId`: randomUUID's lower-case hex and `-`) is JSON as
// it stands, and its logger says so (`uuidBindingsBefore`): the access line then knows where the
// request id's binding starts without reading the bindings' text character by character — which
// made V8 flatten the text the concatenation had just built, a copy per request, as quoting the
// id did (src/http/access-log.ts, docs/design.md#hot-path; what it cost:
// BENCHMARKS.md#hot-path-choices).
import pino, { type Logger } from 'pino'
import { jsonString } from './json-text.js'

const CHINDINGS = pino.symbols.chindingsSym
const FORMATTERS = pino.symbols.formattersSym
const SERIALIZERS = pino.symbols.serializersSym
const STRINGIFIERS = pino.symbols.stringifiersSym
const WILDCARD = pino.symbols.wildcardFirstSym

type Internals = Record<symbol, unknown> & { onChild: unknown; child: Logger['child'] }
type Child = (this: Internals, bindings: Record<string, unknown>, options?: object) => Internals

const BEFORE_ID = Symbol('oogw.bindingsBeforeRequestId')
const MADE_ID = Symbol('oogw.madeRequestId')

/** the last request id the gateway made (genReqId), set just before Fastify asks for its logger */
let lastMade: string | undefined

/**
 * Notes `id` as one the gateway made with randomUUID (only such an id: it is written as JSON
 * without a look at its characters), for the request logger Fastify asks for next; returns it.
 */
export function madeRequestId (id: string): string {
  lastMade = id
  return id
}

/** Fastify's binding of a request's id (its `requestIdLogLabel`, left at its default) */
export const REQUEST_ID_LABEL = 'reqId'
const LABEL = REQUEST_ID_LABEL
/** `,"reqId":""`: what a made id's binding adds to the id's own length */
const MADE_BINDING_EXTRA = (',"' + LABEL + '":""').length

/**
 * The logger's bindings before the request id's, when `log` is a request's logger made here for
 * `id`, `id` is one the gateway made, and its binding `,"reqId":"<id>"` still ends the bindings
 * (anything set since with `setBindings` comes after it); else undefined.
 */
export function uuidBindingsBefore (log: object, id: string): string | undefined {
  const l = log as Internals
  if (l[MADE_ID] !== id) return undefined
  const before = l[BEFORE_ID] as string
  return (l[CHINDINGS] as string).length === before.length + MADE_BINDING_EXTRA + id.length ? before : undefined
}

// pino's own values for a logger that changes nothing, read off one made to be read: the bindings
// formatter every child carries, and the `onChild` that does nothing
const probe = pino({ level: 'silent' }) as unknown as Internals
const CHILD_BINDINGS = ((probe.child({}) as unknown as Internals)[FORMATTERS] as { bindings: unknown }).bindings
const NO_ON_CHILD = probe.onChild

/**
 * Gives `logger` (Fastify's, a pino child) a `child` that makes a request's logger directly; left
 * as it is when something of the logger would make pino's child differ. Returns whether it did.
 */
export function installRequestChild (logger: Logger): boolean {
  const parent = logger as unknown as Internals
  const stringifiers = parent[STRINGIFIERS] as Record<string | symbol, unknown>
  if (parent.onChild !== NO_ON_CHILD ||
    (parent[FORMATTERS] as { bindings: unknown }).bindings !== CHILD_BINDINGS ||
    (parent[SERIALIZERS] as Record<string, unknown>)[LABEL] !== undefined ||
    stringifiers[LABEL] !== undefined || stringifiers[WILDCARD] !== undefined) return false
  const pinoChild = parent.child as unknown as Child
  const child: Child = function (bindings, options) {
    // a child of a request's logger, or anything but a request id alone: pino's
    if (this !== parent || !onlyRequestId(bindings) || !empty(options)) return pinoChild.call(this, bindings, options)
    const made = Object.create(parent) as Internals
    const before = parent[CHINDINGS] as string
    const id = bindings[LABEL] as string
    // an id equal to the last one the gateway made is randomUUID's text: JSON as it stands
    const uuid = id === lastMade
    made[CHINDINGS] = before + ',"' + LABEL + '":' + (uuid ? '"' + id + '"' : jsonString(id))
    made[BEFORE_ID] = uuid ? before : undefined
    made[MADE_ID] = uuid ? id : undefined
    return made
  }
  Object.defineProperty(parent, 'child', { value: child, writable: true, configurable: true })
  return true
}

function onlyRequestId (bindings: Record<string, unknown>): boolean {
  if (bindings === null || typeof bindings !== 'object' || typeof bindings[LABEL] !== 'string' || !Object.hasOwn(bindings, LABEL)) return false
  let keys = 0
  for (const _ in bindings) keys++
  return keys === 1
}

function empty (options: object | undefined): boolean {
  if (options === undefined || options === null) return true
  // eslint-disable-next-line no-unreachable-loop -- any key at all
  for (const _ in options) return false
  return true
}
