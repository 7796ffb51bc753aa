// How many cases a property test runs (fast-check's `numRuns`), every property test asking here
// (docs/design.md#development): its full count under `npm test`, the share vitest.fast.config.ts
// provides under `npm run test:fast`. fast-check draws a fresh seed each run, so the inner loop's
// few cases are new ones every save, and `npm test` still runs every case the test names.
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** the share of each property test's cases a run makes (0 < share <= 1); unset, all of them */
    propertyRunShare?: number
  }
}

/**
 * `full` cases under `npm test`; under `npm run test:fast` its share, never fewer than `floor` — a
 * test that counts what its cases drew names the floor at which its count still holds
 */
export function runs (full: number, floor = 10): number {
  const share = inject('propertyRunShare') ?? 1
  return Math.min(full, Math.max(floor, Math.ceil(full * share)))
}
