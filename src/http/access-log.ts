// The access log (docs/design.md#logging, docs/design.md#hot-path): one line per request, at
// `info`, when the answer has been sent — method, route template, the path with its query values
// redacted and the peer (as the `req` serializer of src/core/logger.ts writes them), the status and the
// time taken. Fastify's default is two lines per request ("incoming request" and "request
// completed"), twice the formatting, redaction and scrubbing for one fact; this LogController
// (Fastify's hook for its own request lines, `logController` in src/app.ts) writes the second only,
// with the first's fields. Error lines (the error handler) and mutation lines (the control
// pipeline) are written where they happen, as before. GATEWAY_ACCESS_LOG=false drops the access
// line only, for an operator whose ingress logs every request already.
//
// The line is the one pino would write, built from its fixed fields straight into the logger's
// stream: pino's generic path (the serializer, path redaction of an object that has no header in
// it, a property walk) is work a line of known fields does not need (what it cost:
// BENCHMARKS.md#hot-path-choices). The line still goes through the logger's scrub of every secret
// form (src/core/logger.ts) — searched in the line's variable tokens when every secret allows it
// (`cleanOutside`), the whole line otherwise — and anything this path does not know how to write
// (a mixin such as the trace id, a transport needing metadata) takes pino's path.
import pino from 'pino'
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { accessRequest, scrubberOf, SEEN_MAX, type SeenClean } from '../core/logger.js'
import { REQUEST_ID_LABEL, uuidBindingsBefore } from '../core/request-logger.js'
import { jsonMillis, jsonString, jsonWholeNumber } from '../core/json-text.js'

const S = pino.symbols
const INFO = 30
const EPOCH_TIME = pino.stdTimeFunctions.epochTime

type PinoInternals = Record<symbol, unknown>

export class AccessLog extends LogController {
  /** `enabled` false (GATEWAY_ACCESS_LOG=false): no `request completed` line; `request errored` still */
  constructor (private readonly enabled: boolean = true) {
    super()
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const failed = error !== null && error !== undefined
    if (!failed && !this.enabled) return
    const elapsed = reply.elapsedTime
    if (!failed && writeDirect(reply.log as unknown as PinoInternals, request, reply.statusCode, elapsed)) return
    const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: Math.round(elapsed * 1000) / 1000 }
    if (failed) reply.log.error(Object.assign(line, { err: error }), 'request errored')
    else reply.log.info(line, 'request completed')
  }
}

/**
 * The `request completed` line as pino writes it (level, time, the child's bindings, `req`, `res`,
 * `responseTime`, `msg`), written to the logger's stream through its scrub; false when the logger
 * is not one this path can stand in for, and pino then writes the line.
 */
