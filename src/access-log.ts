// The access log (docs/design.md#logging, docs/design.md#hot-path): one line per request, at
// `info`, when the answer has been sent — method, route template, the path with its query values
// redacted and the peer (the `req` serializer, src/logger.ts), the status and the time taken.
// Fastify's default is two lines per request ("incoming request" and "request completed"), twice
// the formatting, redaction and scrubbing for one fact; this LogController (Fastify's hook for its
// own request lines, `logController` in src/app.ts) writes the second only, with the first's
// fields. Error lines (the error handler) and mutation lines (the control pipeline) are written
// where they happen, as before. GATEWAY_ACCESS_LOG=false drops the access line only, for an
// operator whose ingress logs every request already; its cost is measured in BENCHMARKS.md.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

export class AccessLog extends LogController {
  /** `enabled` false (GATEWAY_ACCESS_LOG=false): no `request completed` line; `request errored` still */
  constructor (private readonly enabled: boolean = true) {
    super()
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const failed = error !== null && error !== undefined
    if (!failed && !this.enabled) return
    const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime * 1000) / 1000 }
    if (failed) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}
