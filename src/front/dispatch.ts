// The front door's dispatch (docs/api.md#a2a-front-door): one JSON-RPC request's text in, its
// answer's text out. Framing, the version spoken and the method's name are checked first
// (framing.ts), then the logical method is served by its module — sends, tasks, campaign methods —
// or refused in A2A's own terms; every error is written in the caller's generation (errors.ts).
import type { Caller } from '../../schemas/callers.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { MAX_BODY_DEPTH } from '../control/rules.js'
import { GatewayError } from '../core/errors.js'
import { deeperThan } from '../core/value-depth.js'
import { campaign, CAMPAIGN_MUTATIONS } from './campaign-methods.js'
import { Refusal, refuse, type DoorState, type Obj } from './door-state.js'
import { invalidField as invalid, rpcErrorOf, wireError, type RpcError } from './errors.js'
import { frame, logicalOf, shapeOf, versionOf, type FrontVersion, type Logical, type RpcId } from './framing.js'
import { send } from './sends.js'
import { cancel, getTask } from './tasks.js'
import { sendResultOut, taskOut } from './wire.js'

export interface FrontInput {
  /** the body as received */
  text: string
  /** the A2A-Version header */
  version: string | string[] | undefined
  caller: Caller
  /** charges a mutation to the caller's control budget, as REST's mutation routes are charged; throws `rate_limited` past it */
  chargeControl?: () => Promise<void>
}

export interface FrontAnswer {
  /** the JSON-RPC answer's text */
  body: string
  /** the logical method for metrics (a bounded set), and the outcome: ok, or the error's contract or protocol code */
  rpcMethod: string
  outcome: string
  /** the JSON-RPC error code of a refusal (traces) */
  rpcErrorCode?: number
  /** what the request's span reads (docs/design.md#tracing): the version spoken, the params as sent, the result */
  trace?: { version: FrontVersion; params?: Obj; result?: Obj }
}

const noCharge = async (): Promise<void> => {}

async function dispatch (s: DoorState, caller: Caller, logical: Logical, params: Obj, v: FrontVersion, charge: () => Promise<void>): Promise<Obj> {
  // a mutation is charged to the control budget before anything else of it is read (docs/design.md#rate-limits)
  if (logical === 'cancel' || CAMPAIGN_MUTATIONS[logical] !== undefined) await charge()
  switch (logical) {
    case 'send': return sendResultOut(await send(s, caller, params, v, charge), v)
    case 'get': return taskOut(await getTask(s, caller, params), v)
    case 'cancel': return taskOut(await cancel(s, caller, params), v)
    case 'stream':
    case 'resubscribe':
      throw refuse(RPC_CODES.unsupportedOperation, 'Streaming is not served: the card says streaming false; use the blocking send and tasks/get.')
    case 'push':
      throw refuse(RPC_CODES.pushNotificationNotSupported, 'Push notifications are not supported.')
    case 'extendedCard':
      // A2A v1.0 §3.3.4: a card that does not declare capabilities.extendedAgentCard answers
      // UnsupportedOperation; v0.3 has only ExtendedAgentCardNotConfigured for it
      throw v === '1.0'
        ? refuse(RPC_CODES.unsupportedOperation, 'The gateway\'s card declares no extended agent card (capabilities.extendedAgentCard).')
        : refuse(RPC_CODES.extendedAgentCardNotConfigured, 'The gateway has no extended agent card.')
    case 'list':
      throw refuse(RPC_CODES.unsupportedOperation, 'Listing tasks is not served.')
    default:
      return await campaign(s, caller, logical, params)
  }
}

/** the answer's text, its error written in the caller's generation (errors.ts) */
const answer = (id: RpcId | null, r: { result: Obj } | { error: RpcError }, shape: FrontVersion): string =>
  JSON.stringify({ jsonrpc: '2.0', id, ...('error' in r ? { error: wireError(r.error, shape) } : r) })

/** one request in, one answer out: never a throw, whatever the request held */
export async function handle (s: DoorState, input: FrontInput): Promise<FrontAnswer> {
  const shape = shapeOf(input.version)
  const framed = frame(input.text)
  if (!framed.ok) return { body: answer(framed.id, { error: framed.error }, shape), rpcMethod: 'invalid', outcome: String(framed.error.code), rpcErrorCode: framed.error.code }
  const { id, method, params } = framed.req
  const version = versionOf(input.version)
  if (typeof version !== 'string') return { body: answer(id, { error: version }, shape), rpcMethod: 'invalid', outcome: String(version.code), rpcErrorCode: version.code }
  const l = logicalOf(method, version)
  if ('code' in l) return { body: answer(id, { error: l }, shape), rpcMethod: 'unknown', outcome: String(l.code), rpcErrorCode: l.code, trace: { version } }
  try {
    // every walk of params below (spellings compared, content hashed, body rules) meets a bounded value
    if (deeperThan(params, MAX_BODY_DEPTH)) throw invalid('params', `params nest deeper than ${MAX_BODY_DEPTH} levels.`)
    const result = await dispatch(s, input.caller, l.logical, params, version, input.chargeControl ?? noCharge)
    return { body: answer(id, { result }, shape), rpcMethod: l.canonical, outcome: 'ok', trace: { version, params, result } }
  } catch (err) {
    const error = err instanceof Refusal ? err.rpc : rpcErrorOf(err)
    if (!(err instanceof Refusal) && !(err instanceof GatewayError)) s.logger.error({ err, rpcMethod: l.canonical }, 'front door request failed')
    const code = error.data?.code
    return { body: answer(id, { error }, shape), rpcMethod: l.canonical, outcome: typeof code === 'string' ? code : String(error.code), rpcErrorCode: error.code, trace: { version, params } }
  }
}