function writeDirect (log: PinoInternals, request: FastifyRequest, statusCode: number, elapsedMs: number): boolean {
  const scrub = scrubberOf(log)
  if (scrub === undefined) return false
  if ((log[S.levelValSym] as number) > INFO) return true
  const stream = log[S.streamSym] as pino.DestinationStream & Record<symbol, unknown>
  if (log[S.mixinSym] !== undefined && log[S.mixinSym] !== null) return false
  if (stream[S.needsMetadataGsym] === true || (log[S.nestedKeySym] !== null && log[S.nestedKeySym] !== undefined)) return false
  const r = accessRequest(request)
  const prefix = (log[S.lsCacheSym] as Record<number, string>)[INFO]!
  const end = log[S.endSym] as string
  const timeOf = log[S.timeSym] as () => string
  const seen = scrub.seen()
  // the tokens no earlier line has shown clean, searched together below (docs/design.md#hot-path)
  let unseen = ''
  // the two numbers never through `+` or String(): V8 caches what those make of a non-integer or
  // a number past 2^31 (a time in ms) and so allocates it in the old generation, two strings a read
  // left for a mark-compact; nor through JSON.stringify, which sets up its serializer on every call
  // (src/core/json-text.ts, docs/design.md#hot-path; the costs: BENCHMARKS.md#hot-path-choices)
  let time: string
  if (timeOf === EPOCH_TIME) {
    time = ',"time":' + jsonWholeNumber(Date.now())
    // digits only: no form of a secret is (cleanOutside), and the text before them was searched once
    if (!seen.uuidsAndTime) unseen += time
  } else {
    time = timeOf()
    unseen += time
  }
  const chindings = log[S.chindingsSym] as string
  // the request id need not be searched when it is a UUID, nor the bindings before it once seen;
  // an id the gateway made is known to be one without reading the bindings' text, which would
  // flatten it (src/core/request-logger.ts)
  let before: string | undefined
  let idAt = -1
  if (seen.uuidsAndTime) {
    before = uuidBindingsBefore(log, request.id)
    idAt = before !== undefined ? before.length : requestIdAt(chindings)
  }
  let bindingsUnseen = false
  if (idAt < 0) unseen += chindings
  else if (before !== undefined ? seen.bindings !== before : (seen.bindings === undefined || seen.bindings.length !== idAt || !chindings.startsWith(seen.bindings))) {
    bindingsUnseen = true
    unseen += before ?? chindings.slice(0, idAt)
  }
  // method, route and address from the few values an access line has shown clean before
  const method = r.method === undefined ? 'null' : seen.texts.get(r.method)
  const route = r.route === undefined ? '' : seen.texts.get(r.route)
  const address = r.remoteAddress === undefined ? '' : seen.texts.get(r.remoteAddress)
  const methodText = method ?? jsonString(r.method!)
  const routeText = route ?? jsonString(r.route!)
  const addressText = address ?? jsonString(r.remoteAddress!)
  if (method === undefined) unseen += methodText
  if (route === undefined) unseen += routeText
  if (address === undefined) unseen += addressText
  // a route without parameters or query is its own path, found clean with it
  let url: string
  if (r.url === r.route) url = routeText
  else {
    url = jsonString(r.url)
    unseen += url
  }
  const line = prefix + time + chindings +
    ',"req":{"method":' + methodText + ',"url":' + url +
    (r.route === undefined ? '' : ',"route":' + routeText) +
    (r.remoteAddress === undefined ? '' : ',"remoteAddress":' + addressText) +
    (r.remotePort === undefined ? '' : ',"remotePort":' + String(r.remotePort)) +
    '},"res":{"statusCode":' + String(statusCode) + '},"responseTime":' + jsonMillis(elapsedMs) +
    ',"msg":"request completed"' + end
  if (!scrub.cleanOutside(templateOf(prefix, end), unseen)) {
    stream.write(scrub.line(line))
    return true
  }
  // clean: what was searched for the first time is remembered
  if (bindingsUnseen) seen.bindings = before ?? chindings.slice(0, idAt)
  if (method === undefined) remember(seen, r.method!, methodText)
  if (route === undefined) remember(seen, r.route!, routeText)
  if (address === undefined) remember(seen, r.remoteAddress!, addressText)
  stream.write(line)
  return true
}

function remember (seen: SeenClean, value: string, text: string): void {
  if (seen.texts.size >= SEEN_MAX) seen.texts.clear()
  seen.texts.set(value, text)
}

/** Fastify's request binding at the end of the logger's bindings */
const REQUEST_ID_KEY = ',"' + REQUEST_ID_LABEL + '":"'
/** `,"reqId":"` + 36 + `"` */
const REQUEST_ID_BINDING = REQUEST_ID_KEY.length + 36 + 1

/**
 * Where the request id's binding starts when the bindings end with a UUID as `randomUUID` writes
 * it (8-4-4-4-12 lower-case hex digits), else -1
 */
export function requestIdAt (chindings: string): number {
  const at = chindings.length - REQUEST_ID_BINDING
  if (at < 0 || chindings.charCodeAt(chindings.length - 1) !== 34 || !chindings.startsWith(REQUEST_ID_KEY, at)) return -1
  const id = at + REQUEST_ID_KEY.length
  for (let i = 0; i < 36; i++) {
    const c = chindings.charCodeAt(id + i)
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return -1
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return -1
  }
  return at
}

let template: { prefix: string; end: string; text: string } | undefined

/** the access line with every token empty and every number 0 (Scrubber.cleanOutside), kept per level prefix and line end */
function templateOf (prefix: string, end: string): string {
  if (template?.prefix !== prefix || template.end !== end) {
    template = { prefix, end, text: prefix + ',"req":{"method":,"url":,"route":,"remoteAddress":,"remotePort":0},"res":{"statusCode":0},"responseTime":0,"msg":"request completed"' + end }
  }
  return template.text
}
