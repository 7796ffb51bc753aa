// The control plane as a whole (docs/design.md#campaign-control), by generated histories:
// fast-check draws sequences of mutations from two controllers on two campaigns, with faults,
// replays, reconciles, acknowledges, late arrivals, takeovers, clock jumps and skew and
// gateway restarts, runs them against the real gateway and the simulator over loopback, and
// after every command checks the answer against the model and the invariants against the
// remote's own log. A failure prints the seed, the path and the shrunk history that replay it.
// `npm test` runs a bounded number of histories; `npm run test:soak` sets MODEL_RUNS higher.
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { commandArbitrary, finish, type Real } from './commands.js'
import { Model } from './model.js'
import { startWorld } from './world.js'
import { freshSchema } from '../helpers/postgres.js'

const SEED = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED)
const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP the model on PostgreSQL with two replicas: TEST_POSTGRES_URL is not set')

const LEDGERS = [
  { name: 'one replica on SQLite', runs: Number(process.env.MODEL_RUNS ?? 45), postgres: false, protocol: 'v0.3' as const },
  { name: 'two replicas on PostgreSQL', runs: Number(process.env.MODEL_RUNS_PG ?? process.env.MODEL_RUNS ?? 15), postgres: true, protocol: 'v0.3' as const },
  // the same rules over the A2A v1.0 wire (docs/design.md#protocol-versions): SendMessage, CancelTask, A2A-Version on every call
  { name: 'one replica on SQLite, an A2A v1.0 remote', runs: Number(process.env.MODEL_RUNS_V1 ?? process.env.MODEL_RUNS ?? 15), postgres: false, protocol: 'v1.0' as const }
]
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 80)

describe.each(LEDGERS)('the control plane against its model: $name', ({ runs: RUNS, postgres, name, protocol }) => {
  it.skipIf(postgres && PG === undefined)(`holds every invariant over ${RUNS} generated histories of up to ${MAX_COMMANDS} commands`, async () => {
    const totals = { histories: 0, commands: 0, ambiguousWithoutFault: 0, lateCancels: 0, answers: {} as Record<string, number> }
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbitrary({ restarts: true }), { maxCommands: MAX_COMMANDS, size: 'max' }), async (cmds) => {
        const schema = postgres ? await freshSchema(PG!) : undefined
        const w = await startWorld({ postgresUrl: schema?.url, protocol })
        const m = new Model()
        const r: Real = { w, lateCancels: new Set(), takeoverEpochs: new Map() }
        try {
          await fc.asyncModelRun(() => ({ model: m, real: r }), cmds)
          await finish(m, r)
        } catch (err) {
          // the gateway's last lines help read a failure; never a secret (the logger scrubs it)
          console.error(w.logs.slice(-30).join(''))
          throw err
        } finally {
          await w.close()
          await schema?.drop()
        }
        totals.histories++
        totals.commands += m.stats.commands
        totals.ambiguousWithoutFault += m.stats.ambiguousWithoutFault
        totals.lateCancels += m.stats.lateCancels
        for (const [k, v] of Object.entries(m.stats.answers)) totals.answers[k] = (totals.answers[k] ?? 0) + v
      }),
      { numRuns: RUNS, seed: SEED, path: process.env.MODEL_PATH, endOnFailure: process.env.MODEL_SHRINK === undefined }
    )
    console.log(`model (${name}): ${totals.histories} histories, ${totals.commands} commands, ${totals.ambiguousWithoutFault} ambiguous without a fault (slow machine), ${totals.lateCancels} cancels delivered late`)
    console.log(JSON.stringify(totals.answers, Object.keys(totals.answers).sort(), 1))
    expect(totals.commands).toBeGreaterThan(RUNS)
  }, 600_000)
})
