// JSON-RPC 2.0 framing of the front door, checked strictly (docs/api.md#a2a-front-door): one
// request object per POST (no batch, no notification), `jsonrpc: "2.0"`, an id that is a string
// or an integer, a method name, params an object, nothing else. And the two A2A generations'
// method names: which version a request speaks (its `A2A-Version` header), the logical method
// each name stands for, and the canonical name when a request uses the other version's.
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { framingError, protocolError, type RpcError } from './errors.js'

export type RpcId = string | number
export type FrontVersion = '0.3' | '1.0'
export interface FrontRequest { id: RpcId; method: string; params: Record<string, unknown> }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const KEYS = new Set(['jsonrpc', 'id', 'method', 'params'])

export function frame (text: string): { ok: true; req: FrontRequest } | { ok: false; id: RpcId | null; error: RpcError } {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return { ok: false, id: null, error: framingError(RPC_CODES.parseError, 'invalid_request', 'The body is not JSON.') }
  }
  const bad = (message: string, id: RpcId | null = null) => ({ ok: false as const, id, error: framingError(RPC_CODES.invalidRequest, 'invalid_request', message) })
  if (Array.isArray(v)) return bad('Batch requests are not served: send one JSON-RPC request per POST.')
  if (!isRecord(v)) return bad('The body is not a JSON-RPC 2.0 request object.')
  const id = typeof v.id === 'string' || (typeof v.id === 'number' && Number.isSafeInteger(v.id)) ? v.id : null
  if (v.jsonrpc !== '2.0') return bad('jsonrpc must be "2.0".', id)
  if (!('id' in v)) return bad('Notifications are not served: every request needs an id.')
  if (id === null) return bad('id must be a string or an integer.')
  const extra = Object.keys(v).find((k) => !KEYS.has(k))
  if (extra !== undefined) return bad(`Unknown member ${JSON.stringify(extra.slice(0, 64))}: a request holds jsonrpc, id, method and params only.`, id)
  if (typeof v.method !== 'string' || v.method === '') return bad('method must be a non-empty string.', id)
  if (v.params !== undefined && !isRecord(v.params)) return { ok: false, id, error: framingError(RPC_CODES.invalidParams, 'invalid_request', 'params must be an object.') }
  return { ok: true, req: { id, method: v.method, params: (v.params ?? {}) as Record<string, unknown> } }
}

/** what a method name stands for, whichever version's name it is */
export type Logical =
  | 'send' | 'get' | 'cancel' | 'stream' | 'resubscribe' | 'push' | 'extendedCard' | 'list'
  | 'claim_control' | 'read_control' | 'renew_control' | 'release_control' | 'intervene'

// the tables are read with `own` alone: a method named `constructor`, `__proto__` or `toString`
// is a name no table holds (-32601), never a property every object inherits
const V03: Record<string, Logical> = {
  'message/send': 'send',
  'tasks/get': 'get',
  'tasks/cancel': 'cancel',
  'message/stream': 'stream',
  'tasks/resubscribe': 'resubscribe',
  'tasks/pushNotificationConfig/set': 'push',
  'tasks/pushNotificationConfig/get': 'push',
  'tasks/pushNotificationConfig/list': 'push',
  'tasks/pushNotificationConfig/delete': 'push',
  'agent/getAuthenticatedExtendedCard': 'extendedCard'
}
const V10: Record<string, Logical> = {
  SendMessage: 'send',
  GetTask: 'get',
  CancelTask: 'cancel',
  SendStreamingMessage: 'stream',
  SubscribeToTask: 'resubscribe',
  CreateTaskPushNotificationConfig: 'push',
  GetTaskPushNotificationConfig: 'push',
  ListTaskPushNotificationConfigs: 'push',
  ListTaskPushNotificationConfig: 'push',
  DeleteTaskPushNotificationConfig: 'push',
  GetExtendedAgentCard: 'extendedCard',
  ListTasks: 'list'
}
/** the campaign-control extension's methods: its own names, the same on both wires */
export const CAMPAIGN_METHODS: Record<string, Logical> = {
  'campaign/claim_control': 'claim_control',
  'campaign/read_control': 'read_control',
  'campaign/renew_control': 'renew_control',
  'campaign/release_control': 'release_control',
  'campaign/intervene': 'intervene'
}
const NAME: Record<FrontVersion, Partial<Record<Logical, string>>> = {
  0.3: { send: 'message/send', get: 'tasks/get', cancel: 'tasks/cancel' },
  '1.0': { send: 'SendMessage', get: 'GetTask', cancel: 'CancelTask' }
}

/** a table's entry for a name the caller wrote: its own entries only */
const own = <T>(table: Readonly<Record<string, T>>, name: string): T | undefined => Object.hasOwn(table, name) ? table[name] : undefined

/** the version a request speaks: its A2A-Version header (none is 0.3, as A2A v1.0 says) */
export function versionOf (header: string | string[] | undefined): FrontVersion | RpcError {
  const h = Array.isArray(header) ? header.join(',') : (header ?? '').trim()
  if (h === '' || h === '0.3' || /^0\.3\.\d+$/.test(h)) return '0.3'
  if (h === '1.0' || /^1\.0\.\d+$/.test(h)) return '1.0'
  return protocolError(RPC_CODES.versionNotSupported, 'The gateway speaks A2A 1.0 and 0.3 on this endpoint.', { supportedVersions: ['1.0', '0.3'] })
}

/**
 * The generation an answer's errors are written in: v0.3's for a request without the header (or
 * 0.3), v1.0's for any other — a version the gateway does not speak is named only by a client
 * newer than 0.3, which reads v1.0's error details.
 */
export function shapeOf (header: string | string[] | undefined): FrontVersion {
  const v = versionOf(header)
  return v === '0.3' ? '0.3' : '1.0'
}

/** the logical method, or the error that names what to call instead */
export function logicalOf (method: string, version: FrontVersion): { logical: Logical; canonical: string } | RpcError {
  const campaign = own(CAMPAIGN_METHODS, method)
  if (campaign !== undefined) return { logical: campaign, canonical: method }
  const mine = own(version === '1.0' ? V10 : V03, method)
  if (mine !== undefined) return { logical: mine, canonical: V03Name(mine) ?? method }
  const other = own(version === '1.0' ? V03 : V10, method)
  const name = other !== undefined ? NAME[version][other] : undefined
  if (name !== undefined) {
    return framingError(RPC_CODES.methodNotFound, 'not_found', `${method} is not an A2A ${version} method name: with A2A-Version ${version === '1.0' ? '1.0' : '0.3 (or none)'} call ${name}.`, { canonical: name })
  }
  return framingError(RPC_CODES.methodNotFound, 'not_found', 'Method not found.')
}

const V03Name = (l: Logical): string | undefined => NAME['0.3'][l]

/** a method sent as a URL path: the error that names the canonical form */
export function pathMethodError (path: string): RpcError {
  const tail = path.replace(/^\/a2a\/?/, '').split('?')[0] ?? ''
  const known = own(V03, tail) ?? own(V10, tail) ?? own(CAMPAIGN_METHODS, tail)
  const message = known !== undefined
    ? `${tail} is a JSON-RPC method name, not a URL path: POST {"jsonrpc":"2.0","id":…,"method":"${tail}","params":{…}} to /a2a/.`
    : 'Not an endpoint: JSON-RPC requests are POSTed to /a2a/, the method in the body.'
  return framingError(RPC_CODES.methodNotFound, 'not_found', message, { endpoint: '/a2a/', ...(known !== undefined ? { method: tail.slice(0, 64) } : {}) })
}
