// When tracing is on (src/config/tracing.ts): the OpenTelemetry environment conventions, off by default.
import { describe, expect, it } from 'vitest'
import { tracingEnabled } from '../../src/config/tracing.js'

describe('tracingEnabled', () => {
  it('is off with no OpenTelemetry variable', () => {
    expect(tracingEnabled({})).toBe(false)
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false)
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'gw' })).toBe(false)
  })

  it('is on with an OTLP endpoint (general or for traces) or a traces exporter', () => {
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true)
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true)
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true)
  })

  it('OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true win over an endpoint', () => {
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false)
    expect(tracingEnabled({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false)
    expect(tracingEnabled({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true)
  })
})
