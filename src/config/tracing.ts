// When tracing is on (docs/design.md#tracing): the OpenTelemetry environment conventions decide,
// read here for the configuration (src/config/load.ts) — the SDK itself reads the rest of OTEL_*
// (exporter, protocol, headers, sampler, resource) when it starts, and only then.
import type { Env } from './env.js'

const set = (v: string | undefined): boolean => v !== undefined && v.trim() !== ''

/**
 * On when an OTLP endpoint or a traces exporter is named; `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turns it off whatever else is set. Off by default: a gateway with
 * no collector pays nothing for tracing.
 */
export function tracingEnabled (env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '') ?? []
  if (exporters.includes('none')) return false
  return exporters.length > 0 || set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}
