// The fixtures a test names to get what it runs against (vitest's `test.extend`): `sim`, a
// simulator, and `gw`, the gateway in front of it (through startGateway, so started the way the
// bin starts it); `controlPair`, a controller-mode gateway in front of a campaign-control
// simulator. Each is started on 127.0.0.1 port 0 when a test first names it and closed after
// the test, the gateway before its simulator. What they start from are fixtures too,
// `pairOptions` and `controlOptions`, which a file or a suite sets with `test.override({ … })`.
// A test whose options are its own, or that needs more than one pair, calls `startPair` /
// `startControlPair`: the same, its options merged onto those, closed the same way. After every
// control pair, whether named or started, the whole-run rule is checked: the remote never
// received a mutation request id twice.
import { test as base } from 'vitest'
import type { Env } from '../../src/config/index.js'
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js'
import { CONTROL_ENV, CONTROL_SIM, controlPairOf, expectEachRequestOnce, type ControlPair } from './control.js'
import { startGateway, type TestGateway } from './gateway.js'

/** what a pair starts with; a test's own are merged onto the file's, `sim` and `env` key by key */
export interface PairOptions {
  sim?: SimulatorOptions
  env?: Env
  /** the control plane's clock (default Date.now) */
  clock?: () => number
}

export interface Pair { sim: Simulator; gw: TestGateway }

export interface Fixtures {
  pairOptions: PairOptions
  sim: Simulator
  gw: TestGateway
  startPair: (o?: PairOptions) => Promise<Pair>
  controlOptions: PairOptions
  controlPair: ControlPair
  startControlPair: (o?: PairOptions) => Promise<ControlPair>
}

const merged = (a: PairOptions, b: PairOptions): PairOptions => ({ sim: { ...a.sim, ...b.sim }, env: { ...a.env, ...b.env }, clock: b.clock ?? a.clock })

/** runs every closer, last opened first, even when one fails; then throws the first failure */
async function closeAll (closers: Array<() => Promise<void>>): Promise<void> {
  let failure: { err: unknown } | undefined
  for (const close of closers.splice(0).reverse()) {
    try {
      await close()
    } catch (err) {
      failure ??= { err }
    }
  }
  if (failure !== undefined) throw failure.err
}

/** a simulator and a gateway in front of it; `closers` learns how to close each as soon as it exists */
async function openPair (o: PairOptions, closers: Array<() => Promise<void>>, checkRequests = false): Promise<Pair> {
  const sim = await startSimulator(o.sim)
  closers.push(async () => {
    await sim.close()
    if (checkRequests) expectEachRequestOnce(sim)
  })
  const gw = await startGateway({ simulator: sim, env: o.env, clock: o.clock })
  closers.push(gw.close)
  return { sim, gw }
}

export const test = base.extend<Fixtures>({
  pairOptions: {},
  sim: async ({ pairOptions }, use) => {
    const sim = await startSimulator(pairOptions.sim)
    await use(sim)
    await sim.close()
  },
  gw: async ({ sim, pairOptions }, use) => {
    const gw = await startGateway({ simulator: sim, env: pairOptions.env, clock: pairOptions.clock })
    await use(gw)
    await gw.close()
  },
  startPair: async ({ pairOptions }, use) => {
    const closers: Array<() => Promise<void>> = []
    try {
      await use(async (o = {}) => await openPair(merged(pairOptions, o), closers))
    } finally {
      await closeAll(closers)
    }
  },
  controlOptions: {},
  controlPair: async ({ startControlPair }, use) => {
    await use(await startControlPair())
  },
  startControlPair: async ({ controlOptions }, use) => {
    const closers: Array<() => Promise<void>> = []
    const start = merged({ sim: CONTROL_SIM, env: CONTROL_ENV }, controlOptions)
    try {
      await use(async (o = {}) => {
        const { sim, gw } = await openPair(merged(start, o), closers, true)
        return controlPairOf(sim, gw)
      })
    } finally {
      await closeAll(closers)
    }
  }
})

export const it = test
