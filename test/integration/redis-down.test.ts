// Redis down (docs/design.md#rate-limits): rate limiting fails open. An authenticated read is
// served quickly, gateway_rate_limit_store_errors_total rises, /readyz reports redis false
// but stays 200, and ioredis errors reach the log only as rate-limited JSON lines. The second
// test stops a Redis of its own mid-run (never the machine's) and starts it again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { afterEach, describe, expect, vi } from 'vitest'
import { waitFor } from '../helpers/child.js'
import { it } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0
if (!HAVE_REDIS_SERVER) console.warn('SKIP redis-down (stopped mid-run): redis-server is not on PATH')

const servers: ChildProcess[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) s.kill('SIGKILL')
  vi.restoreAllMocks()
})

/** a loopback port nothing listens on: bound, then released */
async function closedPort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const port = (srv.address() as { port: number }).port
  await new Promise<void>((resolve) => srv.close(() => resolve()))
  return port
}

async function storeErrors (g: TestGateway): Promise<number> {
  const text = (await call(`${g.metricsUrl}/metrics`)).text
  return Number(/^gateway_rate_limit_store_errors_total (\d+)/m.exec(text)?.[1] ?? 'NaN')
}

async function timed (url: string, token: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now()
  const res = await call(url, { token })
  return { status: res.status, ms: performance.now() - t0 }
}

function expectJsonLogOnly (g: TestGateway, consoleError: ReturnType<typeof vi.spyOn>): void {
  for (const line of g.logs.join('').split('\n').filter((l) => l !== '')) expect(() => JSON.parse(line) as unknown).not.toThrow()
  expect(consoleError.mock.calls.flat().join(' ')).not.toMatch(/Unhandled error event/)
}

describe('Redis down: rate limiting fails open', () => {
  it('with a Redis URL that refuses, authenticated reads are served fast, counted and reported', async ({ startPair }) => {
    const consoleError = vi.spyOn(console, 'error')
    const { gw: g } = await startPair({ env: { GATEWAY_REDIS_URL: `redis://127.0.0.1:${await closedPort()}` } })
    const answers: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 20; i++) answers.push(await timed(`${g.url}/v1/upstream`, g.tokens.reader))
    const worst = Math.max(...answers.map((a) => a.ms))
    console.log(`redis-down (refused): 20 reads, statuses ${[...new Set(answers.map((a) => a.status))].join(',')}, slowest ${worst.toFixed(1)} ms`)
    expect(answers.every((a) => a.status === 200)).toBe(true)
    expect(worst).toBeLessThan(500)
    // a bad token is still refused: failing open never skips authentication
    expect((await call(`${g.url}/v1/upstream`, { token: 'not-a-token' })).status).toBe(401)

    expect(await storeErrors(g)).toBeGreaterThanOrEqual(20)
    const ready = await call(`${g.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ ready: true, checks: { card: true, ledger: true, redis: false } })

    expectJsonLogOnly(g, consoleError)
    // the first connection error is logged, the next ones are not for 30 s
    const redisLines = g.logs.filter((l) => l.includes('"redis unavailable"'))
    expect(redisLines.length).toBe(1)
    expect(JSON.parse(redisLines[0]!)).toMatchObject({ level: 40 })
  })

  it.skipIf(!HAVE_REDIS_SERVER)('with Redis stopped mid-run: enforced while up, served and counted while down, enforced again after restart', async ({ startPair }) => {
    const consoleError = vi.spyOn(console, 'error')
    const port = await closedPort()
    const startRedis = async (): Promise<void> => {
      const s = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
      servers.push(s)
      await waitFor(() => spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().includes('PONG') === true ? true : undefined, 5000, 'redis-server')
    }
    await startRedis()
    const { gw: g } = await startPair({ env: { GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_RATE_LIMIT_READ: '3' } })
    const read = async (): Promise<{ status: number; ms: number }> => await timed(`${g.url}/v1/upstream`, g.tokens.reader)

    const up = [await read(), await read(), await read(), await read()]
    expect(up.map((a) => a.status)).toEqual([200, 200, 200, 429])
    expect((await call(`${g.url}/readyz`)).body.checks.redis).toBe(true)

    const redis = servers.pop()!
    redis.kill('SIGKILL')
    await new Promise((resolve) => redis.once('exit', resolve))
    const before = await storeErrors(g)
    const down: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 10; i++) down.push(await read())
    expect(down.every((a) => a.status === 200)).toBe(true)
    expect(Math.max(...down.map((a) => a.ms))).toBeLessThan(500)
    // the metrics listener may serve a render up to a second old: poll
    const deadline = Date.now() + 3000
    let after = await storeErrors(g)
    while (after <= before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      after = await storeErrors(g)
    }
    expect(after).toBeGreaterThan(before)
    const notReady = await call(`${g.url}/readyz`)
    expect(notReady.status).toBe(200)
    expect(notReady.body.checks.redis).toBe(false)

    // a fresh Redis on the same port: the client reconnects and the budget holds again
    await startRedis()
    await waitFor(() => g.app.redis?.status === 'ready' ? true : undefined, 5000, 'the client to reconnect')
    const again = [await read(), await read(), await read(), await read()]
    console.log(`redis-down (stopped mid-run): up ${up.map((a) => a.status).join(',')} · down 10×${[...new Set(down.map((a) => a.status))].join(',')} slowest ${Math.max(...down.map((a) => a.ms)).toFixed(1)} ms · restarted ${again.map((a) => a.status).join(',')}`)
    expect(again.map((a) => a.status)).toEqual([200, 200, 200, 429])
    expect((await call(`${g.url}/readyz`)).body.checks.redis).toBe(true)
    expectJsonLogOnly(g, consoleError)
  })

  it.skipIf(!HAVE_REDIS_SERVER)('with Redis hung (SIGSTOP): one command timeout per back-off, not two per request; the store is used again after SIGCONT', async ({ startPair }) => {
    const port = await closedPort()
    const s = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    servers.push(s)
    await waitFor(() => spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().includes('PONG') === true ? true : undefined, 5000, 'redis-server')
    const { gw: g } = await startPair({ env: { GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_RATE_LIMIT_READ: '1000' } })
    const read = async (): Promise<{ status: number; ms: number }> => await timed(`${g.url}/v1/upstream`, g.tokens.reader)
    expect((await read()).status).toBe(200)

    s.kill('SIGSTOP')
    const hung: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 30; i++) hung.push(await read())
    s.kill('SIGCONT')
    const sorted = hung.map((a) => a.ms).sort((a, b) => a - b)
    const p50 = sorted[Math.floor(sorted.length / 2)]!
    const slow = hung.filter((a) => a.ms > 200).length
    console.log(`redis-down (hung): 30 reads, p50 ${p50.toFixed(1)} ms, ${slow} over 200 ms, slowest ${sorted.at(-1)!.toFixed(1)} ms`)
    expect(hung.every((a) => a.status === 200)).toBe(true)
    // the first request pays the command timeouts; the back-off spares the rest
    expect(p50).toBeLessThan(100)
    expect(slow).toBeLessThanOrEqual(3)

    // past the back-off the store answers again: no more failed or skipped calls
    await new Promise((resolve) => setTimeout(resolve, 2200))
    expect((await read()).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 1100)) // the metrics render is cached for 1 s
    const settled = await storeErrors(g)
    for (let i = 0; i < 5; i++) expect((await read()).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await storeErrors(g)).toBe(settled)
  })
})
