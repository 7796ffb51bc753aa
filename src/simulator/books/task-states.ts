// The A2A task states in both versions' names: the task book keeps v0.3 names ('working'), the
// v1.0 wire shows the proto enum names ('TASK_STATE_WORKING'), and a plan or a fault may be
// written in either. A leaf, so the book and the wire each read it without reading the other.
const STATES: Readonly<Record<string, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED'
}
const INTERNAL_STATES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(STATES).map(([k, v]) => [v, k]))

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled', 'rejected'])

/** A stored (v0.3) state as v1.0 names it. */
export function v1State (state: unknown): string {
  return (typeof state === 'string' ? STATES[state] : undefined) ?? 'TASK_STATE_UNSPECIFIED'
}

/** A state as the book keeps it: a TASK_STATE_* name becomes its v0.3 name, anything else stays. */
export function internalState (state: string): string {
  if (state === 'TASK_STATE_UNSPECIFIED') return 'unknown'
  return INTERNAL_STATES[state] ?? state
}

/** The v0.3 state of a stored task; 'unknown' when it has none. */
export function stateOf (task: Record<string, unknown>): string {
  const status = task.status
  if (typeof status === 'object' && status !== null && 'state' in status && typeof status.state === 'string') return status.state
  return 'unknown'
}
