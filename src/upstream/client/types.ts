// What goes into the upstream client and what comes out (src/upstream/client.ts), and the one
// exchange's request and answer its parts hand each other. Shapes only: every part of the client
// imports them, so they import nothing of it.
import type { Logger } from 'pino'
import type { RpcErrorObject } from '../../../schemas/jsonrpc.js'
import type { Hold } from '../byte-budget.js'
import type { UpstreamOutcome } from '../errors.js'

export interface UpstreamClientOptions {
  origin: string
  basePath: string
  secret: string | undefined
  authScheme: 'bearer' | 'x-api-key'
  caPem?: string | undefined
  connectTimeoutMs: number
  readTimeoutMs: number
  mutationTimeoutMs: number
  maxResponseBytes: number
  /** reads in flight plus reads waiting for a socket; past it a read is shed (docs/design.md#load-shedding) */
  readQueueMax?: number
  /** bytes of budgeted answers (`tasks/get`) held at once; past it an answer is shed */
  bodyBudgetBytes?: number
  logger: Logger
  /** observes every upstream exchange; `op` is the logical operation, never an advertised name */
  observe?: (op: string, outcome: UpstreamOutcome, seconds: number) => void
}

export type RpcResult =
  /** `date`: the answer's `Date` (ms since the epoch), when the call asked for it (`withDate`) and it is valid */
  | { ok: true; result: unknown; httpStatus: number; date?: number }
  | { ok: false; error: RpcErrorObject; httpStatus: number }

export interface RpcCall {
  method: string
  params: Record<string, unknown>
  /** logical operation for logs and metrics */
  op: string
  kind: 'read' | 'mutation'
  id?: string
  maxBytes?: number
  headers?: Record<string, string>
  /** absolute deadline (ms since epoch) bounding the whole call, retry included */
  deadline?: number
  /** reserve the answer's bytes against the body budget while it is read and parsed (large answers: `tasks/get`) */
  budgeted?: boolean
  /** a read whose answer's `Date` measures the remote's clock (a lease read: docs/design.md#one-clock) */
  withDate?: boolean
}

export interface GetResult { status: number; body: Buffer; headers: Record<string, string | string[] | undefined> }

/** a discovery GET: the card paths only, with the request headers discovery needs (A2A-Version, If-None-Match) */
export interface GetOptions { op: string; maxBytes: number; deadline?: number; headers?: Record<string, string> }

export interface UpstreamClient {
  rpc: (call: RpcCall) => Promise<RpcResult>
  /** GET `<A2A base><suffix>` (discovery only). 3xx throws `redirect`; other statuses return */
  get: (suffix: string, opts: GetOptions) => Promise<GetResult>
  close: () => Promise<void>
}

/** one exchange's answer, its body read whole under the cap */
export interface Exchange { status: number; body: Buffer; headers: Record<string, string | string[] | undefined>; date?: number | undefined }

/**
 * one exchange's request; `headers` complete, the credential included (rpcHeaders, withAuth:
 * src/upstream/client/state.ts). `withHeaders`: the answer's headers wanted (a card fetch reads its
 * ETag and Cache-Control); a JSON-RPC read's are not read
 */
export interface ExchangeRequest { method: 'GET' | 'POST'; path: string; body?: string; headers: Record<string, string>; maxBytes: number; deadline: number; reset?: boolean; hold?: Hold; withDate?: boolean; withHeaders?: boolean }
