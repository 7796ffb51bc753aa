// The mutation dispatcher of the upstream client (docs/design.md#single-shot): no retry by any
// path, a fresh connection per mutation, and a failure classified as "nothing sent" only when
// the connection never came up. Driven directly, against purpose-built upstreams on real
// sockets.
import http from 'node:http'
import https from 'node:https'
import type net from 'node:net'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { TRUSTED_CA_FILE, unknownServer } from '../helpers/tls.js'
import { readFileSync } from 'node:fs'

type Handler = (body: { id: string; method: string }, res: http.ServerResponse, req: http.IncomingMessage) => void
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => { while (closers.length > 0) await closers.pop()!() })

async function upstream (handler: Handler, tls?: { key: string; cert: string }): Promise<{ origin: string; connections: () => number; requests: () => number }> {
  let connections = 0
  let requests = 0
  const sockets = new Set<net.Socket>()
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    let raw = ''
    req.on('data', (d: Buffer) => { raw += d.toString() })
    req.on('end', () => { requests += 1; handler(JSON.parse(raw), res, req) })
  }
  const server = tls !== undefined ? https.createServer(tls, onRequest) : http.createServer(onRequest)
  server.on(tls !== undefined ? 'secureConnection' : 'connection', (s: net.Socket) => { connections += 1; sockets.add(s) })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r) }))
  const port = (server.address() as net.AddressInfo).port
  return { origin: `${tls !== undefined ? 'https' : 'http'}://127.0.0.1:${port}`, connections: () => connections, requests: () => requests }
}

function client (origin: string, extra: { mutationTimeoutMs?: number; caPem?: string } = {}): UpstreamClient {
  const c = createUpstreamClient({
    origin,
    basePath: '/a2a',
    secret: 'mutation-secret-123',
    authScheme: 'bearer',
    caPem: extra.caPem,
    connectTimeoutMs: 1000,
    readTimeoutMs: 2000,
    mutationTimeoutMs: extra.mutationTimeoutMs ?? 2000,
    maxResponseBytes: 1024 * 1024,
    logger: pino({ level: 'silent' })
  })
  closers.push(() => c.close())
  return c
}
const ok: Handler = (body, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { accepted: true } })) }
const mutation = { method: 'campaign/intervene', params: { campaign_id: 'c1' }, op: 'intervene', kind: 'mutation' as const }

async function failure (p: Promise<unknown>): Promise<UpstreamCallError> {
  try { await p } catch (err) { if (err instanceof UpstreamCallError) return err; throw err }
  throw new Error('expected a failure')
}

describe('mutation dispatch', () => {
  it('opens a fresh connection for every mutation and closes it after; reads keep theirs alive', async () => {
    const seen: Array<string | undefined> = []
    const up = await upstream((b, res, req) => { seen.push(req.headers.connection); ok(b, res, req) })
    const c = client(up.origin)
    for (let i = 0; i < 3; i++) expect(await c.rpc(mutation)).toMatchObject({ ok: true })
    expect(up.connections()).toBe(3)
    expect(seen).toEqual(['close', 'close', 'close'])
    await c.rpc({ ...mutation, kind: 'read' })
    expect(seen[3]).toBe('keep-alive')
  })

  it('connection refused: nothing sent, not retried', async () => {
    const up = await upstream(ok)
    const origin = up.origin
    await closers.pop()!()
    const err = await failure(client(origin).rpc(mutation))
    expect(err.kind).toBe('unreachable')
    expect(err.nothingSent).toBe(true)
  })

  it('a TLS handshake refused: nothing sent, the server never saw a request', async () => {
    const up = await upstream(ok, unknownServer)
    const err = await failure(client(up.origin, { caPem: readFileSync(TRUSTED_CA_FILE, 'utf8') }).rpc(mutation))
    expect(err).toMatchObject({ kind: 'unreachable', nothingSent: true })
    expect(up.requests()).toBe(0)
  })

  it('connection lost after the request was written: maybe sent, never re-sent', async () => {
    const up = await upstream((_b, _res, req) => { req.socket.destroy() })
    const err = await failure(client(up.origin).rpc(mutation))
    expect(err).toMatchObject({ kind: 'network', nothingSent: false })
    await new Promise((r) => setTimeout(r, 300))
    expect(up.requests()).toBe(1)
    expect(up.connections()).toBe(1)
  })

  it('no answer within the mutation timeout: maybe sent, never re-sent', async () => {
    const up = await upstream(() => { /* never answers */ })
    const started = Date.now()
    const err = await failure(client(up.origin, { mutationTimeoutMs: 300 }).rpc(mutation))
    expect(err).toMatchObject({ kind: 'timeout', nothingSent: false })
    expect(Date.now() - started).toBeLessThan(1500)
    await new Promise((r) => setTimeout(r, 300))
    expect(up.requests()).toBe(1)
  })

  it('a 5xx without a JSON-RPC body and a 3xx are failures after sending, not re-sent', async () => {
    const five = await upstream((_b, res) => { res.statusCode = 502; res.end('Bad Gateway') })
    expect(await failure(client(five.origin).rpc(mutation))).toMatchObject({ kind: 'http_status', httpStatus: 502, nothingSent: false })
    const three = await upstream((_b, res) => { res.statusCode = 307; res.setHeader('location', '/elsewhere'); res.end() })
    expect(await failure(client(three.origin).rpc(mutation))).toMatchObject({ kind: 'redirect', nothingSent: false })
    expect(five.requests() + three.requests()).toBe(2)
  })

  it('a JSON-RPC error comes back as a value with its code, for the caller to classify', async () => {
    const up = await upstream((b, res) => { res.end(JSON.stringify({ jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'remote words', data: { reason: 'stale_epoch' } } })) })
    const r = await client(up.origin).rpc(mutation)
    expect(r).toMatchObject({ ok: false, error: { code: -32000, data: { reason: 'stale_epoch' } } })
  })
})
