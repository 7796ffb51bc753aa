// Which A2A protocol generation to speak, chosen from the card alone (docs/design.md#protocol-versions),
// never from the server's name. A v1.0 card lists `supportedInterfaces[]`: the gateway takes the
// JSON-RPC interfaces at its own endpoint (`<A2A base>/`) and the highest version both sides
// speak; the others it offers are kept, to fall back to when the remote refuses that one. A
// card without them is a v0.x card, spoken as 0.3. Every URL is compared, never followed.
import type { ProtocolVersion } from '../upstream/a2a-wire.js'

export const SPOKEN_VERSIONS: readonly ProtocolVersion[] = ['1.0', '0.3']

export interface CardInterface { binding: string; version: string; url: string; atEndpoint: boolean }

export interface ProtocolChoice {
  /** undefined: nothing the gateway can speak at its endpoint */
  version: ProtocolVersion | undefined
  /** every version both sides speak at the endpoint, the preferred first (a refused one falls back to the next) */
  offered: ProtocolVersion[]
  reason: string
  /** the card's interfaces as read (empty for a v0.x card) */
  interfaces: CardInterface[]
  /** some URL of the card (top-level or an interface's) names another origin */
  urlMismatch: boolean
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `0.2.5`, `0.3` → 0.3 (one wire for the v0.x family); `1.0`, `1.0.1` → 1.0; anything else is not spoken */
export function spokenVersion (v: unknown): ProtocolVersion | undefined {
  if (typeof v !== 'string') return undefined
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(v.trim())
  if (m === null) return undefined
  if (m[1] === '0') return '0.3'
  if (m[1] === '1' && m[2] === '0') return '1.0'
  return undefined
}

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}
const pathOf = (url: string): string | undefined => {
  try {
    return new URL(url).pathname.replace(/\/+$/, '')
  } catch {
    return undefined
  }
}

export function chooseProtocol (card: Record<string, unknown>, origin: string, basePath: string): ProtocolChoice {
  const endpoint = `${origin}${basePath}/`
  const topUrl = card.url
  let urlMismatch = topUrl !== undefined && (typeof topUrl !== 'string' || originOf(topUrl) !== origin)
  const listed = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : undefined

  if (listed === undefined) {
    const v = card.protocolVersion
    const spoken = v === undefined ? '0.3' : spokenVersion(v)
    if (spoken === undefined) return { version: undefined, offered: [], reason: `the card declares protocolVersion ${String(v)}, which the gateway does not speak (it speaks ${SPOKEN_VERSIONS.join(' and ')})`, interfaces: [], urlMismatch }
    return { version: spoken, offered: [spoken], reason: `a card without supportedInterfaces (protocolVersion ${typeof v === 'string' ? v : 'absent'}): A2A ${spoken}`, interfaces: [], urlMismatch }
  }

  const interfaces: CardInterface[] = []
  for (const i of listed) {
    if (!isRecord(i) || typeof i.url !== 'string') {
      urlMismatch = true
      continue
    }
    if (originOf(i.url) !== origin) urlMismatch = true
    interfaces.push({
      binding: typeof i.protocolBinding === 'string' ? i.protocolBinding : '',
      version: typeof i.protocolVersion === 'string' ? i.protocolVersion : '',
      url: i.url,
      // the endpoint's path; another origin at that path is reported (urlMismatch), as a v0.x
      // card's url is, and still never called: traffic goes to the configured origin only
      atEndpoint: pathOf(i.url) === basePath.replace(/\/+$/, '')
    })
  }
  const jsonRpc = interfaces.filter((i) => i.binding.toUpperCase() === 'JSONRPC' && i.atEndpoint)
  if (jsonRpc.length === 0) {
    return { version: undefined, offered: [], reason: `the card advertises no JSON-RPC interface at ${endpoint}`, interfaces, urlMismatch }
  }
  const offered = SPOKEN_VERSIONS.filter((v) => jsonRpc.some((i) => spokenVersion(i.version) === v))
  const best = offered[0]
  if (best !== undefined) {
    return { version: best, offered, reason: `the card's JSON-RPC interface at ${endpoint} speaks A2A ${best}, the highest version both sides speak`, interfaces, urlMismatch }
  }
  const named = [...new Set(jsonRpc.map((i) => i.version || '(none)'))].join(', ')
  return { version: undefined, offered, reason: `the card's JSON-RPC interface at ${endpoint} speaks A2A ${named}; the gateway speaks ${SPOKEN_VERSIONS.join(' and ')}`, interfaces, urlMismatch }
}
