// The front door validates what REST validates (docs/api.md#a2a-front-door,
// docs/design.md#front-door), over real sockets against the campaign-control simulator: a
// campaign id, request id or message id REST would refuse is -32602 `invalid_request` on every
// method that takes one, and `constraints` or `controller_id` anywhere in a submission (or a
// cancel) is -32602 with its own contract code — never -32603, never silently dropped. Each
// refusal is checked where it matters: the remote received no call, and the ledger holds no
// record and no front-door send of it.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { frontRpc, type JsonResponse } from '../helpers/http.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'

const URN = 'urn:openoperator:argus-supervisor:v1'
/** the static controller of test/helpers/gateway.ts, as the ledger knows it */
const CONTROLLER = 'static:controller'

/** campaign ids REST refuses (schemas/control.ts CampaignIdSchema: a 400 on every campaign route) */
const BAD_CAMPAIGNS: Array<[string, string]> = [
  ['a space', 'camp 1'],
  ['a slash', 'camp/1'],
  ['a parent path', '../x'],
  ['a zero-width space', 'camp\u200b1'],
  ['300 characters', `c${'x'.repeat(299)}`],
  ['empty', '']
]
/** request ids REST refuses (RequestIdSchema): short, a space, a slash, a zero-width space, 129 characters, empty, not a string */
const BAD_REQUEST_IDS: Array<[string, unknown]> = [
  ['7 characters', 'req-123'],
  ['a space', 'req 12345678'],
  ['a slash', 'req/12345678'],
  ['a parent path', '../req-12345678'],
  ['a zero-width space', 'req-\u200b12345678'],
  ['129 characters', `r${'x'.repeat(128)}`],
  ['empty', ''],
  ['a number', 123456789]
]

const submission = (campaignId: string, messageId: string, extra: { params?: object; message?: object; metadata?: object; sup?: object; configuration?: object } = {}) => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'], ...extra.configuration },
  message: {
    role: 'user',
    kind: 'message',
    messageId,
    metadata: { argus_supervisor: { campaign_id: campaignId, ...extra.sup }, ...extra.metadata },
    parts: [{ kind: 'text', text: 'train it' }],
    ...extra.message
  },
  ...extra.params
})
const argusRead = (messageId: unknown) => ({
  configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health' } }, parts: [{ kind: 'data', data: { params: {} } }] }
})

/**
 * The refusal and everything that must not have happened: -32602 with the contract code (never
 * -32603), no call reached the remote, and the ledger holds neither a record of the request id
 * nor a send of the message id.
 */
async function expectRefused (p: ControlPair, what: string, send: () => Promise<JsonResponse>, code: string, ids: { requestId?: unknown; messageId?: unknown; campaignId?: string } = {}): Promise<void> {
  const before = p.sim.rpcCalls().length
  const res = await send()
  expect(res.status, what).toBe(200)
  expect(res.body.error?.code, `${what}: ${JSON.stringify(res.body)}`).not.toBe(-32603)
  // v0.3's object data, or v1.0's ErrorInfo (docs/api.md#a2a-front-door)
  const data = Array.isArray(res.body.error?.data) ? res.body.error.data[0].metadata : res.body.error?.data
  expect(res.body.error?.code, what).toBe(-32602)
  expect(data, what).toMatchObject({ code, retryable: Array.isArray(res.body.error?.data) ? 'false' : false })
  expect(res.body.result, what).toBeUndefined()
  expect(p.sim.rpcCalls().length, `${what}: nothing sent to the remote`).toBe(before)
  const ledger = p.gw.app.ledger
  for (const id of [ids.requestId, ids.messageId]) {
    if (typeof id !== 'string' || id === '') continue
    expect(await ledger.get(id), `${what}: no record of ${id}`).toBeUndefined()
    expect(await ledger.getFrontSend(CONTROLLER, id), `${what}: no front-door send of ${id}`).toBeUndefined()
  }
  if (ids.campaignId !== undefined) expect(await ledger.listByCampaign(ids.campaignId), `${what}: no record of the campaign`).toEqual([])
}

/** every front-door method that takes a campaign id, with one */
const CAMPAIGN_METHODS: Array<[string, (campaignId: string, requestId: string) => object]> = [
  ['campaign/claim_control', (c, r) => ({ campaign_id: c, request_id: r, ttl_seconds: 600 })],
  ['campaign/read_control', (c) => ({ campaign_id: c })],
  ['campaign/renew_control', (c, r) => ({ campaign_id: c, request_id: r, ttl_seconds: 600 })],
  ['campaign/release_control', (c, r) => ({ campaign_id: c, request_id: r })],
  ['campaign/intervene', (c, r) => ({ campaign_id: c, request_id: r, intervention: { action: 'pause' } })]
]

