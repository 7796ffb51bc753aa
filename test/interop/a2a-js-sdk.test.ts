// The gateway against a real @a2a-js/sdk 1.3.0 server (docs/design.md#protocol-versions), in
// both of its modes: v1.0 only, and v1.0 with its v0.3 compatibility layer. The protocol is
// chosen from the card alone; callers see the same REST shapes whichever is spoken.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, generateKeyPair } from 'jose'
import { describe, expect, it, onTestFinished } from 'vitest'
import { startSdkServer, type SdkServer } from '../helpers/a2a-js-server.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const get = async (g: TestGateway, path: string) => await call(`${g.url}${path}`, { token: g.tokens.reader })

async function rig (server: SdkServer, env: Record<string, string> = {}): Promise<TestGateway> {
  return await startGateway({ upstreamUrl: server.url, env: { SPYNEL_AGENT_ZERO_API_KEY: 'interop-secret-12345', ...env } })
}

async function readsWork (g: TestGateway): Promise<void> {
  for (const [path, key] of [['/v1/supervisor/health', 'status'], ['/v1/supervisor/status', 'campaigns'], ['/v1/campaigns', 'campaigns']] as const) {
    const res = await get(g, path)
    expect(res.status, path).toBe(200)
    expect(res.body.result).toHaveProperty(key)
    expect(res.body.result.interop).toBe('a2a-js')
  }
}

describe.each(['v1.0', 'dual'] as const)('@a2a-js/sdk 1.3.0, %s', (mode) => {
  it('discovers A2A 1.0 from the card and speaks it: the three Argus reads', async () => {
    const server = await startSdkServer({ mode })
    try {
      const g = await rig(server)
      const u = (await get(g, '/v1/upstream')).body
      expect(u.protocol.version).toBe('1.0')
      expect(u.protocol.reason).toContain('speaks A2A 1.0')
      expect(u.card.protocolVersion).toBeNull()
      await readsWork(g)
      // v1.0 method names, each with the version header
      expect(server.rpc.map((r) => r.method)).toEqual(['SendMessage', 'SendMessage', 'SendMessage'])
      expect(server.rpc.every((r) => r.version === '1.0')).toBe(true)
    } finally { await server.close() }
  })

  it('projects a task in the same camelCase shape, and a missing task is 404', async () => {
    const server = await startSdkServer({ mode })
    try {
      const g = await rig(server)
      expect((await get(g, '/v1/supervisor/health')).status).toBe(200)
      const taskId = server.tasks[0]!
      const res = await get(g, `/v1/tasks/${taskId}`)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        taskId,
        state: 'completed',
        outcomeScope: 'attempt',
        supervisor: { revision: 7, stage: 'eval', runId: 'run-1', attemptId: 'att-1', sourceSha: '0123456789abcdef0123456789abcdef01234567', blocked: false },
        artifacts: [{ artifactId: 'result', name: 'argus', parts: [{ kind: 'data', data: { status: 'ok', interop: 'a2a-js' } }] }],
        artifactsTruncated: false
      })
      expect(server.rpc.at(-1)).toEqual({ method: 'GetTask', version: '1.0' })
      const missing = await get(g, '/v1/tasks/no-such-task')
      expect(missing.status).toBe(404)
      expect(missing.body.error.code).toBe('not_found')
    } finally { await server.close() }
  })
})

