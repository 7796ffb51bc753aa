// Busy is not overloaded (docs/design.md#load-shedding): a gateway saturated by callers that
// re-send at once keeps serving them. Event-loop utilisation is ~1 whenever the gateway is
// busy, so shedding on it refused nearly everything a healthy gateway could serve; the delay
// bound is what sheds by default. Load comes from an autocannon child process, on loopback.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'

const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js')

async function saturate (url: string, token: string, seconds: number): Promise<{ total: number; non2xx: number; p50: number }> {
  const child = spawn(process.execPath, [autocannon, '--json', '-c', '64', '-d', String(seconds), '-H', `authorization=Bearer ${token}`, url], { stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  await new Promise((resolve) => child.on('exit', resolve))
  const r = JSON.parse(out) as { requests: { total: number }; non2xx: number; latency: { p50: number } }
  return { total: r.requests.total, non2xx: r.non2xx, p50: r.latency.p50 }
}

describe('a saturated gateway with the default shedding settings', () => {
  it('serves callers that re-send at once, instead of shedding them as overloaded', async () => {
    const sim = await startSimulator()
    // default pressure settings: only the test-friendly limits are raised
    const gw = await startGateway({ simulator: sim, env: { GATEWAY_RATE_LIMIT_READ: '10000000', GATEWAY_MAX_REQUESTS_PER_SOCKET: '0' } })
    gw.app.log.level = 'info'
    const r = await saturate(`${gw.url}/v1/upstream`, gw.tokens.reader, 3)
    const shed = r.total === 0 ? 1 : r.non2xx / r.total
    console.log(`saturation: ${r.total} requests in 3 s at 64 connections, ${(shed * 100).toFixed(1)}% not 2xx, p50 ${r.p50} ms`)
    expect(r.total).toBeGreaterThan(1000)
    expect(shed).toBeLessThan(0.05)
    await sim.close()
  }, 20_000)
})
