// The front door's own agent card (docs/api.md#a2a-front-door): the gateway's URL, bearer
// security (the callers' own tokens and JWTs; the remote's secret is never named), the Argus
// skills the remote advertises and the gateway serves, the campaign-control extension only in
// controller mode, and both A2A generations — v1.0's shape to a request that asks for it with
// `A2A-Version`, v0.3's otherwise, each listing both interfaces. Names and descriptions are the
// gateway's own text: nothing of the remote's card is copied but skill ids it matched. Signed,
// when a key is configured, as the gateway verifies others: a JWS over the card's canonical form
// (src/discovery/card-signature.ts), detached, `typ: JOSE`.
import { FlattenedSign, importJWK } from 'jose'
import { canonicalCardPayload } from '../discovery/card-signature.js'
import type { DiscoverySnapshot } from '../discovery/discovery.js'
import { ARGUS_CAPABILITIES } from '../discovery/capabilities.js'
import { ARGUS_EXTENSION_URN } from '../argus/envelope.js'
import { CONTROL_EXTENSION_URN } from '../../schemas/card.js'
import type { FrontVersion } from './framing.js'
import { CAMPAIGN_METHODS } from './framing.js'
import type { SigningKey } from './signing-key.js'

const MODES = ['application/json']

const SKILL_TEXT: Record<string, { name: string; description: string }> = {
  argus_supervisor_health: { name: 'Argus supervisor health', description: 'supervisor.health: message/send with the urn:openoperator:argus-supervisor:v1 extension.' },
  argus_supervisor_status: { name: 'Argus supervisor status', description: 'supervisor.status: message/send with the urn:openoperator:argus-supervisor:v1 extension.' },
  argus_campaign_list: { name: 'Argus campaign list', description: 'campaign.list: message/send with the urn:openoperator:argus-supervisor:v1 extension.' }
}

/** the skills the gateway serves now: the Argus reads the remote's card advertises */
function skills (snap: DiscoverySnapshot): Array<{ id: string; name: string; description: string; tags: string[] }> {
  return Object.entries(ARGUS_CAPABILITIES)
    .filter(([cap]) => snap.capabilities[cap as keyof typeof ARGUS_CAPABILITIES].state === 'available')
    .map(([, id]) => ({ id, ...SKILL_TEXT[id]!, tags: ['argus'] }))
}

function extensions (snap: DiscoverySnapshot): Array<Record<string, unknown>> {
  const list: Array<Record<string, unknown>> = [{ uri: ARGUS_EXTENSION_URN, description: 'The Argus supervisor reads.', required: false }]
  if (snap.mode !== 'controller') return list
  const operations: Record<string, string> = { cancel: 'tasks/cancel' }
  for (const [method, op] of Object.entries(CAMPAIGN_METHODS)) operations[op] = method
  list.push({
    uri: CONTROL_EXTENSION_URN,
    description: 'Campaign control through the gateway: leases, a fixed constraints envelope, every mutation single-shot on the gateway\'s ledger.',
    required: false,
    params: {
      lease_epoch_enforced: true,
      policy_enforced: true,
      project_selection: snap.capabilities['control.project_selection'].state !== 'unavailable',
      operations
    }
  })
  return list
}

export function buildCard (snap: DiscoverySnapshot, base: string, version: FrontVersion): Record<string, unknown> {
  const url = `${base}/a2a/`
  const interfaces = [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }]
  const common = {
    name: 'openoperator-gateway',
    description: 'The OpenOperator gateway\'s A2A front door: the Argus reads, and campaign control with every guarantee of the gateway\'s REST interface.',
    version: '1.0.0',
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: skills(snap)
  }
  if (version === '1.0') {
    return {
      ...common,
      supportedInterfaces: interfaces,
      capabilities: { streaming: false, pushNotifications: false, extensions: extensions(snap) },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'A gateway caller\'s token or JWT.' } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }]
    }
  }
  return {
    ...common,
    url,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    supportedInterfaces: interfaces,
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false, extensions: extensions(snap) },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A gateway caller\'s token or JWT.' } },
    security: [{ bearer: [] }]
  }
}

export interface CardSigner { sign: (card: Record<string, unknown>) => Promise<Record<string, unknown>> }

/** signs a card; the last signature per canonical form is kept, so an unchanged card is signed once */
export function createCardSigner (key: SigningKey): CardSigner {
  let imported: Promise<Awaited<ReturnType<typeof importJWK>>> | undefined
  const memo = new Map<string, { protected: string; signature: string }>()
  return {
    sign: async (card) => {
      const payload = canonicalCardPayload(card)
      let sig = memo.get(payload)
      if (sig === undefined) {
        imported ??= importJWK(key.privateJwk as never, key.alg)
        const jws = await new FlattenedSign(new TextEncoder().encode(payload))
          .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JOSE' })
          .sign(await imported)
        sig = { protected: jws.protected!, signature: jws.signature }
        if (memo.size >= 8) memo.clear()
        memo.set(payload, sig)
      }
      return { ...card, signatures: [sig] }
    }
  }
}