describe('@a2a-js/sdk 1.3.0, protocol changes', () => {
  it('a card that changes from v0.3 to v1.0 at run time moves the gateway to 1.0 on the next refresh', async () => {
    const server = await startSdkServer({ mode: 'dual', cardVersions: ['0.3'] })
    try {
      const g = await rig(server)
      expect((await get(g, '/v1/upstream')).body.protocol.version).toBe('0.3')
      await readsWork(g)
      expect(server.rpc.map((r) => r.method)).toEqual(['message/send', 'message/send', 'message/send'])
      expect(server.rpc.every((r) => r.version === undefined)).toBe(true)

      server.setCardVersions(['1.0', '0.3'])
      const refreshed = await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })
      expect(refreshed.status).toBe(200)
      expect(refreshed.body.protocol.version).toBe('1.0')
      server.rpc.length = 0
      await readsWork(g)
      expect(server.rpc.map((r) => r.method)).toEqual(['SendMessage', 'SendMessage', 'SendMessage'])
    } finally { await server.close() }
  })

  it('a v1.0-only server whose card advertises 0.3 answers -32009, no code of v0.3: 502 for each read, no version refused', async () => {
    const server = await startSdkServer({ mode: 'v1.0', cardVersions: ['0.3'] })
    try {
      const g = await rig(server)
      expect((await get(g, '/v1/upstream')).body.protocol.version).toBe('0.3')
      // the gateway speaks what the card says; the remote's -32009 is an ordinary error of that read
      for (const path of ['/v1/supervisor/health', '/v1/supervisor/status']) {
        const sent = server.rpc.length
        const res = await get(g, path)
        expect(res.status, path).toBe(502)
        expect(res.body.error.code).toBe('upstream_rejected')
        expect(server.rpc.length).toBe(sent + 1)
      }
      const u = (await get(g, '/v1/upstream')).body
      expect(u.protocol).toMatchObject({ version: '0.3', refusedVersion: null, refusedUntil: null })
      expect(u.capabilities['argus.supervisor.health'].state).toBe('available')
    } finally { await server.close() }
  })
})

describe('@a2a-js/sdk 1.3.0, card signing and caching', () => {
  it('a card signed by the SDK verifies against the JWKS file; an unsigned one fails closed at start', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
    const dir = mkdtempSync(join(tmpdir(), 'oo-gw-interop-'))
    onTestFinished(() => { rmSync(dir, { recursive: true, force: true }) })
    const jwksFile = `${dir}/card-keys.json`
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...await exportJWK(publicKey), kid: 'sdk-key-1', alg: 'ES256', use: 'sig' }] }))

    const signed = await startSdkServer({ mode: 'v1.0', signer: { privateKey, kid: 'sdk-key-1', alg: 'ES256' } })
    try {
      const g = await rig(signed, { GATEWAY_CARD_JWKS_FILE: jwksFile })
      const u = (await get(g, '/v1/upstream')).body
      expect(u.signature).toMatchObject({ state: 'verified', keyId: 'sdk-key-1', algorithm: 'ES256' })
      await readsWork(g)
    } finally { await signed.close() }

    const unsigned = await startSdkServer({ mode: 'v1.0' })
    try {
      const g = await rig(unsigned, { GATEWAY_CARD_JWKS_FILE: jwksFile })
      const u = (await get(g, '/v1/upstream')).body
      expect(u.card).toBeNull()
      expect(u.lastError).toBe('card signature: the card is unsigned and GATEWAY_CARD_JWKS_FILE requires a signature')
      expect((await get(g, '/v1/supervisor/health')).status).toBe(503)
      expect(unsigned.rpc).toHaveLength(0)
    } finally { await unsigned.close() }
  })

  it('refreshes send If-None-Match and take the 304; max-age is bounded by the configured interval', async () => {
    const server = await startSdkServer({ mode: 'v1.0' })
    try {
      const g = await rig(server, { GATEWAY_DISCOVERY_INTERVAL_MS: '200', GATEWAY_DISCOVERY_MIN_INTERVAL_MS: '100' })
      const first = (await get(g, '/v1/upstream')).body
      // the SDK sends max-age=3600: stretched no further than the 200 ms interval. lastRefreshAt is
      // the refresh's start and the next is scheduled at its end, so the gap holds the refresh's
      // own duration too (past 60 ms on a loaded host): bounded here far below 3600 s, and the
      // cadence below (two refreshes or more in 700 ms) holds the interval itself
      expect(Date.parse(first.nextRefreshAt) - Date.parse(first.lastRefreshAt)).toBeLessThan(1000)
      await new Promise((r) => setTimeout(r, 700))
      expect(server.cards[0]).toEqual({ status: 200, ifNoneMatch: undefined })
      const later = server.cards.slice(1)
      expect(later.length).toBeGreaterThanOrEqual(2)
      expect(later.every((c) => c.status === 304 && c.ifNoneMatch !== undefined)).toBe(true)
      const u = (await get(g, '/v1/upstream')).body
      expect(u.consecutiveFailures).toBe(0)
      expect(u.card.sha256).toBe(first.card.sha256)
      await readsWork(g)
    } finally { await server.close() }
  })
})
