// The agent card OpenOperator serves: v0.3 shape (as a2a-js 1.3.0 serves it), the Argus
// skills only while Argus is enabled, and no campaign-control extension — OpenOperator does
// not advertise one today; the campaign-control option adds it (../routes/card-serving.ts).
import type { AuthScheme } from '../types.js'

export interface CardOptions {
  argusEnabled?: boolean
  /** When set, the card declares the accepted auth schemes (as an authenticated deployment would). */
  authSchemes?: AuthScheme[]
}

const MODES = ['application/json']

// Display names deliberately differ from ids: clients must key on `id`.
const GENERAL = { id: 'general_assistance', name: 'General assistance', description: 'Answers operator requests through Agent Zero.' }
const ARGUS = [
  { id: 'argus_supervisor_health', name: 'Supervisor health', description: 'Read-only Argus supervisor health check.' },
  { id: 'argus_supervisor_status', name: 'Supervisor status', description: 'Read-only Argus supervisor status.' },
  { id: 'argus_campaign_list', name: 'Campaign list', description: 'Read-only list of OpenTraining campaigns.' }
]

/** The skills both card versions list (the same shape in v0.3 and v1.0). */
export function cardSkills (opts: CardOptions): Array<Record<string, unknown>> {
  return [GENERAL, ...(opts.argusEnabled === false ? [] : ARGUS)].map((s) => ({
    ...s,
    tags: s.id === 'general_assistance' ? ['assistant'] : ['argus', 'read-only'],
    inputModes: MODES,
    outputModes: MODES
  }))
}

export function defaultCard (origin: string, opts: CardOptions = {}): Record<string, unknown> {
  const skills = cardSkills(opts)
  const card: Record<string, unknown> = {
    name: 'OpenOperator',
    description: 'OpenOperator autonomous operator (simulated).',
    version: '1.0.0',
    url: `${origin}/a2a/`,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3',
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills,
    provider: { organization: 'OpenOperator', url: origin }
  }
  if (opts.authSchemes !== undefined && opts.authSchemes.length > 0) {
    const schemes: Record<string, unknown> = {}
    if (opts.authSchemes.includes('bearer')) schemes.bearer = { type: 'http', scheme: 'bearer' }
    if (opts.authSchemes.includes('x-api-key')) schemes.apiKey = { type: 'apiKey', in: 'header', name: 'X-API-KEY' }
    card.securitySchemes = schemes
    card.security = Object.keys(schemes).map((name) => ({ [name]: [] }))
  }
  return card
}
