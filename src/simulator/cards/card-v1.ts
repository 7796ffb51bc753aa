// The agent card of a v1.0 server as @a2a-js/sdk 1.x serves it: no top-level `url`,
// `preferredTransport` or `protocolVersion`, the endpoints in `supportedInterfaces`, security
// in v1.0's proto shape. It holds v1.0 schema fields only, so the SDK's canonicalisation
// (which drops any other field before checking a signature) leaves it unchanged and the SDK's
// verifier accepts what the simulator signs. A dual server's v0.3 card is the v0.3 card
// listing the same interfaces.
import type { CardOptions } from './card.js'
import { cardSkills } from './card.js'

const MODES = ['application/json']

/** One JSON-RPC interface per version the server speaks, all at /a2a/. */
export function supportedInterfaces (origin: string, versions: string[]): Array<Record<string, unknown>> {
  return versions.map((protocolVersion) => ({ url: `${origin}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion }))
}

export function v1Card (origin: string, versions: string[], opts: CardOptions = {}): Record<string, unknown> {
  const card: Record<string, unknown> = {
    name: 'OpenOperator',
    description: 'OpenOperator autonomous operator (simulated).',
    version: '1.0.0',
    supportedInterfaces: supportedInterfaces(origin, versions),
    provider: { organization: 'OpenOperator', url: origin },
    capabilities: { streaming: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: cardSkills(opts)
  }
  if (opts.authSchemes !== undefined && opts.authSchemes.length > 0) {
    const schemes: Record<string, unknown> = {}
    if (opts.authSchemes.includes('bearer')) schemes.bearer = { httpAuthSecurityScheme: { scheme: 'bearer' } }
    if (opts.authSchemes.includes('x-api-key')) schemes.apiKey = { apiKeySecurityScheme: { location: 'header', name: 'X-API-KEY' } }
    card.securitySchemes = schemes
    card.securityRequirements = Object.keys(schemes).map((name) => ({ schemes: { [name]: { list: [] } } }))
  }
  return card
}
