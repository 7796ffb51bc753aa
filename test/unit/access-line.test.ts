// The access line written from its fixed fields (src/http/access-log.ts) is the line pino would have
// written — the same fields in the same order, the same values — and goes through the same scrub
// of every secret form and the same query redaction. Over a real socket: Fastify with the
// gateway's logger and LogController, each request logged both ways.
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import type pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { AccessLog } from '../../src/http/access-log.js'
import { createLogger } from '../../src/core/logger.js'
import { installRequestChild } from '../../src/core/request-logger.js'
import { genReqId } from '../../src/http/request-id.js'

const SECRET = 'Zq3vQ8sL1xT7mN2pR5wY9kB4'
let close: (() => Promise<void>) | undefined
afterEach(async () => { await close?.(); close = undefined })

async function serve (opts: { mixin?: () => object; level?: string } = {}): Promise<{ url: string; lines: () => Array<Record<string, unknown>>; raw: string[] }> {
  const raw: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { raw.push(String(chunk)); cb() } })
  const logger = createLogger({ level: opts.level ?? 'info', secrets: new Set([SECRET]), destination: sink as unknown as pino.DestinationStream, mixin: opts.mixin })
  // as src/app.ts makes it: the gateway's request ids and request loggers
  const app = Fastify({ loggerInstance: logger, logController: new AccessLog(true), genReqId })
  installRequestChild(app.log as unknown as pino.Logger)
  app.get('/v1/tasks/:id', async () => ({ ok: true }))
  // pino's own line for the same request, for comparison (`pino` as its msg)
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime * 1000) / 1000 }, 'pino')
    done()
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const a = app.server.address() as { port: number }
  close = async () => { await app.close() }
  return { url: `http://127.0.0.1:${a.port}`, raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) }
}

const comparable = (l: Record<string, unknown>): Record<string, unknown> => ({ ...l, time: 0, responseTime: 0, msg: '' })

describe('the access line', () => {
  it('has pino\'s fields, order and values, the query redacted and every secret form scrubbed', async () => {
    const s = await serve()
    for (const path of ['/v1/tasks/t-1', `/v1/tasks/${SECRET}?token=abc&x=1`, `/v1/tasks/${encodeURIComponent('a"b\\c')}`, '/nowhere?q=1']) {
      await (await fetch(s.url + path, { headers: { 'x-forwarded-for': '10.0.0.1' } })).text()
    }
    const lines = s.lines()
    const direct = lines.filter((l) => l.msg === 'request completed')
    const viaPino = lines.filter((l) => l.msg === 'pino')
    expect(direct).toHaveLength(4)
    expect(viaPino).toHaveLength(4)
    for (let i = 0; i < 4; i++) {
      expect(Object.keys(direct[i]!)).toEqual(Object.keys(viaPino[i]!))
      expect(comparable(direct[i]!)).toEqual(comparable(viaPino[i]!))
      expect(typeof direct[i]!.time).toBe('number')
      expect(typeof direct[i]!.responseTime).toBe('number')
    }
    expect(direct[0]).toMatchObject({ level: 30, req: { method: 'GET', url: '/v1/tasks/t-1', route: '/v1/tasks/:id', remoteAddress: '127.0.0.1' }, res: { statusCode: 200 } })
    expect(direct[1]!.req).toMatchObject({ url: '/v1/tasks/[REDACTED]?token=[REDACTED]&[REDACTED]' })
    expect(direct[3]).toMatchObject({ req: { url: '/nowhere?[REDACTED]' }, res: { statusCode: 404 } })
    expect((direct[3]!.req as Record<string, unknown>).route).toBeUndefined()
    expect(s.raw.join('')).not.toContain(SECRET)
  })

  it('a logger with a mixin (the trace id) gets pino\'s line, with the mixin\'s fields', async () => {
    const s = await serve({ mixin: () => ({ traceId: 'abc123' }) })
    await (await fetch(`${s.url}/v1/tasks/t-2`)).text()
    const line = s.lines().find((l) => l.msg === 'request completed')
    expect(line).toMatchObject({ traceId: 'abc123', req: { url: '/v1/tasks/t-2' } })
  })

  it('above info: no access line', async () => {
    const s = await serve({ level: 'warn' })
    await (await fetch(`${s.url}/v1/tasks/t-3`)).text()
    expect(s.raw).toEqual([])
  })
})
