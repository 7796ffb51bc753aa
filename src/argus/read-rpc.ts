// One read on the remote (docs/design.md#argus-reads): the call and how its failures become
// contract errors, written once for every read — the Argus reads, `tasks/get`, and the control
// plane's `read_control` and `request_status`. A call that throws is readFailure's
// (read-errors.ts); -32009 is a refused protocol version (src/discovery/version-refused.ts);
// -32601 marks the caller's capability missing and answers capability_unavailable; any other
// error is the caller's to name (a task not found, an Argus code), else upstream_rejected.
// Reads only: a mutation's failures mean something else (ambiguity, docs/design.md#outcomes).
import { RPC_CODES, type RpcErrorObject } from '../../schemas/jsonrpc.js'
import { GatewayError } from '../core/errors.js'
import type { CapabilityName } from '../discovery/capabilities.js'
import type { Discovery } from '../discovery/discovery.js'
import { versionRefused } from '../discovery/version-refused.js'
import type { A2aWire } from '../upstream/a2a-wire.js'
import type { RpcCall, RpcResult, UpstreamClient } from '../upstream/client.js'
import { readFailure } from './read-errors.js'

export interface ReadRpc {
  /** the call, built on `wire` (a read: retried once where nothing was sent, never a mutation) */
  call: Omit<RpcCall, 'kind'>
  /** marked missing when the remote answers -32601 */
  capability: CapabilityName
  /** named in every error this read answers */
  requestId?: string | undefined
  /** capability_unavailable's missing prerequisites on -32601 (none by default) */
  missingOnNotFound?: string[]
  /** the remote's other errors: the caller's own contract error, or undefined for upstream_rejected */
  rejected?: (error: RpcErrorObject) => GatewayError | undefined
  /** a successful answer's `Date`, when the call asked for it (`withDate`: a lease read measures the remote's clock) */
  dated?: (dateMs: number) => void
}

const READ = { kind: 'read' } as const

type ReadDeps = { client: UpstreamClient; discovery: Discovery }

/** the remote's result, or the contract error its failure means */
export async function readRpc (d: ReadDeps, wire: A2aWire, read: ReadRpc): Promise<unknown> {
  let r: RpcResult
  try {
    r = await sendRead(d, read)
  } catch (err) {
    throw readFailure(err, read.requestId)
  }
  return readAnswer(d, wire, read, r)
}

/**
 * readRpc in two halves, for a caller on the hot path that awaits the call in its own async frame
 * rather than in readRpc's as well (fetchTask: docs/design.md#hot-path): the call, whose failure
 * the caller passes to readFailure; then its answer, the result or the contract error it means
 */
export function sendRead (d: ReadDeps, read: ReadRpc): Promise<RpcResult> {
  // Object.assign, not `{ ...read.call, kind: 'read' }`: on Node 20's V8 a spread followed by more
  // properties takes a slow path, ~19 k instructions and ~0.2 KB promoted a read (docs/design.md#hot-path)
  return d.client.rpc(Object.assign({}, read.call, READ))
}

export function readAnswer (d: ReadDeps, wire: A2aWire, read: ReadRpc, r: RpcResult): unknown {
  const { requestId } = read
  if (r.ok) {
    if (r.date !== undefined) read.dated?.(r.date)
    return r.result
  }
  const refused = versionRefused(d.discovery, wire, r, requestId)
  if (refused !== undefined) throw refused
  if (r.error.code === RPC_CODES.methodNotFound) {
    d.discovery.markMethodNotFound(read.capability)
    throw new GatewayError('capability_unavailable', { requestId, missingPrerequisites: read.missingOnNotFound })
  }
  throw read.rejected?.(r.error) ?? new GatewayError('upstream_rejected', { requestId })
}
