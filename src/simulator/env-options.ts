// What the simulator takes from the environment beyond its profile (docs/design.md#simulator-faults):
// SIMULATOR_FAULTS, the faults in force from the start, and SIMULATOR_TASK_SECONDS, how long a
// campaign-control submission works before it is completed. One reading for `npm run simulator`
// and the embedded default (src/config/index.ts), so both refuse a bad value with the same words.
import { parseFaultRules, parseTaskSeconds } from './books/fault-spec.js'
import type { FaultRule } from './types.js'

/** seconds from a submission to `completed` when SIMULATOR_TASK_SECONDS is unset */
export const DEFAULT_TASK_SECONDS = 10

export interface SimulatorEnvOptions {
  faults: FaultRule[]
  /** undefined: submitted tasks stay in their last scripted state */
  completeAfterMs: number | undefined
}

export type SimulatorEnvResult = { ok: true; options: SimulatorEnvOptions } | { ok: false; problems: string[] }

/** Problems are `VARIABLE: what is wrong`; an empty value counts as unset. */
export function simulatorEnvOptions (env: { SIMULATOR_FAULTS?: string; SIMULATOR_TASK_SECONDS?: string }, campaignControl: boolean): SimulatorEnvResult {
  const problems: string[] = []
  const faults = parseFaultRules(env.SIMULATOR_FAULTS ?? '', { campaignControl })
  if (!faults.ok) problems.push(...faults.problems.map((p) => `SIMULATOR_FAULTS: ${p}`))
  const raw = env.SIMULATOR_TASK_SECONDS ?? ''
  const seconds = parseTaskSeconds(raw === '' ? String(DEFAULT_TASK_SECONDS) : raw)
  if (!seconds.ok) problems.push(`SIMULATOR_TASK_SECONDS: ${seconds.problem}`)
  if (!faults.ok || !seconds.ok) return { ok: false, problems }
  return { ok: true, options: { faults: faults.rules, completeAfterMs: seconds.ms } }
}
