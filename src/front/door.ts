// The A2A front door's JSON-RPC core (docs/api.md#a2a-front-door): one request in, one answer
// out, no Fastify. It serves on the gateway's own core and nothing else: the Argus reads through
// the reader (coalesced), tasks through the reader's tasks/get and the REST projection's rules,
// every mutation through the control pipeline (lease, constraints envelope, single-shot on the
// ledger), and de-duplicates each `message/send` by (caller identity, message id) in the ledger,
// where each submission's task gets its owner: a task is shown and cancelled to that caller alone.
// Grants per campaign are the control plane's one check (docs/design.md#grants), asked before
// anything is written or sent; a task of a campaign the caller may not read does not exist for it.
//
// The door is an assembly over one state object (door-state.ts): dispatch.ts frames the request and
// picks its method, sends.ts serves message/send, tasks.ts tasks/get and tasks/cancel,
// campaign-methods.ts the campaign methods.
import { handle, type FrontAnswer, type FrontInput } from './dispatch.js'
import type { DoorState, FrontDoorDeps } from './door-state.js'

export type { FrontDoorDeps } from './door-state.js'
export type { FrontAnswer, FrontInput } from './dispatch.js'
export { sanitisedTask } from './tasks.js'

export function createFrontDoor (d: FrontDoorDeps): { handle: (input: FrontInput) => Promise<FrontAnswer> } {
  const door: DoorState = { ...d, now: d.now ?? Date.now }
  return { handle: async (input) => await handle(door, input) }
}
