// A JSON-RPC read's exchange (src/upstream/client/rpc-exchange.ts `rpcExchange`, docs/design.md#hot-path):
// undici's handler interface instead of `request`, with the same rules, each shown against a
// purpose-built upstream on a real socket — the whole answer within the read deadline however
// slowly it trickles (bodyTimeout alone is renewed by every byte), the byte cap declared and
// streamed, a 3xx never followed, the body budget, an informational answer before the real one,
// and a read retried once only when nothing was sent.
import http from 'node:http'
import type net from 'node:net'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'

type Handler = (body: { id: string; method: string }, res: http.ServerResponse) => void
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => { while (closers.length > 0) await closers.pop()!() })

async function upstream (handler: Handler): Promise<{ origin: string; requests: () => number }> {
  let requests = 0
  const sockets = new Set<net.Socket>()
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (d: Buffer) => { raw += d.toString() })
    req.on('end', () => { requests += 1; handler(JSON.parse(raw), res) })
  })
  server.on('connection', (s: net.Socket) => { sockets.add(s) })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r) }))
  return { origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, requests: () => requests }
}

function client (origin: string, extra: { readTimeoutMs?: number; maxResponseBytes?: number; bodyBudgetBytes?: number } = {}): UpstreamClient {
  const c = createUpstreamClient({
    origin,
    basePath: '/a2a',
    secret: 'read-secret-123',
    authScheme: 'bearer',
    connectTimeoutMs: 1000,
    readTimeoutMs: extra.readTimeoutMs ?? 2000,
    mutationTimeoutMs: 2000,
    maxResponseBytes: extra.maxResponseBytes ?? 1024 * 1024,
    bodyBudgetBytes: extra.bodyBudgetBytes,
    logger: pino({ level: 'silent' })
  })
  closers.push(() => c.close())
  return c
}
const read = { method: 'tasks/get', params: { id: 't1' }, op: 'tasks.get', kind: 'read' as const }
const answer = (id: string, result: unknown = { kind: 'task', id: 't1' }): string => JSON.stringify({ jsonrpc: '2.0', id, result })

async function failure (p: Promise<unknown>): Promise<UpstreamCallError> {
  try { await p } catch (err) { if (err instanceof UpstreamCallError) return err; throw err }
  throw new Error('expected a failure')
}

describe('a JSON-RPC read', () => {
  it('answers the result, in one chunk or many', async () => {
    const u = await upstream((body, res) => {
      const text = answer(body.id, { kind: 'task', id: 't1', note: 'x'.repeat(100_000) })
      res.setHeader('content-type', 'application/json')
      res.write(text.slice(0, 10))
      setTimeout(() => { res.end(text.slice(10)) }, 20)
    })
    const r = await client(u.origin).rpc(read)
    expect(r).toMatchObject({ ok: true, httpStatus: 200, result: { kind: 'task', id: 't1' } })
  })

  it('times out at the read deadline while the body trickles a byte at a time, each byte inside the idle bound', async () => {
    const u = await upstream((body, res) => {
      const text = answer(body.id)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      let i = 0
      const t = setInterval(() => { if (i < text.length) res.write(text[i++]!); else { clearInterval(t); res.end() } }, 50)
      res.on('close', () => { clearInterval(t) })
    })
    const started = Date.now()
    const err = await failure(client(u.origin, { readTimeoutMs: 600 }).rpc(read))
    expect(err.kind).toBe('timeout')
    // the deadline plus the sweep's period, far before the ~2.5 s the whole body would take
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('times out at the read deadline while the headers never come, and lets the connection go', async () => {
    let closed = 0
    const u = await upstream((body, res) => { res.on('close', () => { closed++ }) })
    const c = client(u.origin, { readTimeoutMs: 400 })
    const started = Date.now()
    const err = await failure(c.rpc(read))
    expect(err.kind).toBe('timeout')
    // the deadline plus the sweep's period: no timer of undici's bounds this wait any more
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    expect(Date.now() - started).toBeLessThan(1200)
    await expect.poll(() => closed).toBe(1)
    // the next read goes on a new connection and is answered
    const answered = await upstream((body, res) => { res.end(answer(body.id)) })
    expect(await client(answered.origin).rpc(read)).toMatchObject({ ok: true, result: { id: 't1' } })
  })

  it('refuses a body over the cap, declared or streamed', async () => {
    const declared = await upstream((body, res) => { res.writeHead(200, { 'content-length': 5000 }); res.end('x'.repeat(5000)) })
    expect((await failure(client(declared.origin, { maxResponseBytes: 1000 }).rpc(read))).kind).toBe('too_large')
    const streamed = await upstream((body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('x'.repeat(600))
      setTimeout(() => { res.end('x'.repeat(600)) }, 20)
    })
    expect((await failure(client(streamed.origin, { maxResponseBytes: 1000 }).rpc(read))).kind).toBe('too_large')
  })

  it('never follows a 3xx', async () => {
    let followed = 0
    const target = await upstream((body, res) => { followed++; res.end(answer(body.id)) })
    const u = await upstream((body, res) => { res.writeHead(307, { location: `${target.origin}/a2a/` }); res.end() })
    expect((await failure(client(u.origin).rpc(read))).kind).toBe('redirect')
    expect(followed).toBe(0)
  })

  it('sheds a budgeted answer past the body budget, declared or streamed, and frees what it held', async () => {
    const big = 'y'.repeat(50_000)
    const declared = await upstream((body, res) => { const t = answer(body.id, { big }); res.writeHead(200, { 'content-length': Buffer.byteLength(t) }); res.end(t) })
    const c = client(declared.origin, { bodyBudgetBytes: 10_000 })
    expect((await failure(c.rpc({ ...read, budgeted: true }))).kind).toBe('saturated')
    const streamed = await upstream((body, res) => { res.writeHead(200, {}); res.end(answer(body.id, { big })) })
    const s = client(streamed.origin, { bodyBudgetBytes: 10_000 })
    expect((await failure(s.rpc({ ...read, budgeted: true }))).kind).toBe('saturated')
    // nothing was kept held: a small answer fits the same budget afterwards
    const small = await upstream((body, res) => { res.end(answer(body.id)) })
    const again = client(small.origin, { bodyBudgetBytes: 10_000 })
    expect(await again.rpc({ ...read, budgeted: true })).toMatchObject({ ok: true })
  })

  it('reads the real answer after an informational one', async () => {
    const u = await upstream((body, res) => {
      res.writeProcessing()
      res.end(answer(body.id))
    })
    expect(await client(u.origin).rpc(read)).toMatchObject({ ok: true, result: { id: 't1' } })
  })

  it('is not retried once the request was written: the connection cut mid-answer reaches the remote once', async () => {
    const u = await upstream((body, res) => {
      res.writeHead(200, { 'content-length': 1000 })
      res.write('{"jsonrpc"')
      setTimeout(() => { res.socket?.destroy() }, 20)
    })
    const err = await failure(client(u.origin).rpc(read))
    expect(err.nothingSent).toBe(false)
    expect(u.requests()).toBe(1)
  })
})
