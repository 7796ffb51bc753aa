// The front door's state and what its methods share (docs/api.md#a2a-front-door): the core it
// serves on, handed in once and never changed — the reader, the control plane, the ledger's
// front-door sends, the discovery — and the few rules every method keeps alike: a refusal in
// A2A's own terms, the control scope, a mutation answered through the control pipeline.
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import type { ArgusReader } from '../argus/reader.js'
import type { ControlPlane } from '../control/plane.js'
import { GatewayError } from '../core/errors.js'
import type { Discovery } from '../discovery/discovery.js'
import type { FrontSendStore, MutationOperation } from '../ledger/types.js'
import { protocolError, rpcErrorOfBody, type RpcError } from './errors.js'

export type Obj = Record<string, unknown>
export const isRecord = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface FrontDoorDeps {
  argus: Pick<ArgusReader, 'read' | 'getTask'>
  control: Pick<ControlPlane, 'mutate' | 'readControl' | 'grants'>
  ledger: FrontSendStore
  discovery: Pick<Discovery, 'capability' | 'confirm'>
  readTimeoutMs: number
  logger: Logger
  now?: () => number
}

/** what every method of the door reads: its dependencies, its clock settled */
export interface DoorState extends FrontDoorDeps {
  now: () => number
}

/** an answer in A2A's own terms (a JSON-RPC error), not a contract code's */
export class Refusal extends Error {
  constructor (readonly rpc: RpcError) { super(rpc.message) }
}
export const refuse = (code: number, message: string, data?: Obj): Refusal => new Refusal(protocolError(code, message, data))

/** the remote's context id where it named one; none at all where it did not (A2A v1.0's Task leaves it optional) */
export const contextOf = (c: unknown): { contextId?: string } => typeof c === 'string' && c !== '' ? { contextId: c } : {}

export const needs = (caller: Caller, scope: 'control'): void => {
  if (!caller.scopes.includes(scope)) throw new GatewayError('forbidden', { message: `This method requires the ${scope} scope.` })
}

/** a mutation's answer: its result, or its stored error as a JSON-RPC error */
export async function mutate (s: DoorState, caller: Caller, operation: MutationOperation, campaignId: string, body: Obj, taskId?: string): Promise<Obj> {
  const a = await s.control.mutate({ operation, campaignId, caller, body, idempotencyKey: undefined, taskId })
  if (a.httpStatus >= 400) throw new Refusal(rpcErrorOfBody(a.body))
  return a.body as Obj
}
