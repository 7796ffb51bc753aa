// A remote that echoes the credential the gateway sent it (docs/design.md#secret-echo): the
// upstream secret inside an Argus payload or a task artifact, under either auth scheme, raw or
// in any encoding a decoder accepts (base64 at each alignment, base64url, base64 of the header,
// base64 with line breaks or without padding, base32 of either case, percent-encoding of some
// or every byte, once or more, JSON `\u` escapes, HTML character references, hex), in each
// place an answer shows remote text. No answer may carry it: 502 upstream_invalid_response in
// the contract's shape, logged without the value.
// A mutation answered with it is ambiguous and nothing of the answer reaches the ledger
// (docs/design.md#outcomes). CONTRACT §14's forms (issue 45) the same way — base64 broken by
// whitespace, hex of mixed case or with separators, base32 of mixed case and base32hex, `\xNN` and
// `\u{…}` escapes, quoted-printable, one percent layer over a form — and also through the front
// door (an Argus read, `tasks/get` of the sender's task, a submission), whose answers the ledger
// stores: nothing of them in an answer, a log line or a byte of the ledger's file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect } from 'vitest'
import type { Simulator } from '../../src/simulator/index.js'
import { claim, rid } from '../helpers/control.js'
import { it, test } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call, frontRpc } from '../helpers/http.js'
import {
  base32, base32hex, braceEscaped, broken, hexSeparated, htmlRefs, mixCase, percentEveryByte, quotedPrintable, sprinkle, uEscaped, xEscapedBytes
} from '../helpers/secret-forms.js'

const SECRET = 'echo-secret-7f3a9c2e41b84d06'
test.override({ pairOptions: { sim: { secret: SECRET, profile: 'openoperator' } } })
// reserved characters (percent-encoded differently by encodeURIComponent and forms) and a
// base64 with `+` and `/` at one alignment, so that every encoding differs from the raw value
const ODD_SECRET = 'echo+secret/7f3a?9c2e=41b8&4d06~Zz>'

const b64 = (s: string): string => Buffer.from(s).toString('base64')
const b64url = (s: string): string => Buffer.from(s).toString('base64url')

/** the secret as a remote plausibly writes it back, by name */
function encodings (s: string): Record<string, string> {
  const hex = Buffer.from(s).toString('hex')
  return {
    raw: s,
    base64: b64(s),
    base64url: b64url(s),
    // inside a longer base64 string, the secret starts at each of the three alignments
    'base64 at offset 1': b64(`x${s}.`),
    'base64 at offset 2': b64(`xy${s}..`),
    'base64url at offset 2': b64url(`xy${s}`),
    'base64 of Bearer <secret>': b64(`Bearer ${s}`),
    'base64 of the Authorization header': b64(`Authorization: Bearer ${s}`),
    'base64 of the X-API-KEY header': b64(`X-API-KEY: ${s}`),
    'base64url of Bearer <secret>': b64url(`Bearer ${s}`),
    encodeURIComponent: encodeURIComponent(s),
    'percent-encoded, lower-case hex': encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    'form-encoded': new URLSearchParams({ k: s }).toString().slice(2),
    hex,
    'hex, upper case': hex.toUpperCase(),
    'every byte percent-encoded': percentEveryByte(s),
    'every byte percent-encoded, lower-case hex': percentEveryByte(s, false),
    'every byte percent-encoded twice (%2573…)': percentEveryByte(s, true, 2),
    'some bytes percent-encoded, the others raw': [...s].map((c, i) => i % 3 === 0 || /[^A-Za-z0-9]/.test(c) ? percentEveryByte(c) : c).join(''),
    'base64 without padding': b64(`x${s}`).replace(/=+$/, ''),
    'base64, LF every 8 characters': broken(b64(`x${s}`), 8, '\n'),
    'base64, CRLF every 5 characters': broken(b64(s), 5, '\r\n'),
    'base64url, LF every 3 characters': broken(b64url(`xy${s}`), 3, '\n'),
    base32: base32(Buffer.from(s)),
    'base32, lower case, unpadded, at offset 3': base32(Buffer.from(`abc${s}`), false).toLowerCase(),
    '\\u escape of every character': uEscaped(s),
    'HTML decimal references': htmlRefs(s, 'decimal'),
    'HTML hex references, leading zeros': htmlRefs(s, 'hex, leading zeros'),
    'HTML &#X references': htmlRefs(s, 'HEX'),
    'HTML named references and decimal': htmlRefs(s, 'named'),
    ...encodings14(s)
  }
}

