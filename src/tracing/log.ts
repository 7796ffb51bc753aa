// `traceId` on every log line written while a span is active (docs/design.md#tracing): a pino
// mixin, installed only when tracing is on, so a log line can be found from a trace and back.
import { isSpanContextValid, trace } from '@opentelemetry/api'

/** a fresh object every time: pino merges the line's own fields into it */
export function traceIdMixin (): object {
  const span = trace.getActiveSpan()
  if (span === undefined) return {}
  const sc = span.spanContext()
  return isSpanContextValid(sc) ? { traceId: sc.traceId } : {}
}
