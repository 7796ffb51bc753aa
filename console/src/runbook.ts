// Which step of the ambiguous-write runbook (docs/runbooks/ambiguous-write.md) applies to an
// unresolved record. The runbook ships beside the page, verbatim (console/vite.config.ts), and
// each step is named by its heading, which test/console/console.test.ts checks against the file.
// No DOM and no import: the test reads this table as it is.

export const RUNBOOK = 'runbooks/ambiguous-write.md'

export const STEPS = {
  2: 'Step 2 — list the unresolved records',
  3: 'Step 3 — reconcile each record',
  4: 'Step 4 — if reconcile says too early, wait `Retry-After`, then reconcile again',
  5: 'Step 5 — if `request_status` is not advertised, or reconcile keeps failing: acknowledge',
  6: 'Step 6 — if `assume_not_applied` is refused for want of a higher epoch: fence the campaign'
} as const
export type Step = keyof typeof STEPS

export interface Advice { step: Step, what: string }

/**
 * `requestStatus`: whether the remote advertises request_status (control.request_status in
 * GET /v1/upstream); undefined when the token cannot read it — then reconcile is tried first
 */
export function adviceFor (r: { state: string, reconcileFailures?: number | undefined }, requestStatus: boolean | undefined): Advice {
  if (r.state === 'pending') return { step: 2, what: 'its sender may still be waiting: at its deadline the sweep makes it ambiguous' }
  if (requestStatus === false) return { step: 5, what: 'the remote does not advertise request_status: check on its side, then acknowledge' }
  const failures = r.reconcileFailures ?? 0
  if (failures > 0) return { step: 5, what: `reconcile failed ${failures} time${failures === 1 ? '' : 's'}: reconcile again, or check on the remote's side and acknowledge` }
  return { step: 3, what: 'reconcile it: the remote is asked once whether it applied it' }
}
