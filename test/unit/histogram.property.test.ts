// The per-request histogram (src/core/histogram.ts, docs/design.md#hot-path) is exposed exactly as
// prom-client's own Histogram exposes the same observations: the text a scrape reads and the JSON
// form, byte for byte, for arbitrary label sets and values (bounds themselves, below the first,
// above the last), after a reset too (fast-check).
import fc from 'fast-check'
import { Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { FastHistogram } from '../../src/core/histogram.js'
import { DURATION_BUCKETS } from '../../src/http/metrics.js'

const routes = ['/v1/tasks/:taskId', 'unmatched', '/v1/supervisor/health', 'a "quoted" \\ route\n']
const methods = ['GET', 'POST', 'DELETE']
const value = fc.oneof(fc.constantFrom(...DURATION_BUCKETS), fc.constantFrom(0, -1, 31, 1e9), fc.double({ min: -1, max: 60, noNaN: true }))
const observation = fc.record({ route: fc.constantFrom(...routes), method: fc.constantFrom(...methods), value })
const history = fc.record({ before: fc.array(observation, { maxLength: 60 }), reset: fc.boolean(), after: fc.array(observation, { maxLength: 20 }) })

interface Observation { route: string; method: string; value: number }

async function expose (h: { before: Observation[]; reset: boolean; after: Observation[] }): Promise<{ theirs: [string, unknown]; ours: [string, unknown] }> {
  const a = new Registry()
  const b = new Registry()
  const reference = new Histogram({ name: 'gateway_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['route', 'method'], registers: [a], buckets: DURATION_BUCKETS })
  const fast = new FastHistogram('gateway_http_request_duration_seconds', 'HTTP request duration', ['route', 'method'], DURATION_BUCKETS, [b])
  // a caller keeps its series, as the metrics hook does, across the reset
  const kept = new Map<string, ReturnType<typeof fast.series>>()
  const observe = (o: Observation): void => {
    reference.observe({ route: o.route, method: o.method }, o.value)
    const key = `${o.route}\u0000${o.method}`
    let s = kept.get(key)
    if (s === undefined) kept.set(key, s = fast.series({ route: o.route, method: o.method }))
    s.observe(o.value)
  }
  h.before.forEach(observe)
  if (h.reset) {
    a.resetMetrics()
    b.resetMetrics()
  }
  h.after.forEach(observe)
  return { theirs: [await a.metrics(), await a.getMetricsAsJSON()], ours: [await b.metrics(), await b.getMetricsAsJSON()] }
}

describe('FastHistogram', () => {
  it('exposes what prom-client\'s Histogram exposes for the same observations', async () => {
    await fc.assert(fc.asyncProperty(history, async (h) => {
      const { theirs, ours } = await expose(h)
      expect(ours[0]).toBe(theirs[0])
      expect(ours[1]).toStrictEqual(theirs[1])
    }), { numRuns: runs(300) })
  })

  it('counts a value equal to a bound in that bound\'s bucket, as prom-client does', async () => {
    const { theirs, ours } = await expose({ before: [{ route: 'r', method: 'GET', value: 0.005 }, { route: 'r', method: 'GET', value: 0.0050001 }], reset: false, after: [] })
    expect(ours[0]).toBe(theirs[0])
    expect(ours[0]).toContain('gateway_http_request_duration_seconds_bucket{le="0.005",route="r",method="GET"} 1\n')
  })

  it('refuses what prom-client refuses: a value that is not a number, a label it does not have', () => {
    const fast = new FastHistogram('h', 'h', ['route'], [1, 2], [new Registry()])
    expect(() => fast.series({ route: 'r' }).observe(Number.NaN)).toThrow(TypeError)
    expect(() => fast.series({ route: 'r', other: 'x' } as unknown as { route: string })).toThrow(/no label other/)
    expect(() => new FastHistogram('h2', 'h', ['route'], [2, 1], [])).toThrow(/increasing/)
  })
})
