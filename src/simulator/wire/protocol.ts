// Which A2A protocol version a request is served in, as an @a2a-js/sdk 1.x server picks it
// from the `A2A-Version` header, and the v1.0 error bodies (a google.rpc.ErrorInfo in
// `data`) that only the v1.0 wire carries. A v0.3 simulator never looks at the header.
import type { RpcErrorBody } from '../rpc/outcome.js'
import type { SimulatorProtocol } from '../types.js'

export const A2A_VERSION_HEADER = 'a2a-version'

/** The wire a request is served in; 'unsupported' carries the version as the client named it. */
export type Wire = '0.3' | '1.0' | { unsupported: string }

/**
 * The SDK's JSON-RPC route: with compatibility on, an absent header or exactly 0.3 takes the
 * v0.3 handler; anything else must be a version the card lists. An absent header means 0.3.
 */
export function rpcWire (protocol: SimulatorProtocol, header: string | undefined): Wire {
  if (protocol === 'v0.3') return '0.3'
  const requested = header === undefined || header === '' ? '0.3' : header
  if (protocol === 'dual' && requested === '0.3') return '0.3'
  return requested === '1.0' ? '1.0' : { unsupported: requested }
}

/**
 * The SDK's card route is laxer: with compatibility on, any 0.x at or above 0.3 (or no
 * header) gets the v0.3 card, everything else the v1.0 one; a v1.0-only server always
 * answers its v1.0 card.
 */
export function cardWire (protocol: SimulatorProtocol, header: string | undefined): '0.3' | '1.0' {
  if (protocol === 'v0.3') return '0.3'
  if (protocol === 'v1.0') return '1.0'
  return isLegacyVersion(header) ? '0.3' : '1.0'
}

function isLegacyVersion (header: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true
  const [majorText, minorText] = header.trim().split('.')
  const major = Number.parseInt(majorText ?? '', 10)
  const minor = minorText === undefined ? 0 : Number.parseInt(minorText, 10)
  if (!Number.isFinite(major) || major < 0 || !Number.isFinite(minor) || minor < 0) return false
  return major === 0 && minor >= 3
}

/** The versions the card's interfaces list, in the card's order. */
export function supportedVersions (protocol: SimulatorProtocol): string[] {
  return protocol === 'dual' ? ['1.0', '0.3'] : protocol === 'v1.0' ? ['1.0'] : ['0.3']
}

export type ErrorReason = 'VERSION_NOT_SUPPORTED' | 'TASK_NOT_FOUND' | 'TASK_NOT_CANCELABLE' | 'INVALID_PARAMS'

/** An A2A v1.0 error: its JSON-RPC code, message, and one ErrorInfo naming the reason. */
export function v1Error (code: number, message: string, reason: ErrorReason): RpcErrorBody {
  return { code, message, data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }] }
}

export function versionNotSupported (requested: string, protocol: SimulatorProtocol): RpcErrorBody {
  const message = `The requested A2A protocol version '${requested}' is not supported. Supported versions: ${supportedVersions(protocol).join(', ')}`
  return v1Error(-32009, message, 'VERSION_NOT_SUPPORTED')
}

export function invalidParamsV1 (message: string): RpcErrorBody {
  return v1Error(-32602, message, 'INVALID_PARAMS')
}
