// SIGHUP in the bin (docs/operating.md#callers): the gateway re-reads GATEWAY_CALLERS_FILE while
// it serves — the caller that stays is never refused, the added one is served, the removed one
// refused — and with inline GATEWAY_CALLERS it says there is nothing to reload and keeps running
// (Node's default for SIGHUP would end the process).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { listenUrlOf, startGatewayChild, waitFor } from '../helpers/child.js'
import { call } from '../helpers/http.js'

const READ = '/v1/supervisor/health'
const token = (): string => `tok-${randomBytes(18).toString('base64url')}`
const caller = (name: string, t: string): object => ({ name, tokenSha256: sha256Hex(t), scopes: ['read'] })
const BASE = { HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', GATEWAY_LEDGER_URL: 'sqlite::memory:', GATEWAY_RATE_LIMIT_READ: '10000000' }

describe('SIGHUP', () => {
  it('re-reads GATEWAY_CALLERS_FILE under load with no request dropped', async () => {
    const [stay, gone, added] = [token(), token(), token()]
    const path = join(mkdtempSync(join(tmpdir(), 'oogw-hup-')), 'callers.json')
    writeFileSync(path, JSON.stringify([caller('stay', stay), caller('gone', gone)]))
    const p = startGatewayChild({ ...BASE, GATEWAY_CALLERS_FILE: path })
    const url = await listenUrlOf(p)
    expect((await call(`${url}${READ}`, { token: gone })).status).toBe(200)

    let running = true
    const statuses: number[] = []
    const load = Promise.all(Array.from({ length: 4 }, async () => {
      while (running) statuses.push((await call(`${url}${READ}`, { token: stay })).status)
    }))
    await waitFor(() => statuses.length > 50 ? true : undefined, 10_000, 'load')
    writeFileSync(`${path}.tmp`, JSON.stringify([caller('stay', stay), caller('added', added)]))
    renameSync(`${path}.tmp`, path)
    p.child.kill('SIGHUP')
    await waitFor(() => /"trigger":"signal".*GATEWAY_CALLERS_FILE reloaded/.test(p.out()) ? true : undefined, 10_000, 'the reload on SIGHUP')
    const at = statuses.length
    await waitFor(() => statuses.length > at + 50 ? true : undefined, 10_000, 'load after the reload')
    running = false
    await load
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    expect((await call(`${url}${READ}`, { token: added })).status).toBe(200)
    expect((await call(`${url}${READ}`, { token: gone })).status).toBe(401)
    expect(p.child.exitCode).toBeNull()
  })

  it('with inline GATEWAY_CALLERS: nothing to reload, the process keeps serving', async () => {
    const t = token()
    const p = startGatewayChild({ ...BASE, GATEWAY_CALLERS: JSON.stringify([caller('ops', t)]) })
    const url = await listenUrlOf(p)
    p.child.kill('SIGHUP')
    await waitFor(() => p.out().includes('nothing to reload') ? true : undefined, 10_000, 'the SIGHUP warning')
    expect((await call(`${url}${READ}`, { token: t })).status).toBe(200)
    expect(p.child.exitCode).toBeNull()
  })
})
