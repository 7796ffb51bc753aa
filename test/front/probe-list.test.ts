// The door's answer to every bad input of the probe list (docs/api.md#a2a-front-door; CONTRACT
// §14): wrong jsonrpc, ids of every wrong type, params that are no object, unknown methods,
// inherited names as methods (`constructor`, `__proto__`, `toString`…), both spellings
// disagreeing, values nested 12,000 and 100,000 deep — each the exact JSON-RPC code, never
// -32603 and never a 500, with `error.data` in the contract's shape for the version asked: v0.3's
// object with the contract `code` and `retryable`, v1.0's list with an ErrorInfo holding them.
// Over real sockets; the 100,000-deep values, which the 64 KiB body cap stops at the HTTP edge
// (413), are also handed to the door's core directly, past the cap.
import pino from 'pino'
import { describe, expect } from 'vitest'
import { createFrontDoor } from '../../src/front/door.js'
import type { Caller } from '../../schemas/callers.js'
import { it } from '../helpers/fixtures.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { rid } from '../helpers/control.js'
import type { TestGateway } from '../helpers/gateway.js'

type Version = '0.3' | '1.0'
const URN = 'urn:openoperator:argus-supervisor:v1'
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
const NAMES = { 0.3: { send: 'message/send', get: 'tasks/get', cancel: 'tasks/cancel' }, '1.0': { send: 'SendMessage', get: 'GetTask', cancel: 'CancelTask' } } as const
const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__']

const deepArray = (n: number, leaf = '1'): string => '['.repeat(n) + leaf + ']'.repeat(n)
const deepObject = (n: number): string => '{"":'.repeat(n) + '1' + '}'.repeat(n)

const post = async (g: TestGateway, token: string, body: string, v: Version): Promise<JsonResponse> =>
  await call(`${g.url}/a2a/`, { method: 'POST', token, rawBody: body, headers: { 'content-type': 'application/json', ...(v === '1.0' ? { 'a2a-version': '1.0' } : {}) } })

/** the contract's shape for the version asked: v0.3's object, v1.0's ErrorInfo in a list of @type objects */
function expectContractShape (error: { code: number; data?: unknown }, v: Version, contract: string | undefined, what: string): void {
  if (v === '0.3') {
    if (contract === undefined) return
    expect(error.data, what).toMatchObject({ code: contract, retryable: false })
    return
  }
  expect(Array.isArray(error.data), `${what}: ${JSON.stringify(error)}`).toBe(true)
  const details = error.data as Array<Record<string, unknown>>
  for (const d of details) expect(typeof d['@type'], what).toBe('string')
  const info = details.find((d) => d['@type'] === ERROR_INFO)
  expect(info, what).toBeDefined()
  if (contract !== undefined) expect(info!.metadata, what).toMatchObject({ code: contract, retryable: 'false' })
}

/** one probe: its body in each version, the code, and the contract code (none for A2A's own refusals) */
type Probe = [label: string, body: (v: Version) => string, code: number, contract: string | undefined]

const rpcText = (method: string, params: unknown, id: unknown = 'p-1'): string => JSON.stringify({ jsonrpc: '2.0', id, method, params })
const read = (messageId: string): Record<string, unknown> =>
  ({ role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] })

