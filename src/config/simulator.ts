// The embedded simulator's faults and task timing (docs/design.md#simulator-faults): read only
// where it runs (no OPENOPERATOR_URL, outside production), with the simulator's own reading;
// elsewhere a leftover value is said, not refused.
import { simulatorEnvOptions, type SimulatorEnvOptions } from '../simulator/env-options.js'
import type { ParsedEnv } from './env.js'

export function simulatorSettings (e: ParsedEnv, production: boolean, problems: string[], warnings: string[]): SimulatorEnvOptions {
  const simulatorEnv = { SIMULATOR_FAULTS: e.SIMULATOR_FAULTS, SIMULATOR_TASK_SECONDS: e.SIMULATOR_TASK_SECONDS }
  if (e.OPENOPERATOR_URL === undefined && !production) {
    const sim = simulatorEnvOptions(simulatorEnv, e.SIMULATOR_PROFILE === 'campaign-control')
    if (sim.ok) return sim.options
    problems.push(...sim.problems)
  } else {
    for (const name of Object.keys(simulatorEnv) as Array<keyof typeof simulatorEnv>) {
      if (simulatorEnv[name] !== undefined) warnings.push(`${name} is set but ignored: it is for the embedded simulator, which runs only when OPENOPERATOR_URL is unset outside production`)
    }
  }
  return { faults: [], completeAfterMs: undefined }
}
