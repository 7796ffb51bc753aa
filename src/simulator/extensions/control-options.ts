// The campaign-control extension's configuration as the remote sees it: the seed's default
// method map, the resolved options and the card entry that advertises them. Fixed when the
// simulator starts; what a call is judged by is control-rules.ts.
import type { CampaignControlOptions, ControlOperation, SimulatorProtocol } from '../types.js'

export const CONTROL_URN = 'urn:openoperator:campaign-control:v1'

export const CONTROL_OPERATIONS: readonly ControlOperation[] = [
  'claim_control', 'read_control', 'renew_control', 'release_control', 'intervene', 'request_status', 'cancel'
]

// The seed's map, verbatim; a v1.0 (or dual) server advertises v1.0's own cancel method.
const DEFAULT_METHODS: Record<ControlOperation, string> = {
  claim_control: 'campaign/claim_control',
  read_control: 'campaign/read_control',
  renew_control: 'campaign/renew_control',
  release_control: 'campaign/release_control',
  intervene: 'campaign/intervene',
  request_status: 'campaign/request_status',
  cancel: 'tasks/cancel'
}

export interface ResolvedControl {
  /** The served method per operation; null: neither served nor advertised. */
  methods: Record<ControlOperation, string | null>
  leaseEpochEnforced: boolean
  policyEnforced: boolean
  projectSelection: boolean
  advertise: boolean
  submissionStates: string[]
  clock: () => number
  /** ms from a submission to `completed`; undefined: never */
  completeAfterMs: number | undefined
}

// The standard methods an operation must not take over, whichever wire carries them.
const STANDARD_METHODS = new Set(['message/send', 'tasks/get', 'SendMessage', 'GetTask'])

export function resolveControl (opts: CampaignControlOptions, protocol: SimulatorProtocol = 'v0.3'): ResolvedControl {
  const methods: Record<ControlOperation, string | null> = { ...DEFAULT_METHODS, ...(protocol === 'v0.3' ? {} : { cancel: 'CancelTask' }) }
  for (const op of CONTROL_OPERATIONS) {
    const name = opts.operations?.[op]
    if (name === '') throw new TypeError(`campaignControl.operations.${op} must be a non-empty method name or null`)
    if (name !== undefined) methods[op] = name
  }
  const served = Object.values(methods).filter((m) => m !== null)
  if (new Set(served).size !== served.length) throw new TypeError('campaignControl.operations must name distinct methods')
  if (served.some((m) => STANDARD_METHODS.has(m))) throw new TypeError('campaignControl.operations cannot take over message/send, tasks/get, SendMessage or GetTask')
  const submissionStates = opts.submissionStates ?? ['submitted', 'working']
  if (submissionStates.length === 0) throw new TypeError('campaignControl.submissionStates needs at least one state')
  const { completeAfterMs } = opts
  if (completeAfterMs !== undefined && !(Number.isInteger(completeAfterMs) && completeAfterMs > 0)) throw new TypeError('campaignControl.completeAfterMs must be a positive whole number of ms')
  return {
    methods,
    leaseEpochEnforced: opts.leaseEpochEnforced ?? true,
    policyEnforced: opts.policyEnforced ?? true,
    projectSelection: opts.projectSelection ?? true,
    advertise: opts.advertise ?? true,
    submissionStates: [...submissionStates],
    clock: opts.now ?? Date.now,
    completeAfterMs
  }
}

/** The card entry of `capabilities.extensions` (snake_case params, as the seed writes them). */
export function controlExtension (control: ResolvedControl): Record<string, unknown> {
  const operations: Record<string, string> = {}
  for (const op of CONTROL_OPERATIONS) {
    const method = control.methods[op]
    if (method !== null) operations[op] = method
  }
  return {
    uri: CONTROL_URN,
    params: {
      lease_epoch_enforced: control.leaseEpochEnforced,
      policy_enforced: control.policyEnforced,
      project_selection: control.projectSelection,
      operations
    }
  }
}