/** CONTRACT §14's forms, each one a decoder reads (test/unit/secret-match-forms.property.test.ts checks each against one) */
function encodings14 (s: string): Record<string, string> {
  const bytes = Buffer.from(s)
  const odd = (i: number): boolean => i % 3 === 1
  return {
    'base64, a space every 4 characters': sprinkle(b64(s), (i) => i > 0 && i % 4 === 0 ? ' ' : ''),
    'base64 at offset 1, tabs and bare CRs': sprinkle(b64(`x${s}`), (i) => ['', '\t', '', '\r', ''][i % 5]!),
    'base64url at offset 2, spaces and CRLF': sprinkle(b64url(`xy${s}`), (i) => ['', ' ', '\r\n', ''][i % 4]!),
    'hex, mixed case': hexSeparated(bytes, odd, () => ''),
    'hex with colons (aa:bb)': hexSeparated(bytes, () => false, () => ':'),
    'hex, upper case, dashes': hexSeparated(bytes, () => true, () => '-'),
    'hex, spaces between some bytes': hexSeparated(bytes, odd, (i) => i % 2 === 0 ? ' ' : ''),
    'base32, mixed case': mixCase(base32(Buffer.from(`ab${s}`), false), odd),
    base32hex: base32hex(bytes),
    'base32hex, lower case, at offset 3': base32hex(Buffer.from(`abc${s}`), false).toLowerCase(),
    '\\x escapes, mixed case': xEscapedBytes(s, odd),
    '\\u{…} escapes, leading zeros': braceEscaped(s, 3, odd),
    'quoted-printable, every byte': quotedPrintable(s, () => true),
    'quoted-printable, lower case, some bytes, a soft line break': quotedPrintable(s, odd, () => false, (i) => i === 9),
    'base64 with spaces, percent-encoded': encodeURIComponent(sprinkle(b64(s), (i) => i % 5 === 4 ? ' ' : '')),
    'base64 in a URL query': `https://files.example/f?sig=${encodeURIComponent(b64(`x${s}`))}`,
    'hex with colons, percent-encoded': encodeURIComponent(hexSeparated(bytes, () => false, () => ':')),
    '\\x escapes, percent-encoded': encodeURIComponent(xEscapedBytes(s)),
    'HTML references, percent-encoded': encodeURIComponent(htmlRefs(s, 'decimal')),
    'quoted-printable, every byte percent-encoded': percentEveryByte(quotedPrintable(s, () => true), false)
  }
}

/** none of the forms, nor the secret's own base64 or hex, is in the text */
function expectNoForm (text: string, s: string): void {
  for (const [name, form] of Object.entries(encodings(s))) expect(text.includes(form), name).toBe(false)
}

/** the front door's answer to a read the guard refused: its JSON-RPC error for upstream_invalid_response, nothing of the remote */
function expectFrontRefused (res: Awaited<ReturnType<typeof call>>, name: string, code = 'upstream_invalid_response'): void {
  expect(res.status, `${name}: ${res.text}`).toBe(200)
  expect(res.body.error?.data?.code, `${name}: ${res.text}`).toBe(code)
  expect(res.body.result, name).toBeUndefined()
}

const URN = 'urn:openoperator:argus-supervisor:v1'
/** an Argus read through the front door */
const argusSend = (operation: string, messageId = rid('msg')): Record<string, unknown> => ({
  configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation, requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] }
})
/** a submission through the front door */
const submitSend = (campaignId: string, messageId: string): Record<string, unknown> => ({
  configuration: { blocking: false, acceptedOutputModes: ['application/json'] },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text: 'go' }] }
})

/** every byte of a SQLite ledger's files (the database and its write-ahead log), as one character a byte */
const ledgerBytes = (dir: string): string => {
  const bytes = Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))))
  expect(bytes.length).toBeGreaterThan(0)
  return bytes.toString('latin1')
}

function expectInvalid (res: Awaited<ReturnType<typeof call>>): void {
  expect(res.status).toBe(502)
  expect(res.body.error.code).toBe('upstream_invalid_response')
  expect(res.body.error.retryable).toBe(false)
  expect(typeof res.headers['x-request-id']).toBe('string')
}

