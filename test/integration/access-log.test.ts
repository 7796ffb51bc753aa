// The access line (docs/design.md#logging, docs/design.md#hot-path): one `request completed` line
// per request by default; GATEWAY_ACCESS_LOG=false drops exactly that line — its measured cost
// (BENCHMARKS.md) — and never an error line: a failed read is still logged.
import { describe, expect } from 'vitest'
import { it, type Fixtures } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

type Line = { msg?: string; reqId?: string; level?: number; code?: string }
const parsed = (logs: string[]): Line[] => logs.map((l) => JSON.parse(l) as Line)

/** three good reads, then one that fails because the remote is gone; the lines of each, by request id */
async function run (startPair: Fixtures['startPair'], env: Record<string, string>): Promise<{ good: Line[][]; failed: Line[]; goodIds: string[] }> {
  const { sim, gw: g } = await startPair({ env })
  const goodIds: string[] = []
  for (let i = 0; i < 3; i++) {
    const r = await call(`${g.url}/v1/upstream`, { token: g.tokens.reader })
    expect(r.status).toBe(200)
    goodIds.push(String(r.headers['x-request-id']))
  }
  await sim.close()
  const bad = await call(`${g.url}/v1/supervisor/health`, { token: g.tokens.reader })
  expect(bad.status).toBeGreaterThanOrEqual(500)
  const badId = String(bad.headers['x-request-id'])
  const lines = parsed(g.logs)
  return { good: goodIds.map((id) => lines.filter((l) => l.reqId === id)), failed: lines.filter((l) => l.reqId === badId), goodIds }
}

describe('access log', () => {
  it('by default: exactly one access line per request, beside the failure line of a failed one', async ({ startPair }) => {
    const { good, failed } = await run(startPair, {})
    for (const lines of good) expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(1)
    expect(failed.filter((l) => l.msg === 'request completed')).toHaveLength(1)
    expect(failed.some((l) => l.msg === 'request failed' && l.level === 40)).toBe(true)
  })

  it('GATEWAY_ACCESS_LOG=false: no access line, and the failure is still logged', async ({ startPair }) => {
    const { good, failed } = await run(startPair, { GATEWAY_ACCESS_LOG: 'false' })
    for (const lines of good) expect(lines.filter((l) => l.msg === 'request completed')).toEqual([])
    expect(failed.filter((l) => l.msg === 'request completed')).toEqual([])
    expect(failed.some((l) => l.msg === 'request failed' && l.level === 40)).toBe(true)
  })
})
