// The two load generators of the comparison bench, both recording latency in microseconds in an
// HDR histogram (hdr-histogram-js).
// - closed loop (saturation): autocannon with N connections; each response's latency is taken
//   from its 'response' event (autocannon's own histogram keeps whole milliseconds);
// - open loop (steady rate): request i is sent at start + i/rate whatever happened before, and
//   its latency is measured from that due time, so a stall is charged to every request it
//   delayed (no coordinated omission). The scheduler spins on setImmediate near a due time: a
//   timer's 1 ms granularity would add up to a millisecond of lateness of its own, and a worker
//   thread sleeping in Atomics.wait until each due time, tried, made every row slower here (each
//   process then wakes from idle for every request, which costs much more in this VM). How late
//   the generator itself sent each request is kept apart (`sendLag`), to read the figures by.
import autocannon from 'autocannon'
import * as hdr from 'hdr-histogram-js'
import { Pool } from 'undici'

export interface Request { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }

export interface LoadResult {
  seconds: number
  sent: number
  ok: number
  non2xx: number
  errors: number
  rps: number
  /** µs */
  p50: number
  p99: number
  p999: number
  max: number
  /** open loop: how late the generator sent, µs (p99, max) */
  sendLagP99?: number
  sendLagMax?: number
  firstFailure?: string
}

const histogram = (): hdr.Histogram => hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 })

function summarise (h: hdr.Histogram, r: Omit<LoadResult, 'p50' | 'p99' | 'p999' | 'max' | 'rps'>): LoadResult {
  return {
    ...r,
    rps: r.ok / r.seconds,
    p50: h.getValueAtPercentile(50),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    max: h.maxValue
  }
}

/** saturation: `connections` callers each sending its next request as soon as the last is answered */
export async function closedLoop (origin: string, connections: number, seconds: number, next: (i: number) => Request): Promise<LoadResult> {
  const h = histogram()
  let i = 0
  let firstFailure: string | undefined
  const first = next(i++)
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url: origin,
      connections,
      duration: seconds,
      requests: [{ ...first, setupRequest: (req) => ({ ...req, ...next(i++) }) }]
    }, (err, res) => { if (err !== null && err !== undefined) reject(err); else resolve(res) })
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) h.recordValue(Math.max(1, Math.round(ms * 1000)))
      else firstFailure ??= `HTTP ${status}`
    })
  })
  return summarise(h, { seconds: r.duration, sent: r.requests.sent, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors + r.timeouts, firstFailure })
}

/** steady rate: request i due at start + i / rate, latency from its due time */
export async function openLoop (origin: string, rate: number, seconds: number, next: (i: number) => Request): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 })
  const h = histogram()
  const lag = histogram()
  const total = Math.round(rate * seconds)
  const interval = 1000 / rate
  let sent = 0
  let ok = 0
  let non2xx = 0
  let errors = 0
  let settled = 0
  let firstFailure: string | undefined
  const start = performance.now() + 20
  await new Promise<void>((resolve) => {
    const finish = (): void => { if (++settled === total) resolve() }
    const fire = (i: number, due: number): void => {
      lag.recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)))
      const req = next(i)
      pool.request({ method: req.method, path: req.path, headers: req.headers, body: req.body })
        .then(async (res) => {
          await res.body.dump()
          h.recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)))
          if (res.statusCode >= 200 && res.statusCode < 300) ok++
          else { non2xx++; firstFailure ??= `HTTP ${res.statusCode}` }
        })
        .catch((err: unknown) => { errors++; firstFailure ??= err instanceof Error ? err.message : String(err) })
        .finally(finish)
    }
    const fireDue = (): void => {
      const now = performance.now()
      while (sent < total && start + sent * interval <= now) {
        fire(sent, start + sent * interval)
        sent++
      }
    }
    const tick = (): void => {
      fireDue()
      if (sent >= total) return
      const wait = start + sent * interval - performance.now()
      // a timer only for long waits; near a due time, spin (I/O still runs between turns)
      if (wait > 3) setTimeout(tick, wait - 2)
      else setImmediate(tick)
    }
    tick()
  })
  await pool.close()
  return { ...summarise(h, { seconds, sent, ok, non2xx, errors, firstFailure }), sendLagP99: lag.getValueAtPercentile(99), sendLagMax: lag.maxValue }
}