/** a campaign the controller holds, with a task of its own made through the front door */
async function ownTask (p: ControlPair, campaignId: string): Promise<string> {
  await claim(p, p.gw.tokens.controller, campaignId)
  const sub = await frontRpc(p.gw.url, p.gw.tokens.controller, 'message/send', submission(campaignId, rid('submit')))
  expect(sub.body.result?.kind, JSON.stringify(sub.body)).toBe('task')
  return sub.body.result.id as string
}

describe('campaign ids REST refuses', () => {
  it('are -32602 invalid_request on every campaign method and in a submission: nothing sent, nothing written', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    for (const [label, campaignId] of BAD_CAMPAIGNS) {
      for (const [method, params] of CAMPAIGN_METHODS) {
        const requestId = rid('req')
        await expectRefused(p, `${method} with ${label}`, async () => await frontRpc(p.gw.url, t, method, params(campaignId, requestId)), 'invalid_request', { requestId, campaignId })
      }
      const messageId = rid('submit')
      await expectRefused(p, `a submission with ${label}`, async () => await frontRpc(p.gw.url, t, 'message/send', submission(campaignId, messageId)), 'invalid_request', { messageId, campaignId })
      // v1.0's names and shapes alike
      const v1Id = rid('submit')
      const v1 = { configuration: { returnImmediately: true }, message: { role: 'ROLE_USER', messageId: v1Id, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ text: 'train it' }] } }
      await expectRefused(p, `a v1.0 submission with ${label}`, async () => await frontRpc(p.gw.url, t, 'SendMessage', v1, { 'a2a-version': '1.0' }), 'invalid_request', { messageId: v1Id, campaignId })
    }
  })

  it('name the field in the message; a good id on the same methods goes through', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const res = await frontRpc(p.gw.url, t, 'campaign/read_control', { campaign_id: 'camp/1' })
    expect(res.body.error.message).toBe('params.campaign_id: must be 1-128 characters of [A-Za-z0-9._:-]')
    const sub = await frontRpc(p.gw.url, t, 'message/send', submission('camp 1', rid('submit')))
    expect(sub.body.error.message).toBe('params.message.metadata.argus_supervisor.campaign_id: must be 1-128 characters of [A-Za-z0-9._:-]')
    // the longest id REST takes, and the edges of its alphabet
    const longest = `c${'x'.repeat(127)}`
    expect((await frontRpc(p.gw.url, t, 'campaign/claim_control', { campaign_id: longest, request_id: rid('claim'), ttl_seconds: 600 })).body.result?.lease).toMatchObject({ controller_id: 'ctl-1' })
    expect((await frontRpc(p.gw.url, t, 'campaign/read_control', { campaign_id: 'A.b_c:d-9' })).body.result).toEqual({ lease: null })
  })

  it('in a cancel\'s metadata is -32602 invalid_request, nothing sent', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const taskId = await ownTask(p, 'camp-cancel-ids')
    for (const [label, campaignId] of BAD_CAMPAIGNS) {
      const requestId = rid('cancel')
      await expectRefused(p, `tasks/cancel with ${label}`, async () => await frontRpc(p.gw.url, t, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: requestId, campaign_id: campaignId } } }), 'invalid_request', { requestId, campaignId })
    }
  })
})

describe('request ids REST refuses', () => {
  it('are -32602 invalid_request on every campaign mutation and a cancel: nothing sent, nothing written', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const campaignId = 'camp-request-ids'
    const taskId = await ownTask(p, campaignId)
    const records = (await p.gw.app.ledger.listByCampaign(campaignId)).length
    for (const [label, requestId] of BAD_REQUEST_IDS) {
      for (const [method, params] of CAMPAIGN_METHODS.filter(([m]) => m !== 'campaign/read_control')) {
        await expectRefused(p, `${method} with a request id of ${label}`, async () => await frontRpc(p.gw.url, t, method, { ...params(campaignId, ''), request_id: requestId }), 'invalid_request', { requestId })
      }
      await expectRefused(p, `tasks/cancel with a request id of ${label}`, async () => await frontRpc(p.gw.url, t, 'tasks/cancel', { id: taskId, metadata: { argus_supervisor: { request_id: requestId } } }), 'invalid_request', { requestId })
    }
    expect((await p.gw.app.ledger.listByCampaign(campaignId)).length).toBe(records)
    const named = await frontRpc(p.gw.url, t, 'campaign/release_control', { campaign_id: campaignId, request_id: 'req 1' })
    expect(named.body.error.message).toBe('params.request_id: must be 8-128 characters of [A-Za-z0-9._:-]')
  })
})

