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
// it, a property walk) cost a read about a tenth of its instructions. The line still goes through
// the logger's scrub of every secret form (src/core/logger.ts) — searched in the line's variable
// tokens when every secret allows it (`cleanOutside`), the whole line otherwise — and anything
// this path does not know how to write (a mixin such as the trace id, a transport needing
// metadata) takes pino's path.
import pino from 'pino'
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { accessRequest, scrubberOf } from '../core/logger.js'
import { jsonMillis, jsonString, jsonStringOrNull, jsonWholeNumber } from '../core/json-text.js'

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
  // the two numbers never through `+` or String(): V8 caches what those make of a non-integer or
  // a number past 2^31 (a time in ms) and so allocates it in the old generation, ~35 B a number a
  // read left for a mark-compact; nor through JSON.stringify, ~2 k instructions each to set up
  // (src/core/json-text.ts, docs/design.md#hot-path)
  const time = timeOf === EPOCH_TIME ? ',"time":' + jsonWholeNumber(Date.now()) : timeOf()
  const chindings = log[S.chindingsSym] as string
  const method = jsonStringOrNull(r.method)
  const url = jsonString(r.url)
  const route = r.route === undefined ? undefined : jsonString(r.route)
  const address = r.remoteAddress === undefined ? undefined : jsonString(r.remoteAddress)
  const line = prefix + time + chindings +
    ',"req":{"method":' + method + ',"url":' + url +
    (route === undefined ? '' : ',"route":' + route) +
    (address === undefined ? '' : ',"remoteAddress":' + address) +
    (r.remotePort === undefined ? '' : ',"remotePort":' + String(r.remotePort)) +
    '},"res":{"statusCode":' + String(statusCode) + '},"responseTime":' + jsonMillis(elapsedMs) +
    ',"msg":"request completed"' + end
  // what varies is the time (a number, or pino's own string), the bindings, four strings and three numbers
  const tokens = time + chindings + method + url + (route ?? '') + (address ?? '')
  stream.write(scrub.cleanOutside(templateOf(prefix, end), tokens) ? line : scrub.line(line))
  return true
}

let template: { prefix: string; end: string; text: string } | undefined

/** the access line with every token empty and every number 0 (Scrubber.cleanOutside), kept per level prefix and line end */
function templateOf (prefix: string, end: string): string {
  if (template?.prefix !== prefix || template.end !== end) {
    template = { prefix, end, text: prefix + ',"req":{"method":,"url":,"route":,"remoteAddress":,"remotePort":0},"res":{"statusCode":0},"responseTime":0,"msg":"request completed"' + end }
  }
  return template.text
}
