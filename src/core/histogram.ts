// A Prometheus histogram for the per-request observations (docs/design.md#hot-path), registered
// on prom-client's registry and exposed exactly as prom-client's own Histogram exposes the same
// observations (test/unit/histogram.property.test.ts compares the two, text and JSON). What differs is the cost of
// an observation: prom-client validates the label set, hashes it into a string and looks each
// bucket up by its bound turned into a property name, every call, two calls per read (what that
// cost: BENCHMARKS.md#hot-path-choices). Here a caller keeps the series it observes into
// (`series`, once per label set) and an observation is a comparison per bucket and three additions.

/** one label set's series */
export interface HistogramSeries {
  /** one observation, in the metric's unit */
  observe: (value: number) => void
}

interface Series extends HistogramSeries {
  labels: Record<string, string>
  /** per bucket, not cumulative; the last is above every bound */
  counts: Float64Array
  sum: number
  count: number
  /** false after a reset until the next observation: prom-client's reset drops every series */
  shown: boolean
}

/** prom-client's shape of one exposed value; `exemplar` as its Histogram sets it (none kept here) */
interface ValuePair { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string; exemplar: null | undefined }

export class FastHistogram<L extends string> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly bounds: Float64Array
  private readonly all = new Map<string, Series>()
  /** the series in the exposition, in the order of their first observation since the last reset (prom-client's order) */
  private shownOrder: Series[] = []

  constructor (readonly name: string, readonly help: string, private readonly labelNames: readonly L[], buckets: readonly number[], registers: ReadonlyArray<{ registerMetric: (m: never) => void }>) {
    if (buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) throw new Error(`${name}: buckets must be finite and increasing`)
    this.bounds = Float64Array.from(buckets)
    for (const r of registers) r.registerMetric(this as never)
  }

  /** the series of these label values, made on first use; keep it for the next observation */
  series (labels: Record<L, string>): HistogramSeries {
    for (const k of Object.keys(labels)) if (!this.labelNames.includes(k as L)) throw new Error(`${this.name}: no label ${k}`)
    const own: Record<string, string> = {}
    for (const n of this.labelNames) if (labels[n] !== undefined) own[n] = String(labels[n])
    const key = JSON.stringify(this.labelNames.map((n) => own[n] ?? null))
    const known = this.all.get(key)
    if (known !== undefined) return known
    const bounds = this.bounds
    const s: Series = {
      labels: own,
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      shown: false,
      observe: (value) => {
        // prom-client refuses a value that is not a number the same way
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${String(value)}`)
        let i = 0
        while (i < bounds.length && value > bounds[i]!) i++
        s.counts[i]!++
        s.sum += value
        s.count++
        if (!s.shown) {
          s.shown = true
          this.shownOrder.push(s)
        }
      }
    }
    this.all.set(key, s)
    return s
  }

  /** what prom-client's registry reads for the text exposition: its Histogram's shape */
  getForPromString (): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: ValuePair[] } {
    const values: ValuePair[] = []
    const bucket = `${this.name}_bucket`
    for (const s of this.shownOrder) {
      let acc = 0
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i]!
        values.push({ labels: { le: this.bounds[i]! }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null })
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined }
      )
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }

  /** the JSON form (registry.getMetricsAsJSON): each value's labels with its series' labels */
  get (): ReturnType<FastHistogram<L>['getForPromString']> {
    const data = this.getForPromString()
    return { ...data, values: data.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...v.labels, ...sharedLabels } })) as ValuePair[] }
  }

  /** every series back to zero and out of the exposition until observed again; a series a caller holds stays valid */
  reset (): void {
    for (const s of this.all.values()) {
      s.counts.fill(0)
      s.sum = 0
      s.count = 0
      s.shown = false
    }
    this.shownOrder = []
  }
}