const PROBES: Probe[] = [
  ['not JSON', () => '{', -32700, 'invalid_request'],
  ['an empty body', () => '', -32700, 'invalid_request'],
  ['a batch', (v) => `[${rpcText(NAMES[v].get, { id: 'x' })}]`, -32600, 'invalid_request'],
  ['an empty batch', () => '[]', -32600, 'invalid_request'],
  ['a string', () => '"x"', -32600, 'invalid_request'],
  ['a number', () => '7', -32600, 'invalid_request'],
  ['null', () => 'null', -32600, 'invalid_request'],
  ['jsonrpc "1.0"', (v) => `{"jsonrpc":"1.0","id":1,"method":"${NAMES[v].get}","params":{}}`, -32600, 'invalid_request'],
  ['jsonrpc 2 as a number', (v) => `{"jsonrpc":2,"id":1,"method":"${NAMES[v].get}","params":{}}`, -32600, 'invalid_request'],
  ['no jsonrpc', (v) => `{"id":1,"method":"${NAMES[v].get}","params":{}}`, -32600, 'invalid_request'],
  ['a notification (no id)', (v) => `{"jsonrpc":"2.0","method":"${NAMES[v].get}","params":{}}`, -32600, 'invalid_request'],
  ...(['null', '1.5', '{}', '[]', 'true', '9007199254740993', '-1e400'] as const).map((id): Probe =>
    [`id ${id}`, (v) => `{"jsonrpc":"2.0","id":${id},"method":"${NAMES[v].get}","params":{}}`, -32600, 'invalid_request']),
  ['a member beside the four', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":{},"extra":1}`, -32600, 'invalid_request'],
  ['no method', () => '{"jsonrpc":"2.0","id":1,"params":{}}', -32600, 'invalid_request'],
  ['method a number', () => '{"jsonrpc":"2.0","id":1,"method":7,"params":{}}', -32600, 'invalid_request'],
  ['method empty', () => '{"jsonrpc":"2.0","id":1,"method":"","params":{}}', -32600, 'invalid_request'],
  ...(['[1]', '"x"', 'null', '7', 'true'] as const).map((params): Probe =>
    [`params ${params}`, (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":${params}}`, -32602, 'invalid_request']),
  ['an unknown method', () => rpcText('no/such', {}), -32601, 'not_found'],
  ['the other version\'s name', (v) => rpcText(v === '1.0' ? 'tasks/get' : 'GetTask', { id: 'x' }), -32601, 'not_found'],
  ...INHERITED.map((m): Probe => [`the inherited name ${m}`, () => rpcText(m, { campaign_id: 'camp-1', request_id: rid('req') }), -32601, 'not_found']),
  ['a task id that is no string', (v) => rpcText(NAMES[v].get, { id: 7 }), -32602, 'invalid_request'],
  ['message not an object', (v) => rpcText(NAMES[v].send, { message: 'x' }), -32602, 'invalid_request'],
  ['message_id and messageId disagreeing', (v) => rpcText(NAMES[v].send, { message: { ...read('msg-aaaaaaaa'), message_id: 'msg-bbbbbbbb' } }), -32602, 'conflicting_fields'],
  ['context_id and contextId disagreeing', (v) => rpcText(NAMES[v].send, { message: { ...read(rid('msg')), context_id: 'c-1', contextId: 'c-2' } }), -32602, 'conflicting_fields'],
  ['history_length and historyLength disagreeing', (v) => rpcText(NAMES[v].get, { id: 'x', history_length: 1, historyLength: 2 }), -32602, 'conflicting_fields'],
  ['a message id REST refuses', (v) => rpcText(NAMES[v].send, { message: read('../x') }), -32602, 'invalid_request'],
  ['streaming', (v) => rpcText(v === '1.0' ? 'SendStreamingMessage' : 'message/stream', { message: read(rid('msg')) }), -32004, undefined],
  ['push configuration', (v) => rpcText(v === '1.0' ? 'CreateTaskPushNotificationConfig' : 'tasks/pushNotificationConfig/set', {}), -32003, undefined],
  ['a send outside both profiles', (v) => rpcText(NAMES[v].send, { message: { role: 'user', kind: 'message', messageId: rid('msg'), parts: [{ kind: 'text', text: 'hi' }] } }), -32004, undefined],
  ['another caller\'s task', (v) => rpcText(NAMES[v].get, { id: 'task-of-nobody' }), -32001, 'not_found'],
  // nested deep: 12,000 levels fit the 64 KiB cap, and the door bounds every walk of them
  ['params 12,000 arrays deep', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":{"id":"x","deep":${deepArray(12_000)}}}`, -32602, 'invalid_request'],
  ['params 12,000 objects deep', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":{"id":"x","deep":${deepObject(12_000)}}}`, -32602, 'invalid_request'],
  ['a message 12,000 deep', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${rid('msg')}","parts":${deepArray(12_000)}}}}`, -32602, 'invalid_request'],
  ['metadata 12,000 deep', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${rid('msg')}","parts":[],"metadata":{"${URN}":{"operation":"supervisor.health","x":${deepObject(12_000)}}}}}}`, -32602, 'invalid_request'],
  ['both spellings 12,000 deep and equal', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${rid('msg')}","parts":[],"context_id":${deepArray(12_000)},"contextId":${deepArray(12_000)}}}}`, -32602, 'invalid_request'],
  ['both spellings 12,000 deep, unequal', (v) => `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":{"id":"x","history_length":${deepArray(12_000, '1')},"historyLength":${deepArray(12_000, '2')}}}`, -32602, 'invalid_request']
]

describe('the probe list', () => {
  it.for(['0.3', '1.0'] as const)('A2A-Version %s: every bad input has its exact code and the contract\'s shape, never -32603, never a 500', async (v, { gw }) => {
    for (const [label, body, code, contract] of PROBES) {
      const what = `${v} ${label}`
      const res = await post(gw, gw.tokens.reader, body(v), v)
      expect(res.status, what).toBe(200)
      expect(res.body?.jsonrpc, `${what}: ${res.text.slice(0, 300)}`).toBe('2.0')
      expect(res.body.error?.code, `${what}: ${res.text.slice(0, 300)}`).toBe(code)
      expectContractShape(res.body.error, v, contract, what)
    }
    expect(gw.logs.filter((l) => l.includes('front door request failed')), 'no request failed unexpectedly').toEqual([])
  })

  it('an inherited name is -32601 for every scope: never the control pipeline, never a scope error, never -32603', async ({ controlPair: p }) => {
    const g = p.gw
    for (const token of [g.tokens.reader, g.tokens.controller, g.tokens.all]) {
      for (const m of INHERITED) {
        for (const v of ['0.3', '1.0'] as const) {
          const res = await post(g, token, rpcText(m, { campaign_id: 'camp-probe', request_id: rid('req'), ttl_seconds: 60 }), v)
          expect(res.body.error?.code, `${m} ${v}`).toBe(-32601)
          expectContractShape(res.body.error, v, 'not_found', `${m} ${v}`)
        }
      }
    }
    expect(p.sim.rpcCalls().filter((c) => c.method.startsWith('campaign/'))).toEqual([])
    expect(g.logs.filter((l) => l.includes('front door request failed'))).toEqual([])
  })

  it('100,000 deep: 413 at the HTTP edge (the body cap), never a 500', async ({ gw }) => {
    for (const v of ['0.3', '1.0'] as const) {
      for (const deep of [deepArray(100_000), deepObject(100_000)]) {
        const res = await post(gw, gw.tokens.reader, `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${rid('msg')}","parts":[],"metadata":${deep}}}}`, v)
        expect(res.status).toBe(413)
        expect(res.body.error.code).toBe('payload_too_large')
      }
    }
  })
})

describe('the door\'s core, past the body cap', () => {
  const untouched = new Proxy({}, { get: (_t, name) => () => { throw new Error(`${String(name)} must not be called for a refused request`) } })
  const door = createFrontDoor({ argus: untouched as never, control: untouched as never, ledger: untouched as never, discovery: untouched as never, readTimeoutMs: 1000, logger: pino({ level: 'silent' }) })
  const caller: Caller = { name: 'prober', tokenSha256: '0'.repeat(64), scopes: ['read', 'control'], controllerId: 'ctl-probe' }

  it.for(['0.3', '1.0'] as const)('A2A-Version %s: 100,000-deep arrays and objects in params, the message, its metadata and both spellings are -32602, never -32603', async (v) => {
    const id = rid('msg')
    const bodies = [deepArray(100_000), deepObject(100_000)].flatMap((deep) => [
      `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].get}","params":{"id":"x","deep":${deep}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":${deep}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${id}","parts":${deep}}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${id}","parts":[],"metadata":{"argus_supervisor":${deep}}}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"${NAMES[v].send}","params":{"message":{"messageId":"${id}","parts":[],"context_id":${deep},"contextId":${deep}}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"campaign/intervene","params":{"campaign_id":"camp-1","request_id":"${id}","intervention":${deep}}}`
    ])
    for (const text of bodies) {
      const a = await door.handle({ text, version: v === '1.0' ? '1.0' : undefined, caller })
      const body = JSON.parse(a.body)
      expect(body.error?.code, text.slice(0, 120)).toBe(-32602)
      expectContractShape(body.error, v, 'invalid_request', text.slice(0, 120))
    }
  })
})
