// The control plane as a whole (docs/design.md#campaign-control), by generated histories:
// fast-check draws sequences of mutations from two static controllers and two JWT identities
// sharing a controller id claim, on two campaigns, with faults; bursts of mutations in flight at
// once over both replicas, with the campaign locks' sessions killed and sweeps run meanwhile;
// replays, reconciles, acknowledges, late arrivals, takeovers, clock jumps, each replica's own
// skew within and far past the margin, wall clocks stepping either way mid-history (each replica
// noticing on its own), the remote's clock run ahead of a replica with no measurement, SQLite
// restarts with a jumped clock, front-door requests naming campaign ids REST refuses, retention
// runs and gateway restarts; two JWT identities share one display name. It runs them against
// the real gateway and the simulator over loopback, and after every command checks the answer
// against the model and the invariants against the remote's own log. A failure prints the seed,
// the path and the shrunk history that replay it.
// `npm test` runs a bounded number of histories; `npm run test:soak` sets MODEL_RUNS higher.
// The figures print with MODEL_STATS=1 (and in the soak): one line per ledger.
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { commandArbitrary, finish, type Real } from './commands.js'
import { Model, newStats, type Stats } from './model.js'
import { startWorld } from './world.js'
import { freshSchema } from '../helpers/postgres.js'

const SEED = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED)
const PG = process.env.TEST_POSTGRES_URL
const STATS = ['1', 'answers'].includes(process.env.MODEL_STATS ?? '') || process.env.MODEL_SOAK === '1'
if (PG === undefined) console.warn('SKIP the model on PostgreSQL with two replicas: TEST_POSTGRES_URL is not set')

const LEDGERS = [
  { name: 'one replica on SQLite', runs: Number(process.env.MODEL_RUNS ?? 12), postgres: false, protocol: 'v0.3' as const },
  { name: 'two replicas on PostgreSQL', runs: Number(process.env.MODEL_RUNS_PG ?? process.env.MODEL_RUNS ?? 12), postgres: true, protocol: 'v0.3' as const },
  // the same rules over the A2A v1.0 wire (docs/design.md#protocol-versions): SendMessage, CancelTask, A2A-Version on every call
  { name: 'one replica on SQLite, an A2A v1.0 remote', runs: Number(process.env.MODEL_RUNS_V1 ?? process.env.MODEL_RUNS ?? 6), postgres: false, protocol: 'v1.0' as const }
]
const MAX_COMMANDS = Number(process.env.MODEL_MAX_COMMANDS ?? 60)

interface Totals extends Stats { histories: number; maxConcurrency: number; sessionsLost: number }

/** one line: the figures RELIABILITY.md quotes */
function figures (name: string, t: Totals, ms: number): string {
  return `model (${name}): ${t.histories} histories, ${t.commands} commands in ${Math.round(ms / 1000)} s; ` +
    `${t.bursts} bursts (${t.burstShots} mutations, at most ${t.maxConcurrency} in flight at once), ` +
    `${t.kills} lock sessions killed, ${t.sessionsLost} counted lost by the replicas; ${t.campaignBusy} campaign_busy, ` +
    `${t.clockSkewRefusals} clock_skew refusals, ${t.sweepsInFlight} sweeps in flight (${t.sweepsInFlightPast} with a replica past the margin); ${t.pruned} records pruned, ${t.prunedReplays} pruned replays; ${t.frontCommands} mutations through the A2A front door; ` +
    `${t.controllerConflicts} controller conflicts; ${t.clockSteps} wall-clock steps, ${t.jumpedRestarts} restarts with a jumped clock, ${t.remoteAhead} remote clocks run ahead past the margin, ${t.badFrontIds} front-door requests with a campaign id REST refuses; ${t.ambiguousWithoutFault} ambiguous without a fault (slow machine), ${t.lateCancels} cancels delivered late; 0 violations`
}

describe.each(LEDGERS)('the control plane against its model: $name', ({ runs: RUNS, postgres, name, protocol }) => {
  it.skipIf(postgres && PG === undefined)(`holds every invariant over ${RUNS} generated histories of up to ${MAX_COMMANDS} commands`, async () => {
    const totals: Totals = { ...newStats(), histories: 0, maxConcurrency: 0, sessionsLost: 0 }
    const started = Date.now()
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbitrary({ restarts: true, postgres }), { maxCommands: MAX_COMMANDS, size: 'max' }), async (cmds) => {
        const schema = postgres ? await freshSchema(PG!) : undefined
        const w = await startWorld({ postgresUrl: schema?.url, protocol })
        const m = new Model()
        const r: Real = { w, lateCancels: new Set(), takeoverEpochs: new Map() }
        let lost = 0
        try {
          await fc.asyncModelRun(() => ({ model: m, real: r }), cmds)
          await finish(m, r)
          lost = await w.lockSessionsLost()
        } catch (err) {
          // the gateway's last lines help read a failure; never a secret (the logger scrubs it)
          console.error(w.logs.slice(-30).join(''))
          throw err
        } finally {
          await w.close()
          await schema?.drop()
        }
        totals.histories++
        totals.maxConcurrency = Math.max(totals.maxConcurrency, w.inFlight().max)
        totals.sessionsLost += lost
        for (const [k, v] of Object.entries(m.stats) as Array<[keyof Stats, Stats[keyof Stats]]>) {
          if (typeof v === 'number') (totals[k] as number) += v
        }
        for (const [k, v] of Object.entries(m.stats.answers)) totals.answers[k] = (totals.answers[k] ?? 0) + v
      }),
      { numRuns: RUNS, seed: SEED, path: process.env.MODEL_PATH, endOnFailure: process.env.MODEL_SHRINK === undefined }
    )
    if (STATS) console.log(figures(name, totals, Date.now() - started))
    if (process.env.MODEL_STATS === 'answers') console.log(JSON.stringify(totals.answers, Object.keys(totals.answers).sort(), 1))
    expect(totals.commands).toBeGreaterThan(RUNS)
    // the histories did what they are for: several mutations in flight at once, and (on
    // PostgreSQL) lock sessions killed and clocks past the margin refused
    if (RUNS >= 5) {
      expect(totals.maxConcurrency).toBeGreaterThan(1)
      if (postgres) expect(totals.kills + totals.clockSkewRefusals).toBeGreaterThan(0)
    }
  }, 900_000)
})