describe('message ids REST would refuse as request ids', () => {
  it('are -32602 invalid_request for an Argus read and a submission: nothing sent, no send recorded', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    await claim(p, t, 'camp-message-ids')
    for (const [label, messageId] of BAD_REQUEST_IDS) {
      await expectRefused(p, `an Argus read with a message id of ${label}`, async () => await frontRpc(p.gw.url, t, 'message/send', argusRead(messageId)), 'invalid_request', { messageId })
      await expectRefused(p, `a submission with a message id of ${label}`, async () => await frontRpc(p.gw.url, t, 'message/send', submission('camp-message-ids', messageId as string)), 'invalid_request', { messageId })
    }
    const named = await frontRpc(p.gw.url, t, 'message/send', argusRead('m 1'))
    expect(named.body.error.message).toBe('params.message.messageId: must be 8-128 characters of [A-Za-z0-9._:-]')
    // a good one still reads
    expect((await frontRpc(p.gw.url, t, 'message/send', argusRead(rid('msg')))).body.result?.kind).toBe('message')
  })
})

describe('constraints and controller_id anywhere in a submission', () => {
  const PLACES: Array<[string, (key: string) => Parameters<typeof submission>[2]]> = [
    ['params', (k) => ({ params: { [k]: { allow_merge: true } } })],
    ['the message', (k) => ({ message: { [k]: 'ctl-other' } })],
    ['the message metadata', (k) => ({ metadata: { [k]: 'ctl-other' } })],
    ['metadata.argus_supervisor', (k) => ({ sup: { [k]: 'ctl-other' } })],
    ['the configuration', (k) => ({ configuration: { [k]: { allow_merge: true } } })],
    ['a data part', (k) => ({ message: { parts: [{ kind: 'data', data: { nested: { [k]: true } } }] } })]
  ]
  const KEYS: Array<[string, string]> = [
    ['constraints', 'constraints_not_relaxable'],
    ['Constraints', 'constraints_not_relaxable'],
    ['controller_id', 'reserved_field'],
    ['controllerId', 'reserved_field']
  ]

  it('is -32602 with its contract code, never dropped: nothing sent, no send recorded', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const campaignId = 'camp-reserved'
    await claim(p, t, campaignId)
    const records = (await p.gw.app.ledger.listByCampaign(campaignId)).length
    for (const [where, place] of PLACES) {
      for (const [key, code] of KEYS) {
        const messageId = rid('submit')
        await expectRefused(p, `${key} in ${where}`, async () => await frontRpc(p.gw.url, t, 'message/send', submission(campaignId, messageId, place(key))), code, { messageId })
      }
    }
    // constraints beats controller_id wherever each stands
    const both = rid('submit')
    await expectRefused(p, 'both', async () => await frontRpc(p.gw.url, t, 'message/send', submission(campaignId, both, { params: { controller_id: 'x' }, configuration: { constraints: {} } })), 'constraints_not_relaxable', { messageId: both })
    expect((await p.gw.app.ledger.listByCampaign(campaignId)).length).toBe(records)
    // the same submission without them goes through
    const ok = await frontRpc(p.gw.url, t, 'message/send', submission(campaignId, rid('submit')))
    expect(ok.body.result?.kind, JSON.stringify(ok.body)).toBe('task')
  })

  it('in a cancel\'s params is -32602 too, nothing sent', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const taskId = await ownTask(p, 'camp-cancel-reserved')
    const keys: Array<[string, string]> = [['constraints', 'constraints_not_relaxable'], ['controller_id', 'reserved_field']]
    for (const [key, code] of keys) {
      for (const params of [{ [key]: 'x' }, { metadata: { [key]: 'x' } }, { configuration: { [key]: 'x' } }]) {
        const requestId = rid('cancel')
        await expectRefused(p, `tasks/cancel with ${key} in ${JSON.stringify(params)}`, async () => await frontRpc(p.gw.url, t, 'tasks/cancel', { id: taskId, ...params, metadata: { ...(params as { metadata?: object }).metadata, argus_supervisor: { request_id: requestId } } }), code, { requestId })
      }
    }
  })
})
