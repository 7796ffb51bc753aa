// An OTLP/HTTP receiver on loopback (JSON protocol) holding every span the gateway exports in
// memory: what an operator's collector would receive, through the SDK's own exporter
// (docs/design.md#tracing). The SDK reads its OTEL_* variables from the process environment when
// it starts, once per process: `otelEnv` is what a test file puts there before the first gateway
// with tracing on starts (and hands loadConfig too, which decides whether tracing is on).
import { createServer } from 'node:http'

export interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
export interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: Array<{ key: string; value: OtlpValue }>
  status?: { code?: number; message?: string }
}
/** OTLP's span kinds and status codes */
export const SERVER = 2
export const CLIENT = 3
export const STATUS_ERROR = 2

export interface OtlpReceiver {
  /** every span received, in arrival order */
  spans: OtlpSpan[]
  /** every export request's body, as sent */
  bodies: string[]
  /** the OTEL_* variables that point the SDK here */
  otelEnv: Record<string, string>
  /** the first span `find` picks, waiting for the exporter's batches */
  waitFor: (what: string, find: (s: OtlpSpan) => boolean, ms?: number) => Promise<OtlpSpan>
  close: () => Promise<void>
}

/** a span's attributes as plain values (OTLP's int64 comes as text) */
export function attrs (s: OtlpSpan): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of s.attributes ?? []) out[a.key] = a.value.stringValue ?? (a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.boolValue ?? a.value.doubleValue)
  return out
}

export async function startOtlpReceiver (): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = []
  const bodies: string[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(text)
        const doc = JSON.parse(text) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> }
        for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    spans,
    bodies,
    otelEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
    waitFor: async (what, find, ms = 5000) => {
      const until = Date.now() + ms
      for (;;) {
        const s = spans.find(find)
        if (s !== undefined) return s
        if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms; spans: ${spans.map((x) => x.name).join(', ')}`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    close: async () => { await new Promise((resolve) => server.close(resolve)) }
  }
}

/** whether `span` is `ancestor` or lies under it, following parent ids through what was received */
export function descendsFrom (spans: readonly OtlpSpan[], span: OtlpSpan, ancestor: OtlpSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  for (let s: OtlpSpan | undefined = span; s !== undefined; s = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId)) {
    if (s.spanId === ancestor.spanId) return true
  }
  return false
}
