// The canonical forms of an agent card (docs/design.md#signed-cards): the bytes a signature
// covers. A2A v1.0 §8.4.1 defines one — RFC 8785 over the card's ProtoJSON form, a field holding
// its default (false, 0, "", an empty list or object) omitted unless the proto (a2a.proto's
// AgentCard and what it holds, tabled below) marks it REQUIRED or `optional` — but the SDKs that
// sign and verify cards compute neighbours of it, so three forms are named:
// - `proto`: §8.4.1 as written; members the proto does not define are not part of it.
// - `sdk`: what @a2a-js/sdk 1.3 computes (`canonicalizeAgentCard`: the ProtoJSON form, then every
//   null, "", [] and {} dropped, REQUIRED or not, map values and Struct contents included).
// - `whole`: the whole card, every member kept, then the same drop — the form the gateway signed
//   before §8.4.1 was read closely, and the one that covers v0.3's members (`url`,
//   `preferredTransport`, `security`).
// A card deeper than MAX_CARD_DEPTH has no canonical form: every walk here and in canonicalize
// recurses, and no card needs that depth.
import canonicalize from 'canonicalize'
import { deeperThan } from '../core/value-depth.js'

export const CARD_FORMS = ['sdk', 'proto', 'whole'] as const
export type CardForm = typeof CARD_FORMS[number]

export const MAX_CARD_DEPTH = 64

type Obj = Record<string, unknown>
const isRecord = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** a field: REQUIRED, `optional` (or a oneof member: it has presence) or plain; its type: a scalar, a message, a Struct, a list or a map of one */
type Field = [presence: 'R' | 'O' | '-', type: string]
const s: Field = ['-', 's']
const R: Field = ['R', 's']
const O: Field = ['O', 's']

/** a2a.proto (A2A v1.0) as the card uses it, by JSON name; `[X]` a repeated X, `{X}` a map of X, `s` a scalar */
const PROTO: Readonly<Record<string, Readonly<Record<string, Field>>>> = {
  AgentCard: {
    name: R,
    description: R,
    supportedInterfaces: ['R', '[AgentInterface]'],
    provider: ['-', 'AgentProvider'],
    version: R,
    documentationUrl: O,
    capabilities: ['R', 'AgentCapabilities'],
    securitySchemes: ['-', '{SecurityScheme}'],
    securityRequirements: ['-', '[SecurityRequirement]'],
    defaultInputModes: ['R', '[s]'],
    defaultOutputModes: ['R', '[s]'],
    skills: ['R', '[AgentSkill]'],
    iconUrl: O
  },
  AgentInterface: { url: R, protocolBinding: R, tenant: s, protocolVersion: R },
  AgentProvider: { url: R, organization: R },
  AgentCapabilities: { streaming: O, pushNotifications: O, extensions: ['-', '[AgentExtension]'], extendedAgentCard: O },
  AgentExtension: { uri: s, description: s, required: s, params: ['-', 'Struct'] },
  AgentSkill: {
    id: R,
    name: R,
    description: R,
    tags: ['R', '[s]'],
    examples: ['-', '[s]'],
    inputModes: ['-', '[s]'],
    outputModes: ['-', '[s]'],
    securityRequirements: ['-', '[SecurityRequirement]']
  },
  SecurityRequirement: { schemes: ['-', '{StringList}'] },
  StringList: { list: ['-', '[s]'] },
  SecurityScheme: {
    apiKeySecurityScheme: ['O', 'APIKeySecurityScheme'],
    httpAuthSecurityScheme: ['O', 'HTTPAuthSecurityScheme'],
    oauth2SecurityScheme: ['O', 'OAuth2SecurityScheme'],
    openIdConnectSecurityScheme: ['O', 'OpenIdConnectSecurityScheme'],
    mtlsSecurityScheme: ['O', 'MutualTlsSecurityScheme']
  },
  APIKeySecurityScheme: { description: s, location: R, name: R },
  HTTPAuthSecurityScheme: { description: s, scheme: R, bearerFormat: s },
  OAuth2SecurityScheme: { description: s, flows: ['R', 'OAuthFlows'], oauth2MetadataUrl: s },
  OpenIdConnectSecurityScheme: { description: s, openIdConnectUrl: R },
  MutualTlsSecurityScheme: { description: s },
  OAuthFlows: {
    authorizationCode: ['O', 'AuthorizationCodeOAuthFlow'],
    clientCredentials: ['O', 'ClientCredentialsOAuthFlow'],
    implicit: ['O', 'ImplicitOAuthFlow'],
    password: ['O', 'PasswordOAuthFlow'],
    deviceCode: ['O', 'DeviceCodeOAuthFlow']
  },
  AuthorizationCodeOAuthFlow: { authorizationUrl: R, tokenUrl: R, refreshUrl: s, scopes: ['R', '{s}'], pkceRequired: s },
  ClientCredentialsOAuthFlow: { tokenUrl: R, refreshUrl: s, scopes: ['R', '{s}'] },
  ImplicitOAuthFlow: { authorizationUrl: s, refreshUrl: s, scopes: ['-', '{s}'] },
  PasswordOAuthFlow: { tokenUrl: s, refreshUrl: s, scopes: ['-', '{s}'] },
  DeviceCodeOAuthFlow: { deviceAuthorizationUrl: R, tokenUrl: R, refreshUrl: s, scopes: ['R', '{s}'] }
}