describe('a remote that echoes the upstream secret', () => {
  for (const scheme of ['bearer', 'x-api-key'] as const) {
    it(`in an Argus payload: 502 and no secret in the answer (${scheme})`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { authSchemes: [scheme] }, env: { UPSTREAM_AUTH_SCHEME: scheme } })
      const echoed = scheme === 'bearer' ? { authorization: `Bearer ${SECRET}` } : { 'x-api-key': SECRET }
      s.inject({ argusOperation: 'supervisor.status' }, { kind: 'result', result: { kind: 'message', role: 'agent', messageId: 'm-1', parts: [{ kind: 'data', data: { seen: echoed } }] } }, 1)
      const res = await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })
      expect(res.text).not.toContain(SECRET)
      expectInvalid(res)
      // logged without the value
      expect(g.logs.join('')).not.toContain(SECRET)
      expect(g.logs.some((l) => l.includes('upstream secret'))).toBe(true)
    })

    it(`in a task artifact: 502 and no secret in the answer (${scheme})`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { authSchemes: [scheme] }, env: { UPSTREAM_AUTH_SCHEME: scheme } })
      const artifact = { artifactId: 'a-1', name: 'echo', parts: [{ kind: 'text', text: `headers seen: ${scheme === 'bearer' ? 'Authorization: Bearer ' : 'X-API-KEY: '}${SECRET}` }] }
      s.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: { id: 'task-echo', contextId: 'c', kind: 'task', status: { state: 'completed' }, artifacts: [artifact] } }, 1)
      const res = await call(`${g.url}/v1/tasks/task-echo`, { token: g.tokens.reader })
      expect(res.text).not.toContain(SECRET)
      expectInvalid(res)
      expect(g.logs.join('')).not.toContain(SECRET)
    })
  }

  it('an answer without the secret is untouched', async ({ gw: g }) => {
    const res = await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })
    expect(res.status).toBe(200)
  })
})

type Answer = Awaited<ReturnType<typeof call>>
const echoTask = (artifact: Record<string, unknown>): Record<string, unknown> =>
  ({ id: 'task-echo', contextId: 'c', kind: 'task', status: { state: 'completed' }, artifacts: [artifact] })

/** each place a read shows remote text: plant the form there, answer what a caller gets */
const PLACES: Record<string, (s: Simulator, g: TestGateway, form: string) => Promise<Answer>> = {
  'an Argus payload': async (s, g, form) => {
    s.inject({ argusOperation: 'supervisor.status' }, { kind: 'result', result: { kind: 'message', role: 'agent', messageId: 'm-1', parts: [{ kind: 'data', data: { seen: form } }] } }, 1)
    return await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })
  },
  'task data': async (s, g, form) => {
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: echoTask({ artifactId: 'a-1', name: 'out', parts: [{ kind: 'data', data: { note: `seen ${form}` } }] }) }, 1)
    return await call(`${g.url}/v1/tasks/task-echo`, { token: g.tokens.reader })
  },
  'an artifact name': async (s, g, form) => {
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: echoTask({ artifactId: 'a-1', name: `report-${form}`, parts: [{ kind: 'text', text: 'fine' }] }) }, 1)
    return await call(`${g.url}/v1/tasks/task-echo`, { token: g.tokens.reader })
  },
  'a file URI': async (s, g, form) => {
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: echoTask({ artifactId: 'a-1', name: 'f', parts: [{ kind: 'file', file: { name: 'f.txt', mimeType: 'text/plain', uri: `https://files.example/f.txt?sig=${form}` } }] }) }, 1)
    return await call(`${g.url}/v1/tasks/task-echo`, { token: g.tokens.reader })
  },
  'the card name': async (s, g, form) => await withCard(s, g, (c) => ({ ...c, name: `agent ${form}` })),
  'a skill id': async (s, g, form) => await withCard(s, g, (c) => ({ ...c, skills: [{ id: `skill-${form}`, name: 'echo', description: 'echo', tags: [] }] }))
}

/** discovery re-run on a card carrying the form: the refresh's answer and GET /v1/upstream must both refuse it */
async function withCard (s: Simulator, g: TestGateway, transform: (c: Record<string, unknown>) => Record<string, unknown>): Promise<Answer> {
  s.setCard(transform)
  try {
    const refreshed = await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })
    expectInvalid(refreshed)
    expectNoForm(refreshed.text, ODD_SECRET)
    return await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })
  } finally {
    s.setCard(undefined)
    expect((await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })).status).toBe(200)
  }
}

