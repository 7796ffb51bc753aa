// The scale bench's gateway (bench/scale.ts), in a process of its own, started as the bin starts
// it from the parent's configuration (BENCH_GATEWAY_ENV, JSON). With BENCH_SCALE_RETENTION=1 the
// retention pass is the parent's to start (bench/scale-retention.ts): the ledger's pruning call
// answers that nothing is left but within the pass, so the plane's own timer (a minute after the
// start, then every ten) finds nothing, whenever it fires; on `prune` the plane prunes as its
// timer would, run after run with no interval between them, until a run finds nothing (or, given
// `seconds`, until then: the batches after it find nothing), each batch timed, and on PostgreSQL
// the pruning statement captured as sent (text and parameters), for the parent to show its plan.
// The event loop's delay is reported between two `loop` messages: on SQLite every statement runs
// on it. Asked `timings`, it says how its start went: the process and its modules, then the
// gateway's own start (the ledger opened and checked, the upkeep started, listening).
import { AsyncLocalStorage } from 'node:async_hooks'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import pg from 'pg'
import { loadConfig, type Env } from '../src/config/index.js'
import { startGatewayServer } from '../src/server.js'
import { serveParent } from './child-ipc.js'

/** what the parent asks beyond child-ipc's messages, and what this child answers */
export type ChildAsk = { type: 'prune'; seconds?: number } | { type: 'loop' } | { type: 'timings' }
export type ChildReport =
  | { type: 'pruned'; pruned: number; runs: number; ms: number; batchMs: number[]; error?: string; statement?: Statement }
  | { type: 'loop'; p50Ms: number; p99Ms: number; maxMs: number }
  | { type: 'timings'; bootMs: number; gatewayMs: number }

export interface Statement { text: string; values: unknown[] }

/** ms since the process started: node and every module loaded (imports are evaluated first) */
const booted = performance.now()

// the pass's calls, told from the timer's by their async context
const pass = new AsyncLocalStorage<true>()
let statement: Statement | undefined
if (process.env.BENCH_SCALE_RETENTION === '1') {
  // the last statement the pass sent to PostgreSQL that writes mutation_records: the prune
  const query = pg.Pool.prototype.query
  pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
    const c = args[0] as { text?: unknown; values?: unknown[] }
    if (pass.getStore() === true && typeof c?.text === 'string' && c.text.trimStart().startsWith('UPDATE mutation_records')) statement = { text: c.text, values: c.values ?? [] }
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
}

const gw = await startGatewayServer(loadConfig(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Env))
const started = performance.now()
serveParent(gw.url, async () => { await gw.close() })
process.on('message', (m: ChildAsk) => {
  if (m.type === 'timings') send({ type: 'timings', bootMs: booted, gatewayMs: started - booted })
})
if (process.env.BENCH_SCALE_RETENTION === '1') retentionOnAsk()

function send (m: ChildReport): void { process.send?.(m) }

function retentionOnAsk (): void {
  const { ledger, control } = gw.app
  const prune = ledger.pruneResolvedBefore
  const batchMs: number[] = []
  let open = false
  let until = Infinity
  ledger.pruneResolvedBefore = async (before, limit, at) => {
    if (pass.getStore() !== true || performance.now() > until) return 0
    const t = performance.now()
    const n = await prune(before, limit, at)
    batchMs.push(performance.now() - t)
    return n
  }
  const loop = monitorEventLoopDelay({ resolution: 1 })
  loop.enable()
  process.on('message', (m: ChildAsk) => {
    if (m.type === 'loop') {
      send({ type: 'loop', p50Ms: loop.percentile(50) / 1e6, p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 })
      loop.reset()
    } else if (m.type === 'prune' && !open) {
      open = true
      const t0 = performance.now()
      until = m.seconds === undefined ? Infinity : t0 + m.seconds * 1000
      let pruned = 0
      let runs = 0
      const done = (error?: string): void => {
        open = false
        send({ type: 'pruned', pruned, runs, ms: performance.now() - t0, batchMs, ...(error === undefined ? {} : { error }), ...(statement === undefined ? {} : { statement }) })
      }
      void pass.run(true, async () => {
        for (let n = -1; n !== 0; runs++) { n = await control.prune(); pruned += n }
      }).then(() => { done() }, (err: unknown) => { done(String(err)) })
    }
  })
}
