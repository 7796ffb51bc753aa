// The simulator's public types: what tests configure, inject and inspect.
// Kept apart from the implementation so the gateway's tests can import types without
// pulling in Fastify.

export type SimulatorProfile = 'openoperator' | 'fasta2a' | 'a2a-js'

export type AuthScheme = 'bearer' | 'x-api-key'

export interface SimulatorOptions {
  profile?: SimulatorProfile
  /** When set, POST /a2a/ requires it (401 JSON otherwise). */
  secret?: string
  authSchemes?: AuthScheme[]
  argusEnabled?: boolean
  /** 40-hex commit served by GET /health. */
  sourceSha?: string
  tls?: { key: string | Buffer; cert: string | Buffer }
  host?: string
  port?: number
  /** tasks/get polls a new task needs before it is completed (openoperator/fasta2a, and a2a-js without blocking). */
  taskSteps?: number
  card?: CardTransform
}

export type CardTransform = (card: Record<string, unknown>) => Record<string, unknown>

export interface ReceivedRequest {
  method: string
  /** The request target as sent: path plus query string, if any. */
  path: string
  headers: Record<string, string>
  rawBody: string
  json?: unknown
  at: number
}

export type FaultTarget =
  | 'agent-card'
  | 'agent-json'
  | 'card'
  | 'rpc'
  | { rpcMethod: string }
  | { argusOperation: string }
  | 'health'

export type ArgusErrorCode =
  | 'invalid_argus_envelope'
  | 'argus_supervisor_disabled'
  | 'unsupported_argus_operation'
  | 'argus_supervisor_unavailable'

export type ArgusErrorPlacement = 'rpc-data' | 'rpc-message' | 'payload-string' | 'payload-object' | 'failed-task'

export type Fault =
  | { kind: 'delay'; ms: number }
  | { kind: 'status'; status: number; body?: string; contentType?: string }
  | { kind: 'drop' }
  | { kind: 'redirect'; status?: 301 | 302 | 307 | 308; location: string }
  | { kind: 'oversized'; bytes: number; mode: 'chunked' | 'content-length' }
  | { kind: 'rpc-error'; code: number; message: string; data?: unknown }
  | { kind: 'wrong-id' }
  | { kind: 'invalid-json' }
  | { kind: 'argus-error'; code: ArgusErrorCode; placement: ArgusErrorPlacement }
  | { kind: 'task-states'; states: string[]; final?: 'payload' | { error: string } }

export interface RpcCall {
  method: string
  id: unknown
  // The params are whatever the client sent; tests index into them freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  params: any
  headers: Record<string, string>
}

export interface Simulator {
  /** Origin, e.g. 'http://127.0.0.1:41234' (no path). */
  url: string
  secret: string | undefined
  received: ReceivedRequest[]
  rpcCalls(): RpcCall[]
  inject(target: FaultTarget, fault: Fault, times?: number): void
  clearFaults(): void
  setCard(transform: CardTransform | undefined): void
  addTask(task: Record<string, unknown>): void
  getTask(id: string): Record<string, unknown> | undefined
  reset(): void
  close(): Promise<void>
}
