// The capability model (docs/design.md#capabilities) as a pure function of the card and what the
// remote has shown since: no capability is inferred from natural language, only from ids and
// flags.
import { controlExtensionParams, CONTROL_EXTENSION_URN, skillIds, type AgentCard } from '../../schemas/card.js'

export type CapabilityState = 'available' | 'tentative' | 'unavailable'
export interface Capability { state: CapabilityState; reason: string }

export const ARGUS_CAPABILITIES = {
  'argus.supervisor.health': 'argus_supervisor_health',
  'argus.supervisor.status': 'argus_supervisor_status',
  'argus.campaign.list': 'argus_campaign_list'
} as const
export type ArgusCapability = keyof typeof ARGUS_CAPABILITIES

export const A2A_CAPABILITIES = ['a2a.message.send', 'a2a.tasks.get', 'a2a.artifacts'] as const
export type A2aCapability = typeof A2A_CAPABILITIES[number]

export const CONTROL_OPERATIONS = ['claim_control', 'read_control', 'renew_control', 'release_control', 'intervene', 'request_status', 'cancel'] as const
export type ControlOperation = typeof CONTROL_OPERATIONS[number]
export type ControlCapability = `control.${ControlOperation}`

export type CapabilityName = ArgusCapability | A2aCapability | ControlCapability | 'control.project_selection'

export interface CapabilityInputs {
  card: AgentCard | undefined
  controlEnabled: boolean
  /** capabilities confirmed by a valid result since the card last changed */
  confirmed: ReadonlySet<CapabilityName>
  /** capabilities whose call answered -32601 since the card last changed */
  methodNotFound: ReadonlySet<CapabilityName>
  /** two consecutive refreshes failed: observer until one succeeds */
  degraded: boolean
  /** why no A2A protocol can be spoken with this card (docs/design.md#protocol-versions): every capability is unavailable */
  protocolProblem?: string | undefined
}

export interface CapabilityModel {
  capabilities: Record<CapabilityName, Capability>
  /** the JSON-RPC method to call for each available control operation, as advertised */
  controlMethods: Partial<Record<ControlOperation, string>>
  mode: 'controller' | 'observer'
  /** why the gateway is not a controller (empty in controller mode) */
  missingPrerequisites: string[]
  /** why each control operation is unavailable */
  controlMissing: Partial<Record<ControlOperation, string[]>>
}

const NO_CARD = 'no agent card has been discovered'

export function computeCapabilities (i: CapabilityInputs): CapabilityModel {
  const caps = {} as Record<CapabilityName, Capability>
  const notFound = (name: CapabilityName): boolean => i.methodNotFound.has(name)
  const ids = i.card !== undefined ? skillIds(i.card) : new Set<string>()
  // no card, or a card whose protocol the gateway cannot speak: nothing can be called
  const blocker = i.card === undefined ? NO_CARD : i.protocolProblem

  for (const [name, skill] of Object.entries(ARGUS_CAPABILITIES) as Array<[ArgusCapability, string]>) {
    if (blocker !== undefined) caps[name] = { state: 'unavailable', reason: blocker }
    else if (!ids.has(skill)) caps[name] = { state: 'unavailable', reason: `card does not advertise skill id ${skill}` }
    else if (notFound(name)) caps[name] = { state: 'unavailable', reason: 'the remote answered method not found' }
    else caps[name] = { state: 'available', reason: `card advertises skill id ${skill}` }
  }
  for (const name of A2A_CAPABILITIES) {
    if (blocker !== undefined) caps[name] = { state: 'unavailable', reason: blocker }
    else if (notFound(name)) caps[name] = { state: 'unavailable', reason: 'the remote answered method not found' }
    else if (i.confirmed.has(name)) caps[name] = { state: 'available', reason: 'the remote answered it with a valid result' }
    else caps[name] = { state: 'tentative', reason: 'not yet confirmed by a valid result' }
  }

  const params = i.card !== undefined ? controlExtensionParams(i.card) : undefined
  const shared: string[] = []
  if (blocker !== undefined) shared.push(blocker)
  if (i.card !== undefined && params === undefined) shared.push(`card does not advertise ${CONTROL_EXTENSION_URN}`)
  else if (params !== undefined) {
    if (params.lease_epoch_enforced !== true) shared.push('params.lease_epoch_enforced is not true')
    if (params.policy_enforced !== true) shared.push('params.policy_enforced is not true')
  }
  const ops = params !== undefined && typeof params.operations === 'object' && params.operations !== null
    ? params.operations as Record<string, unknown>
    : {}
  const controlMethods: Partial<Record<ControlOperation, string>> = {}
  const controlMissing: Partial<Record<ControlOperation, string[]>> = {}
  for (const op of CONTROL_OPERATIONS) {
    const name: ControlCapability = `control.${op}`
    const missing = [...shared]
    const method = ops[op]
    const advertised = typeof method === 'string' && method.length > 0
    if (params !== undefined && !advertised) missing.push(`operation ${op} is not advertised`)
    if (notFound(name)) missing.push(`operation ${op} answered method not found`)
    if (missing.length === 0 && advertised) {
      caps[name] = { state: 'available', reason: `advertised as ${method}` }
      controlMethods[op] = method
    } else {
      caps[name] = { state: 'unavailable', reason: missing.join('; ') }
      controlMissing[op] = missing
    }
  }
  caps['control.project_selection'] = params?.project_selection === true && shared.length === 0
    ? { state: 'available', reason: 'params.project_selection is true' }
    : { state: 'unavailable', reason: shared.length > 0 ? shared.join('; ') : 'params.project_selection is not true' }

  const missingPrerequisites = [...shared]
  for (const op of ['claim_control', 'read_control'] as const) {
    for (const m of controlMissing[op] ?? []) if (!missingPrerequisites.includes(m)) missingPrerequisites.push(m)
  }
  if (!i.controlEnabled) missingPrerequisites.push('GATEWAY_CONTROL_ENABLED is not true')
  if (i.degraded) missingPrerequisites.push('the last two agent card refreshes failed')
  return {
    capabilities: caps,
    controlMethods,
    mode: missingPrerequisites.length === 0 ? 'controller' : 'observer',
    missingPrerequisites,
    controlMissing
  }
}
