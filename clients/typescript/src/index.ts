// A typed client for the openoperator-gateway REST API: openapi-fetch over the types that
// openapi-typescript generated from the gateway's own OpenAPI document (./schema.d.ts, written
// by `npm run client:generate` at the repository root; never edit it by hand).
import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { components, operations, paths } from './schema.js'

export type { components, operations, paths }

type Schemas = components['schemas']
export type Lease = Schemas['Lease']
export type Control = Schemas['Control']
/** a mutation record (the document's `Request`; renamed here so it does not shadow fetch's Request) */
export type RequestRecord = Schemas['Request']
export type RequestList = Schemas['RequestList']
export type UnresolvedRequestList = Schemas['UnresolvedRequestList']
export type Upstream = Schemas['Upstream']
export type ArgusRead = Schemas['ArgusRead']
export type TaskProjection = Schemas['TaskProjection']
/** a task's A2A state, v0.3's names whatever the remote speaks; `unknown` for a name outside them */
export type TaskState = Schemas['TaskState']
export type LeaseAnswer = Schemas['LeaseAnswer']
export type ReleasedAnswer = Schemas['ReleasedAnswer']
export type SubmittedAnswer = Schemas['SubmittedAnswer']
export type AcceptedAnswer = Schemas['AcceptedAnswer']
export type CanceledAnswer = Schemas['CanceledAnswer']
export type PrunedAnswer = Schemas['PrunedAnswer']
export type ErrorDetail = Schemas['ErrorDetail']
/** every failure's body: `{ error: { code, message, retryable, requestId?, missingPrerequisites?, reconcile? } }` */
export interface ErrorBody { error: ErrorDetail }

export type OperationId = keyof operations
type Responses<Op extends OperationId> = operations[Op]['responses']
type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 414 | 417 | 422 | 429 | 431 | 500 | 501 | 502 | 503 | 504
type CodeIn<R> = R extends { content: { 'application/json': { error: { code: infer C } } } } ? C : never
/** the error codes an operation can answer, e.g. `ErrorCodeOf<'claimControl'>` */
export type ErrorCodeOf<Op extends OperationId> = { [S in keyof Responses<Op>]: S extends ErrorStatus ? CodeIn<Responses<Op>[S]> : never }[keyof Responses<Op>]

export interface GatewayClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** the gateway's origin (and path prefix, if an ingress adds one), e.g. `https://gateway.example` */
  baseUrl: string
  /** a caller token (GATEWAY_CALLERS): sent as `Authorization: Bearer <token>` on every request */
  token: string
}

export type GatewayClient = Client<paths>

/**
 * The client: `GET`, `POST` on the gateway's paths, each typed from the document — path and
 * query parameters, the body, every success answer as `data` and every error body as `error`
 * (its `error.code` one of the codes that operation can answer).
 */
export function createGatewayClient ({ baseUrl, token, ...options }: GatewayClientOptions): GatewayClient {
  const client = createClient<paths>({ ...options, baseUrl: baseUrl.replace(/\/+$/, '') })
  client.use({
    onRequest ({ request }) {
      request.headers.set('authorization', `Bearer ${token}`)
      return request
    }
  })
  return client
}

/** whether an answer is the stored answer of an earlier request with the same request id (nothing was sent again) */
export const isReplay = (response: Response): boolean => response.headers.get('idempotent-replayed') === 'true'

/** the two bodies a mutation's request id may replay instead of the operation's own answer */
export type ReplayBody = RequestRecord | PrunedAnswer

/**
 * A mutation's success body, told apart. `data` of a mutation is one documented union:
 *
 * - `answer`: the operation's own answer (LeaseAnswer, SubmittedAnswer, …), first time or replayed;
 * - `resolved`: the request id's outcome was ambiguous (504 ambiguous_write) and has since been
 *   resolved by reconcile or an admin: a replay answers its Request record, whose `state` is
 *   `applied` or `not_applied` (then nothing was done: send the work again under a new request id);
 * - `pruned`: an applied request id whose record retention pruned: its final state only.
 */
export type MutationResult<D> =
  | { kind: 'answer', answer: Exclude<D, ReplayBody> }
  | { kind: 'resolved', record: RequestRecord }
  | { kind: 'pruned', pruned: PrunedAnswer }

/** narrows a mutation's `data` (see MutationResult): a Request record has `caller`, a PrunedAnswer `pruned: true`, an answer neither */
export function mutationResult<D extends object> (data: D): MutationResult<D> {
  if ('caller' in data) return { kind: 'resolved', record: data as unknown as RequestRecord }
  if ('pruned' in data && data.pruned === true) return { kind: 'pruned', pruned: data as unknown as PrunedAnswer }
  return { kind: 'answer', answer: data as Exclude<D, ReplayBody> }
}
