// The front door's own agent card (docs/api.md#a2a-front-door): the gateway's URL, bearer
// security (the callers' own tokens and JWTs; the remote's secret is never named), the Argus
// skills the remote advertises and the gateway serves, the campaign-control extension only in
// controller mode, and both A2A generations — v1.0's shape to a request that asks for it with
// `A2A-Version`, v0.3's otherwise, each listing both interfaces. Names and descriptions are the
// gateway's own text: nothing of the remote's card is copied but skill ids it matched; a field
// holding its proto default (an extension's `required: false`) is left out, as ProtoJSON writes it.
// Signed, when a key is configured, as the gateway verifies others (docs/design.md#signed-cards):
// one detached JWS, `typ: JOSE`, per distinct canonical form (src/discovery/card-canonical.ts) —
// @a2a-js/sdk's, A2A v1.0 §8.4.1's and the whole card's — so that a verifier computing any of them
// finds its own; most cards need two.
import { base64url, FlattenedSign, flattenedVerify, importJWK } from 'jose'
import { distinctPayloads } from '../discovery/card-canonical.js'
import type { DiscoverySnapshot } from '../discovery/discovery.js'
import { ARGUS_CAPABILITIES } from '../discovery/capabilities.js'
import { ARGUS_EXTENSION_URN } from '../argus/envelope.js'
import { CONTROL_EXTENSION_URN } from '../../schemas/card.js'
import type { FrontVersion } from './framing.js'
import { CAMPAIGN_METHODS } from './framing.js'
import type { SigningKey } from '../config/signing-key.js'

const MODES = ['application/json']

/** the card's name and version (the front door's spans name the agent by them: docs/design.md#tracing) */
export const GATEWAY_AGENT = { name: 'openoperator-gateway', version: '1.0.0' } as const

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
  const list: Array<Record<string, unknown>> = [{ uri: ARGUS_EXTENSION_URN, description: 'The Argus supervisor reads.' }]
  if (snap.mode !== 'controller') return list
  const operations: Record<string, string> = { cancel: 'tasks/cancel' }
  for (const [method, op] of Object.entries(CAMPAIGN_METHODS)) operations[op] = method
  list.push({
    uri: CONTROL_EXTENSION_URN,
    description: 'Campaign control through the gateway: leases, a fixed constraints envelope, every mutation single-shot on the gateway\'s ledger.',
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
    name: GATEWAY_AGENT.name,
    description: 'The OpenOperator gateway\'s A2A front door: the Argus reads, and campaign control with every guarantee of the gateway\'s REST interface.',
    version: GATEWAY_AGENT.version,
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

/**
 * the cards whose signatures are kept: a card varies with the remote's card and the version asked,
 * a few at a time; past this the memo starts again, and a card is signed anew (docs/design.md#bounded-maps)
 */
export const SIGNED_CARDS_KEPT = 8

type Signature = { protected: string; signature: string }

/**
 * The signer of the gateway's card, its key imported and proven once, before the gateway serves
 * (docs/design.md#front-door): a test signature that does not verify with the published key
 * throws, naming GATEWAY_CARD_SIGNING_KEY, so the start fails instead of every card request.
 * The last signatures per card are kept, so an unchanged card is signed once.
 */
export async function createCardSigner (key: SigningKey): Promise<CardSigner> {
  const header = { alg: key.alg, kid: key.kid, typ: 'JOSE' }
  const signOne = async (payload: string, privateKey: Awaited<ReturnType<typeof importJWK>>): Promise<Signature> => {
    const jws = await new FlattenedSign(new TextEncoder().encode(payload)).setProtectedHeader(header).sign(privateKey)
    return { protected: jws.protected!, signature: jws.signature }
  }
  let privateKey: Awaited<ReturnType<typeof importJWK>>
  try {
    privateKey = await importJWK(key.privateJwk as never, key.alg)
    const probe = 'openoperator-gateway: the card signing key proves itself'
    const sig = await signOne(probe, privateKey)
    await flattenedVerify({ ...sig, payload: base64url.encode(probe) }, await importJWK(key.publicJwk as never, key.alg))
  } catch (err) {
    throw new Error(`GATEWAY_CARD_SIGNING_KEY: the key cannot sign the card (${err instanceof Error ? err.message : 'unknown failure'}); give a private JWK whose halves agree and fit its alg`)
  }
  const memo = new Map<string, Signature[]>()
  return {
    sign: async (card) => {
      const payloads = distinctPayloads(card)
      const memoKey = payloads.map((p) => p.payload).join('\n')
      let sigs = memo.get(memoKey)
      if (sigs === undefined) {
        sigs = await Promise.all(payloads.map(async (p) => await signOne(p.payload, privateKey)))
        if (memo.size >= SIGNED_CARDS_KEPT) memo.clear()
        memo.set(memoKey, sigs)
      }
      return { ...card, signatures: sigs }
    }
  }
}
