// The bin's operator commands (`requests`, `reconcile`, `acknowledge`; src/cli/requests-command.ts,
// docs/design.md#finding-unresolved) run as an operator runs them, a child process writing to its
// stdout and stderr, against a purpose-built gateway on 127.0.0.1. That gateway answers with a
// caller name, a cursor, a note and an error message carrying terminal escapes (clear screen,
// cursor home, a window title, an 8-bit CSI), bidirectional and zero-width controls, and a line
// break followed by a fake "no unresolved requests": none of it reaches the terminal as such, in
// the table, the record, the error lines or --json (whose JSON keeps the same value). And the
// token goes over https only to a server whose certificate checks out, whatever
// NODE_TLS_REJECT_UNAUTHORIZED says; NODE_EXTRA_CA_CERTS trusts a private CA.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { afterEach, describe, expect, it } from 'vitest'
import { startBin } from '../helpers/child.js'
import { TRUSTED_CA_FILE, trustedServer } from '../helpers/tls.js'

const TOKEN = 'tok-operator-0123456789abcdef'
const HOSTILE = 'ops\u001b[2J\u001b[H\u001b]0;pwned\u0007\u009b2J\u007f\u202eevil\u2066x\u2069\u200b\u200f\u00ad\r\nno unresolved (ambiguous or pending) requests\u2028'
/** what a terminal would act on rather than show: every control (C0, DEL, C1), format and line-separator character */
const ACTS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

const record = {
  requestId: 'req-hostile-0001',
  campaignId: 'camp-1',
  operation: 'intervene',
  state: 'ambiguous',
  caller: `jwt:${HOSTILE}`,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:01.000Z',
  controllerEpoch: 3,
  taskId: null,
  outcomeCode: null,
  reconcileFailures: 1,
  resolution: { kind: 'acknowledged', by: `jwt:${HOSTILE}`, at: '2030-01-01T00:00:02.000Z', note: HOSTILE, resolution: 'assume_applied' }
}
const list = { requests: [record], nextCursor: `c${HOSTILE}` }
const refusal = { error: { code: 'acknowledge_unsafe', message: HOSTILE, retryable: false } }

interface Fake { url: string; seen: Array<{ method: string; url: string; authorized: boolean }>; close: () => Promise<void> }

const servers: Server[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(async (s) => await new Promise((resolve) => { s.close(resolve); s.closeAllConnections() }))) })

function answer (req: IncomingMessage, res: ServerResponse): void {
  const send = (status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  if (req.method === 'GET' && req.url === '/v1/requests') send(200, list)
  else if (req.method === 'POST' && req.url?.endsWith('/reconcile') === true) send(200, record)
  else if (req.method === 'POST' && req.url?.endsWith('/acknowledge') === true) send(409, refusal)
  else send(404, { error: { code: 'not_found', message: 'no', retryable: false } })
}

async function fakeGateway (tls = false): Promise<Fake> {
  const seen: Fake['seen'] = []
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({ method: req.method!, url: req.url!, authorized: req.headers.authorization === `Bearer ${TOKEN}` })
    req.resume()
    req.on('end', () => { answer(req, res) })
  }
  const server = tls ? createHttpsServer(trustedServer, handler) : createHttpServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, seen, close: async () => {} }
}

async function bin (args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const p = startBin(args, { GATEWAY_TOKEN: TOKEN, ...env })
  const code = await p.exited
  return { code, out: p.out(), err: p.err() }
}

/** nothing a terminal acts on in any line, none of the planted sequences, no line the gateway drew */
function inert (text: string): void {
  for (const s of ['\u001b[2J', '\u001b]0;', '\u009b', '\u202e', '\u2066', '\u200b', '\r']) expect(text).not.toContain(s)
  for (const line of text.split('\n')) {
    expect(line).not.toMatch(ACTS)
    expect(line).not.toMatch(/^no unresolved/)
  }
  expect(text).not.toContain(TOKEN)
}

describe('what the bin prints from a gateway\'s answer', () => {
  it('requests, reconcile and acknowledge print no terminal escape, bidirectional control or line the gateway drew; --json keeps the value, escaped', async () => {
    const gw = await fakeGateway()
    const env = { GATEWAY_URL: gw.url }

    const table = await bin(['requests'], env)
    expect(table.code, table.err).toBe(0)
    inert(table.out + table.err)
    const lines = table.out.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^CAMPAIGN\s+REQUEST\s+OPERATION\s+STATE\s+CALLER/)
    // the row is one line, the caller shown with each unprintable character as `?`
    expect(lines[1]).toContain('req-hostile-0001')
    expect(lines[1]).toContain('jwt:ops?[2J?[H?]0;pwned??2J??evil?x??????no unresolved (ambiguous or pending) requests?')
    expect(lines.at(-1)).toMatch(/^more: openoperator-gateway requests --cursor cops\?\[2J/)

    const json = await bin(['requests', '--json'], env)
    expect(json.code, json.err).toBe(0)
    inert(json.out + json.err)
    expect(JSON.parse(json.out)).toEqual(list)

    const reconciled = await bin(['reconcile', 'camp-1', 'req-hostile-0001'], env)
    expect(reconciled.code, reconciled.err).toBe(0)
    inert(reconciled.out + reconciled.err)
    expect(reconciled.out).toMatch(/^ {2}caller jwt:ops\?\[2J/m)
    const reconciledJson = await bin(['reconcile', 'camp-1', 'req-hostile-0001', '--json'], env)
    inert(reconciledJson.out + reconciledJson.err)
    expect(JSON.parse(reconciledJson.out)).toEqual(record)

    const refused = await bin(['acknowledge', 'camp-1', 'req-hostile-0001', '--resolution', 'assume_applied', '--note', 'checked'], env)
    expect(refused.code).toBe(1)
    inert(refused.out + refused.err)
    expect(refused.err).toMatch(/^acknowledge camp-1 req-hostile-0001: acknowledge_unsafe \(HTTP 409\): ops\?\[2J/)
    expect(gw.seen.map((s) => s.authorized)).toEqual([true, true, true, true, true])
  })
})

describe('the bin over https', () => {
  it('a certificate it cannot verify is refused before the token is sent, even with NODE_TLS_REJECT_UNAUTHORIZED=0', async () => {
    const gw = await fakeGateway(true)
    const r = await bin(['requests'], { GATEWAY_URL: gw.url, NODE_TLS_REJECT_UNAUTHORIZED: '0' })
    expect(r.code).toBe(1)
    // Node warns on stderr that the variable is set; the bin's own line follows
    expect(r.err).toContain('NODE_TLS_REJECT_UNAUTHORIZED')
    expect(r.err.trim().split('\n').filter((l) => l.startsWith('requests:'))).toHaveLength(1)
    expect(r.err.trim().split('\n').find((l) => l.startsWith('requests:'))).toMatch(new RegExp(`^requests: no answer from ${gw.url.replaceAll('.', '\\.')}/ \\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)\\)$`))
    expect(gw.seen).toEqual([])
  })

  it('NODE_EXTRA_CA_CERTS trusts the gateway\'s private CA: answered, over 127.0.0.1 and localhost', async () => {
    const gw = await fakeGateway(true)
    for (const url of [gw.url, gw.url.replace('127.0.0.1', 'localhost')]) {
      const r = await bin(['requests'], { GATEWAY_URL: url, NODE_EXTRA_CA_CERTS: TRUSTED_CA_FILE })
      expect(r.code, r.err).toBe(0)
      expect(r.out).toContain('req-hostile-0001')
    }
    expect(gw.seen.map((s) => s.authorized)).toEqual([true, true])
  })
})