describe('a remote that echoes the upstream secret in another encoding', () => {
  it('the test secret makes every encoding differ from the raw value and from each other', () => {
    const forms = Object.values(encodings(ODD_SECRET))
    expect(new Set(forms).size).toBe(forms.length)
    expect(b64(`xy${ODD_SECRET}`)).not.toBe(b64url(`xy${ODD_SECRET}`))
  })

  for (const [place, plant] of Object.entries(PLACES)) {
    it(`in ${place}: 502 and the secret in no form, for each encoding`, async ({ startPair }) => {
      const { sim: s, gw: g } = await startPair({ sim: { secret: ODD_SECRET }, env: { GATEWAY_RATE_LIMIT_READ: '100000' } })
      for (const [name, form] of Object.entries(encodings(ODD_SECRET))) {
        const res = await plant(s, g, form)
        expect(res.status, `${place}, ${name}: ${res.text}`).toBe(502)
        expectInvalid(res)
        expectNoForm(res.text, ODD_SECRET)
      }
      // the gateway still answers what carries no secret
      expect((await call(`${g.url}/v1/supervisor/status`, { token: g.tokens.reader })).status).toBe(200)
      expect(g.logs.some((l) => l.includes('upstream secret'))).toBe(true)
      expectNoForm(g.logs.join(''), ODD_SECRET)
    })
  }

  it('through the front door, an Argus read and tasks/get of the sender\'s own task: refused for each encoding, nothing of it in the ledger', async ({ startControlPair }) => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-echo-'))
    try {
      const p = await startControlPair({ sim: { secret: ODD_SECRET }, env: { GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}` } })
      const t = p.gw.tokens.controller
      await claim(p, t, 'camp-echo-front')
      const sent = await frontRpc(p.gw.url, t, 'message/send', submitSend('camp-echo-front', rid('submit')))
      const taskId = sent.body.result?.id as string
      expect(typeof taskId, sent.text).toBe('string')
      for (const [name, form] of Object.entries(encodings(ODD_SECRET))) {
        p.sim.inject({ argusOperation: 'supervisor.status' }, { kind: 'result', result: { kind: 'message', role: 'agent', messageId: 'm-1', parts: [{ kind: 'data', data: { seen: form } }] } }, 1)
        const read = await frontRpc(p.gw.url, t, 'message/send', argusSend('supervisor.status'))
        expectFrontRefused(read, `the Argus read, ${name}`)
        expectNoForm(read.text, ODD_SECRET)
        p.sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'result', result: { ...echoTask({ artifactId: 'a-1', name: `report-${form}`, parts: [{ kind: 'data', data: { note: `seen ${form}` } }] }), id: taskId } }, 1)
        const got = await frontRpc(p.gw.url, t, 'tasks/get', { id: taskId })
        expectFrontRefused(got, `tasks/get, ${name}`)
        expectNoForm(got.text, ODD_SECRET)
      }
      // the gateway still answers the same reads when they carry no secret
      expect((await frontRpc(p.gw.url, t, 'message/send', argusSend('supervisor.status'))).body.result).toBeDefined()
      await p.gw.close()
      expectNoForm(ledgerBytes(dir), ODD_SECRET)
      expectNoForm(p.gw.logs.join(''), ODD_SECRET)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a mutation answered with the secret', () => {
  const dirs: string[] = []
  afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

  /** a task id, as a remote may write it: raw, base64 of the header, JSON-escaped with \u */
  const TASK_IDS: Array<{ name: string; fault: () => Parameters<Simulator['inject']>[1] }> = [
    { name: 'raw', fault: () => ({ kind: 'result', result: { kind: 'task', id: SECRET, contextId: 'c', status: { state: 'submitted' } } }) },
    { name: 'base64 of Bearer <secret>', fault: () => ({ kind: 'result', result: { kind: 'task', id: b64(`Bearer ${SECRET}`), contextId: 'c', status: { state: 'submitted' } } }) },
    { name: '\\u-escaped in the JSON text', fault: () => ({ kind: 'raw-result', json: `{"kind":"task","id":"\\u00${SECRET.charCodeAt(0).toString(16)}${SECRET.slice(1)}","contextId":"c","status":{"state":"submitted"}}` }) },
    ...Object.entries({
      'every byte percent-encoded': percentEveryByte(SECRET),
      'every byte percent-encoded twice, lower case': percentEveryByte(SECRET, false, 2),
      'base64 with line breaks': broken(b64(SECRET), 4, '\n'),
      base32: base32(Buffer.from(SECRET)),
      'HTML references': htmlRefs(SECRET, 'hex'),
      'a literal \\u escape of every character': uEscaped(SECRET),
      ...encodings14(SECRET)
    }).map(([name, id]) => ({ name, fault: (): Parameters<Simulator['inject']>[1] => ({ kind: 'result', result: { kind: 'task', id, contextId: 'c', status: { state: 'submitted' } } }) }))
  ]

  it('a submission whose task id is the secret: 504 ambiguous_write, nothing of it stored, the request and the listing stay 200', async ({ startControlPair }) => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-echo-'))
    dirs.push(dir)
    const p = await startControlPair({ sim: { secret: SECRET }, env: { GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}` } })
    const t = p.gw.tokens.controller
    for (const [i, { name, fault }] of TASK_IDS.entries()) {
      // an ambiguous record blocks its campaign: one campaign per case
      const campaign = `camp-echo-${i}`
      await claim(p, t, campaign)
      const id = rid('sub')
      p.sim.inject({ rpcMethod: 'message/send' }, fault(), 1)
      const res = await p.post(t, `/v1/campaigns/${campaign}/submissions`, { requestId: id, parts: [{ kind: 'text', text: 'go' }] })
      expect(res.status, `${name}: ${res.text}`).toBe(504)
      expect(res.body.error).toMatchObject({ code: 'ambiguous_write', retryable: false })
      const record = await p.gw.app.ledger.get(id)
      expect(record?.state, name).toBe('ambiguous')
      expect(record?.taskId ?? null).toBeNull()
      expectNoForm(JSON.stringify(record), SECRET)
      // the record, its replay and the listing keep answering, to its caller and to an admin
      for (const token of [t, p.gw.tokens.admin]) {
        const one = await p.get(token, `/v1/campaigns/${campaign}/requests/${id}`)
        expect(one.status, one.text).toBe(200)
        const list = await p.get(token, `/v1/campaigns/${campaign}/requests`)
        expect(list.status, list.text).toBe(200)
        expect(list.body.requests.map((r: { requestId: string }) => r.requestId)).toContain(id)
      }
      const replay = await p.post(t, `/v1/campaigns/${campaign}/submissions`, { requestId: id, parts: [{ kind: 'text', text: 'go' }] })
      expect(replay.status).toBe(504)
      expect(replay.headers['idempotent-replayed']).toBe('true')
    }
    // nowhere on disk either: the database and its write-ahead log, byte for byte
    await p.gw.close()
    expectNoForm(ledgerBytes(dir), SECRET)
    expectNoForm(p.gw.logs.join(''), SECRET)
  })

  it('a front-door submission whose task id is the secret in a §14 form: ambiguous, nothing of it in the front send\'s stored answer', async ({ startControlPair }) => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-echo-'))
    dirs.push(dir)
    const p = await startControlPair({ sim: { secret: SECRET }, env: { GATEWAY_LEDGER_URL: `sqlite:${join(dir, 'ledger.db')}` } })
    const t = p.gw.tokens.controller
    for (const [i, [name, form]] of Object.entries(encodings14(SECRET)).entries()) {
      const campaign = `camp-echo-front-${i}`
      await claim(p, t, campaign)
      const messageId = rid('sub')
      p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'result', result: { kind: 'task', id: form, contextId: 'c', status: { state: 'submitted' } } }, 1)
      const res = await frontRpc(p.gw.url, t, 'message/send', submitSend(campaign, messageId))
      expectFrontRefused(res, name, 'ambiguous_write')
      expectNoForm(res.text, SECRET)
      const record = await p.gw.app.ledger.get(messageId)
      expect(record?.state, name).toBe('ambiguous')
      expect(record?.taskId ?? null).toBeNull()
      // a repeat replays the stored answer, which holds nothing of the remote's
      const again = await frontRpc(p.gw.url, t, 'message/send', submitSend(campaign, messageId))
      expectFrontRefused(again, `${name}, replayed`, 'ambiguous_write')
      expectNoForm(again.text, SECRET)
    }
    await p.gw.close()
    expectNoForm(ledgerBytes(dir), SECRET)
    expectNoForm(p.gw.logs.join(''), SECRET)
  })
})
