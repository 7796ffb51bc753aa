// The gateway against the simulator's A2A v1.0 and dual protocols (docs/design.md#protocol-versions,
// docs/design.md#signed-cards): callers see the same REST answers as over v0.3; campaign control
// over v1.0 sends each mutation once; -32009 on a mutation is ambiguous (the rest of -32009 is in
// version-refusal.test.ts); signed cards verify, a tampered one is refused and the last good card
// stays, empty members added after signing are not read; keys rotate through the JWKS file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportJWK, generateKeyPair } from 'jose'
import { describe, expect, onTestFinished } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { eventually } from '../helpers/jwks.js'

const get = async (g: TestGateway, path: string) => await call(`${g.url}${path}`, { token: g.tokens.reader })
const refresh = async (g: TestGateway) => await call(`${g.url}/v1/upstream/refresh`, { method: 'POST', token: g.tokens.admin })

/** the REST answers a caller sees, ids aside */
async function restView (g: TestGateway): Promise<unknown[]> {
  const out: unknown[] = []
  for (const path of ['/v1/supervisor/health', '/v1/supervisor/status', '/v1/campaigns']) {
    const res = await get(g, path)
    expect(res.status, path).toBe(200)
    // the simulator's payload echoes the read's request id and its time: the rest must be equal
    const { requestId: _id, checkedAt: _at, ...result } = res.body.result as Record<string, unknown>
    out.push({ operation: res.body.operation, result })
  }
  return out
}

