// A -32009 (VersionNotSupported, A2A v1.0) on a read (docs/design.md#protocol-versions): the
// remote refuses the protocol version its card advertised. It is a 503 naming the version, and
// the discovery stops speaking that version for a back-off, another the card offers meanwhile
// (src/discovery/version-backoff.ts; a refresh starts at once). On a version that defines no
// such code (v0.3) it is none of this: the caller's ordinary error (502 for a read). A mutation
// answered -32009 stays ambiguous (docs/design.md#outcomes): only the listed codes prove nothing
// was applied.
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { GatewayError } from '../core/errors.js'
import type { A2aWire } from '../upstream/a2a-wire.js'
import type { RpcResult } from '../upstream/client.js'
import type { Discovery } from './discovery.js'
import { REFUSAL_DEFINED } from './version-backoff.js'

export function versionRefused (discovery: Discovery, wire: A2aWire, r: Extract<RpcResult, { ok: false }>, requestId?: string): GatewayError | undefined {
  if (r.error.code !== RPC_CODES.versionNotSupported || !REFUSAL_DEFINED.has(wire.version)) return undefined
  discovery.markVersionRefused(wire.version)
  return new GatewayError('capability_unavailable', {
    requestId,
    missingPrerequisites: [`the remote does not accept A2A protocol version ${wire.version} (-32009), which its card advertises`]
  })
}