/** a proto field's other JSON name (`supported_interfaces`), which ProtoJSON readers accept too */
const protoName = (json: string): string => json.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

const isDefault = (v: unknown): boolean =>
  v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0)

/** a value of `type` in ProtoJSON form: a message's own fields only, a list's and a map's entries each in their form */
function valueOf (v: unknown, type: string): unknown {
  if (type.startsWith('[')) return Array.isArray(v) ? v.map((x) => valueOf(x, type.slice(1, -1))) : v
  if (type.startsWith('{')) return isRecord(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, valueOf(x, type.slice(1, -1))])) : v
  const fields = PROTO[type]
  if (fields === undefined || !isRecord(v)) return v
  const out: Obj = {}
  for (const [name, [presence, fieldType]] of Object.entries(fields)) {
    const raw = Object.hasOwn(v, name) ? v[name] : Object.hasOwn(v, protoName(name)) ? v[protoName(name)] : undefined
    // null is unset, to ProtoJSON as to the proto; a default is omitted unless REQUIRED or set with presence
    if (raw === undefined || raw === null) continue
    const x = valueOf(raw, fieldType)
    if (presence === '-' && isDefault(x)) continue
    out[name] = x
  }
  return out
}

/** @a2a-js/sdk's cleanEmpty: null, undefined, "", and lists or objects left empty are dropped, at every depth */
function dropEmpty (v: unknown): unknown {
  if (v === null || v === '' || v === undefined) return undefined
  if (Array.isArray(v)) {
    const kept = v.map(dropEmpty).filter((x) => x !== undefined)
    return kept.length > 0 ? kept : undefined
  }
  if (isRecord(v)) {
    const out: Obj = {}
    for (const [k, x] of Object.entries(v)) {
      const kept = dropEmpty(x)
      if (kept !== undefined) out[k] = kept
    }
    return Object.keys(out).length > 0 ? out : undefined
  }
  return v
}

/** a card too deep to put in canonical form */
export class CardTooDeep extends Error {
  constructor () { super(`the card nests deeper than ${MAX_CARD_DEPTH} levels`) }
}

/** the card as `form` covers it, without `signatures` */
export function coveredCard (card: Obj, form: CardForm): Obj {
  if (deeperThan(card, MAX_CARD_DEPTH)) throw new CardTooDeep()
  const { signatures: _signatures, ...rest } = card
  if (form === 'whole') return (dropEmpty(rest) ?? {}) as Obj
  const proto = valueOf(rest, 'AgentCard') as Obj
  return form === 'proto' ? proto : (dropEmpty(proto) ?? {}) as Obj
}

/** the bytes a signature in `form` signs: RFC 8785 of the covered card */
export const cardPayload = (card: Obj, form: CardForm): string => canonicalize(coveredCard(card, form)) ?? '{}'

/** each form's payload, the forms whose bytes are the same listed once (the first form's name kept) */
export function distinctPayloads (card: Obj): Array<{ form: CardForm; payload: string }> {
  const out: Array<{ form: CardForm; payload: string }> = []
  for (const form of CARD_FORMS) {
    const payload = cardPayload(card, form)
    if (!out.some((p) => p.payload === payload)) out.push({ form, payload })
  }
  return out
}