describe('A2A v1.0 and dual remotes (simulator)', () => {
  it('the same REST answers over v0.3, v1.0 and dual, the version chosen from the card', async ({ startPair }) => {
    const views: unknown[] = []
    for (const protocol of ['v0.3', 'v1.0', 'dual'] as const) {
      const { sim, gw: g } = await startPair({ sim: { protocol } })
      const u = (await get(g, '/v1/upstream')).body
      expect(u.protocol.version, protocol).toBe(protocol === 'v0.3' ? '0.3' : '1.0')
      views.push(await restView(g))
      const names = new Set(sim.rpcCalls().map((c) => c.method))
      expect([...names], protocol).toEqual([protocol === 'v0.3' ? 'message/send' : 'SendMessage'])
    }
    expect(views[1]).toEqual(views[0])
    expect(views[2]).toEqual(views[0])
  })

  it('campaign control over v1.0: claim, submit (SendMessage, returnImmediately), intervene, cancel (CancelTask), each once', async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { protocol: 'v1.0' } })
    const t = p.gw.tokens.controller
    expect((await p.get(t, '/v1/upstream')).body).toMatchObject({ mode: 'controller', protocol: { version: '1.0' } })
    await claim(p, t, 'camp-v1')
    const sub = await p.post(t, '/v1/campaigns/camp-v1/submissions', { requestId: rid('sub'), parts: [{ kind: 'text', text: 'run the next stage' }, { kind: 'data', data: { stage: 3 } }] })
    expect(sub.status, JSON.stringify(sub.body)).toBe(202)
    expect(sub.body.state).toBe('submitted')
    const send = p.calls('SendMessage').find((c) => c.params.message?.metadata?.argus_supervisor !== undefined)!
    expect(send.params.configuration.returnImmediately).toBe(true)
    expect(send.params.message.parts).toEqual([{ text: 'run the next stage' }, { data: { stage: 3 } }])
    expect(send.params.message.messageId).toBe(sub.body.requestId)
    expect((await p.post(t, '/v1/campaigns/camp-v1/interventions', { requestId: rid('int'), intervention: { action: 'pause' } })).status).toBe(200)
    const task = await get(p.gw, `/v1/tasks/${sub.body.taskId as string}`)
    expect(task.status).toBe(200)
    expect(['submitted', 'working']).toContain(task.body.state)
    const cancel = await p.post(t, '/v1/campaigns/camp-v1/cancel', { requestId: rid('cancel') })
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200)
    expect(cancel.body).toMatchObject({ taskId: sub.body.taskId, state: 'canceled' })
    expect(p.calls('CancelTask')).toHaveLength(1)
    expect(p.calls('tasks/cancel')).toHaveLength(0)
    // the control fixture checks after the test that no request id reached the remote twice
  })

  it('a -32009 on a mutation over v0.3 is ambiguous (never taken as not applied), and, being no v0.3 code, refuses no version', async ({ startControlPair }) => {
    // a v1.0-only remote whose card claims 0.3: the claim goes out as v0.3 and the remote answers -32009
    const p = await startControlPair({ sim: { protocol: 'v1.0' } })
    const t = p.gw.tokens.controller
    const url = p.sim.url
    p.sim.setCard((c) => ({ ...c, supportedInterfaces: [{ url: `${url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }] }))
    expect((await refresh(p.gw)).body.protocol.version).toBe('0.3')
    const res = await p.post(t, '/v1/campaigns/camp-vns/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('ambiguous_write')
    const u = (await p.get(t, '/v1/upstream')).body
    expect(u.protocol).toMatchObject({ version: '0.3', refusedVersion: null, refusedUntil: null })
    expect(u.mode).toBe('controller')
    // a read answered -32009 over v0.3 is an ordinary upstream error, each time
    for (let i = 0; i < 2; i++) {
      const read = await p.get(t, '/v1/supervisor/health')
      expect(read.status).toBe(502)
      expect(read.body.error.code).toBe('upstream_rejected')
    }
  })
  it('a card that offers only versions the gateway cannot speak: nothing is called, /v1/upstream names them, and reads are 503', async ({ startPair }) => {
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0' } })
    expect((await get(g, '/v1/supervisor/health')).status).toBe(200)
    const url = sim.url
    sim.setCard((c) => ({ ...c, supportedInterfaces: [{ url: `${url}/a2a/`, protocolBinding: 'JSONRPC', protocolVersion: '2.0' }, { url: `${url}/a2a/`, protocolBinding: 'GRPC', protocolVersion: '1.0' }] }))
    const u = (await refresh(g)).body
    expect(u.lastError).toBeNull()
    expect(u.protocol.version).toBeNull()
    const why = `the card's JSON-RPC interface at ${url}/a2a/ speaks A2A 2.0; the gateway speaks 1.0 and 0.3`
    expect(u.protocol.reason).toBe(why)
    expect(u.missingPrerequisites).toContain(why)
    expect(u.capabilities['argus.supervisor.health']).toEqual({ state: 'unavailable', reason: why })
    const sent = sim.rpcCalls().length
    const res = await get(g, '/v1/supervisor/health')
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('capability_unavailable')
    expect(res.body.error.missingPrerequisites).toEqual([why])
    expect(sim.rpcCalls().length).toBe(sent)
  })
})

describe('signed cards (simulator)', () => {
  function jwksFile (): { write: (keys: unknown[]) => void; path: string } {
    const dir = mkdtempSync(join(tmpdir(), 'oo-gw-jwks-'))
    onTestFinished(() => { rmSync(dir, { recursive: true, force: true }) })
    const path = join(dir, 'card-keys.json')
    return { path, write: (keys) => { writeFileSync(path, JSON.stringify({ keys })) } }
  }
  const keyPair = async (alg: 'ES256' | 'RS256', kid: string) => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
    return { signing: { privateKey, kid, alg }, jwk: { ...await exportJWK(publicKey), kid, alg } }
  }

  it.for(['ES256', 'RS256'] as const)('%s: verified; a tampered card is a failed refresh that keeps the last good one; reordered keys still verify', async (alg, { startPair }) => {
    const k = await keyPair(alg, `sim-${alg}`)
    const file = jwksFile()
    file.write([k.jwk])
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0', profile: 'campaign-control', cardSigning: { keys: [k.signing] } }, env: { GATEWAY_CARD_JWKS_FILE: file.path, GATEWAY_CONTROL_ENABLED: 'true' } })
    const first = (await get(g, '/v1/upstream')).body
    expect(first.signature).toMatchObject({ state: 'verified', keyId: `sim-${alg}`, algorithm: alg })
    expect(first.mode).toBe('controller')

    // the signed body, then changed: policy no longer enforced — exactly what a forger would want hidden
    sim.setCardAfterSigning((c) => {
      const ext = (c.capabilities as { extensions: Array<{ params: Record<string, unknown> }> }).extensions[0]!
      ext.params.policy_enforced = false
      return c
    })
    const tampered = (await refresh(g)).body
    expect(tampered.lastError).toBe(`card signature: no signature verified: signature 1: the signature does not match the card (key sim-${alg})`)
    expect(tampered.card.sha256).toBe(first.card.sha256)
    expect(tampered.mode).toBe('controller')
    expect(g.logs.some((l) => l.includes('"agent card refresh failed"') && l.includes('card signature'))).toBe(true)
    const metrics = await (await fetch(`${g.metricsUrl}/metrics`)).text()
    expect(metrics).toMatch(/gateway_discovery_total\{outcome="failed"\} [1-9]/)

    // the same members in another order: a new body, a new hash, the same canonical form
    const reverse = (v: unknown): unknown => Array.isArray(v) ? v.map(reverse) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([key, x]) => [key, reverse(x)])) : v
    sim.setCardAfterSigning((c) => reverse(c) as Record<string, unknown>)
    const reordered = (await refresh(g)).body
    expect(reordered.lastError).toBeNull()
    expect(reordered.card.sha256).not.toBe(first.card.sha256)
    expect(reordered.signature.state).toBe('verified')
  })

  it('empty members added after signing (which the signature does not cover) are dropped before the card is read', async ({ startPair }) => {
    const k = await keyPair('ES256', 'sim-empty')
    const file = jwksFile()
    file.write([k.jwk])
    for (const protocol of ['v0.3', 'v1.0'] as const) {
      const { sim, gw: g } = await startPair({ sim: { protocol, profile: 'campaign-control', cardSigning: { keys: [k.signing] } }, env: { GATEWAY_CARD_JWKS_FILE: file.path, GATEWAY_CONTROL_ENABLED: 'true' } })
      const first = (await get(g, '/v1/upstream')).body
      expect(first).toMatchObject({ mode: 'controller', cardUrlMismatch: false, signature: { state: 'verified' }, protocol: { version: protocol.slice(1) } })
      // what a forger can add without breaking the signature: members whose value is [], {}, "" or
      // null, at the top or inside a list — each would change what the card says if it were read
      sim.setCardAfterSigning((c) => protocol === 'v0.3'
        ? { ...c, supportedInterfaces: [], additionalInterfaces: [{}], capabilities: { ...(c.capabilities as object), extensions: [...(c.capabilities as { extensions: unknown[] }).extensions, {}] } }
        : { ...c, url: '', supportedInterfaces: [...(c.supportedInterfaces as unknown[]), {}, null], skills: [...(c.skills as unknown[]), {}] })
      const u = (await refresh(g)).body
      expect(u.lastError, protocol).toBeNull()
      expect(u.signature.state).toBe('verified')
      expect(u.protocol.version, protocol).toBe(protocol.slice(1))
      expect(u.protocol.interfaces).toEqual(first.protocol.interfaces)
      expect(u.mode, protocol).toBe('controller')
      expect(u.cardUrlMismatch).toBe(false)
      expect(u.missingPrerequisites).toEqual([])
      expect(u.card.sha256).toBe(first.card.sha256)
      for (const path of ['/v1/supervisor/health', '/v1/campaigns']) expect((await get(g, path)).status, `${protocol} ${path}`).toBe(200)
    }
  })

  it('a card signed with an empty name: its signed form is no card, a failed refresh that keeps the last good one', async ({ startPair }) => {
    const k = await keyPair('ES256', 'sim-noname')
    const file = jwksFile()
    file.write([k.jwk])
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0', cardSigning: { keys: [k.signing] } }, env: { GATEWAY_CARD_JWKS_FILE: file.path } })
    const first = (await get(g, '/v1/upstream')).body
    sim.setCard((c) => ({ ...c, name: '' }))
    const u = (await refresh(g)).body
    expect(u.lastError).toBe('card signature: the signed form of the card (its empty members dropped) is not a valid card')
    expect(u.card.sha256).toBe(first.card.sha256)
    expect((await get(g, '/v1/supervisor/health')).status).toBe(200)
  })

  it('fail closed at start: an unsigned card, or one signed with an unknown key, is never adopted', async ({ startPair }) => {
    const trusted = await keyPair('ES256', 'trusted')
    const stranger = await keyPair('ES256', 'stranger')
    const file = jwksFile()
    file.write([trusted.jwk])
    for (const cardSigning of [undefined, { keys: [stranger.signing] }]) {
      const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0', cardSigning }, env: { GATEWAY_CARD_JWKS_FILE: file.path } })
      const u = (await get(g, '/v1/upstream')).body
      expect(u.card).toBeNull()
      expect(u.lastError).toMatch(/^card signature: /)
      expect((await get(g, '/v1/supervisor/health')).status).toBe(503)
      expect((await call(`${g.url}/readyz`)).status).toBe(503)
      expect(sim.rpcCalls()).toHaveLength(0)
    }
  })

  it('key rotation through the JWKS file, without a restart', async ({ startPair }) => {
    const oldKey = await keyPair('ES256', 'k-2026-11')
    const newKey = await keyPair('RS256', 'k-2026-12')
    const file = jwksFile()
    file.write([oldKey.jwk])
    const { sim, gw: g } = await startPair({ sim: { protocol: 'v1.0', cardSigning: { keys: [oldKey.signing] } }, env: { GATEWAY_CARD_JWKS_FILE: file.path } })
    expect((await get(g, '/v1/upstream')).body.signature.keyId).toBe('k-2026-11')

    // the remote moves to the new key before the operator trusts it: refused, the old card stays
    sim.setCardSigning({ keys: [newKey.signing] })
    expect((await refresh(g)).body.lastError).toBe('card signature: no signature verified: signature 1: no trusted key has kid k-2026-12 for RS256')
    // the operator adds the new key: verified on the next refresh once the file is re-read, off
    // the event loop when the change held still for a poll (docs/design.md#operator-files)
    const reloads = (): number => g.logs.filter((l) => l.includes('GATEWAY_CARD_JWKS_FILE reloaded')).length
    const reloaded = async (n: number): Promise<void> => { await eventually(async () => reloads() >= n, 5000, `reload ${n} of the card keys file`) }
    file.write([oldKey.jwk, newKey.jwk])
    await reloaded(1)
    expect((await refresh(g)).body).toMatchObject({ lastError: null, signature: { state: 'verified', keyId: 'k-2026-12' } })
    // and removes the old one; a card still signed by it alone is refused from then on
    file.write([newKey.jwk])
    await reloaded(2)
    sim.setCardSigning({ keys: [oldKey.signing] })
    expect((await refresh(g)).body.lastError).toBe('card signature: no signature verified: signature 1: no trusted key has kid k-2026-11 for ES256')
    // a broken file keeps the keys in force, and says so
    writeFileSync(file.path, '{ not json')
    await eventually(async () => g.logs.some((l) => l.includes('GATEWAY_CARD_JWKS_FILE was not reloaded')), 5000, 'the broken file to be refused')
    sim.setCardSigning({ keys: [newKey.signing] })
    expect((await refresh(g)).body.signature).toMatchObject({ state: 'verified', keyId: 'k-2026-12' })
    expect(g.logs.some((l) => l.includes('GATEWAY_CARD_JWKS_FILE was not reloaded') && l.includes('not valid JSON'))).toBe(true)
  })

  it('without GATEWAY_CARD_JWKS_FILE signatures are reported, never trusted; refreshes take 304s', async ({ startPair }) => {
    const k = await keyPair('ES256', 'k')
    const { sim, gw: g } = await startPair({ sim: { protocol: 'dual', cardSigning: { keys: [k.signing] } }, env: { GATEWAY_DISCOVERY_INTERVAL_MS: '150', GATEWAY_DISCOVERY_MIN_INTERVAL_MS: '100' } })
    expect((await get(g, '/v1/upstream')).body.signature).toEqual({ state: 'present', keyId: null, algorithm: null, reason: 'the card carries 1 signature(s), not verified: GATEWAY_CARD_JWKS_FILE is not set' })
    await new Promise((r) => setTimeout(r, 500))
    const counts = sim.cardRequests()['/a2a/.well-known/agent-card.json']
    expect(counts?.[200]).toBe(1)
    expect(counts?.[304]).toBeGreaterThanOrEqual(2)
  })
})
