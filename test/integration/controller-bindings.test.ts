// One identity per controller (docs/design.md#controller-bindings), over real sockets against the
// campaign-control simulator: two JWT identities carrying one controllerId claim — the same name
// claim even, only their subjects differ — never act on each other's lease. The first to mutate
// binds the id; the other's intervene, cancel and release are 403 controller_conflict, counted,
// with nothing sent to the remote; once an admin removes the binding the other may bind it, and
// then the first is refused. A binding whose id holds a live lease on the ledger's clock stays
// (409 controller_lease_held) unless the admin forces its removal; forced or not, the removal is
// logged with the admin's identity and the binding's; an expired lease holds nothing. A static
// caller's controller id in a JWT — in another letter case,
// or made to look alike — is refused at the door. The same across two replicas sharing a PostgreSQL ledger (skipped,
// saying so, without TEST_POSTGRES_URL). The admin routes' own refusals.
import { describe, expect, onTestFinished } from 'vitest'
import { CONTROL_ENV, claim, controlPairOf, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey, type TestIdp, type TestKey } from '../helpers/jwks.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP controller bindings across replicas on PostgreSQL: TEST_POSTGRES_URL is not set')

/** JWT callers named by a `username` claim, so that two subjects can share a name */
const jwtEnv = (idp: Pick<TestIdp, 'url'>): Record<string, string> => ({
  GATEWAY_JWT_ISSUER: ISSUER,
  GATEWAY_JWT_AUDIENCE: AUDIENCE,
  GATEWAY_JWT_JWKS_URL: idp.url,
  GATEWAY_JWT_CLAIMS: JSON.stringify({ name: 'username' }),
  GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000'
})

async function idpWithKey (): Promise<{ idp: TestIdp; key: TestKey }> {
  const key = await testKey('k1')
  const idp = await startIdp([key])
  onTestFinished(idp.close)
  return { idp, key }
}

/** a control token for one subject, all of them named `ml-team`, carrying one controller id */
const controlToken = async (key: TestKey, sub: string, controllerId = 'ctl-shared'): Promise<string> =>
  await sign(key, { sub, username: 'ml-team', scope: 'read control', oo_controller_id: controllerId })

/** gateway_controller_conflicts_total reaches n (a rendering serves scrapes for a second, docs/design.md#metrics) */
async function expectConflicts (metricsUrl: string, n: number): Promise<void> {
  const count = async (): Promise<number> => Number(/^gateway_controller_conflicts_total (\d+)$/m.exec((await call(`${metricsUrl}/metrics`)).text)?.[1] ?? 'NaN')
  await eventually(async () => await count() === n, 3000, `gateway_controller_conflicts_total ${n}`)
  expect(await count()).toBe(n)
}

/** the three mutations the audit saw go through under another identity's lease */
async function expectAllRefused (p: Pick<ControlPair, 'post' | 'sim'>, token: string, campaignId: string): Promise<void> {
  const before = p.sim.rpcCalls().length
  for (const [path, body] of [
    ['interventions', { intervention: { action: 'pause' } }],
    ['cancel', {}],
    ['control/release', {}]
  ] as const) {
    const res = await p.post(token, `/v1/campaigns/${campaignId}/${path}`, { requestId: rid(), ...body })
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(403)
    expect(res.body.error.code, path).toBe('controller_conflict')
  }
  // refused before the capability, the lock, the lease read: the remote heard nothing at all
  expect(p.sim.rpcCalls().length).toBe(before)
}

describe('one identity per controller id', () => {
  it('two subjects with one name and one controllerId claim: the first binds it, the other is refused until an admin removes the binding', async ({ startControlPair }) => {
    const { idp, key } = await idpWithKey()
    const p = await startControlPair({ env: jwtEnv(idp) })
    const alice = await controlToken(key, 'alice-0001')
    const bob = await controlToken(key, 'bob-0002')
    await eventually(async () => (await p.get(alice, '/v1/campaigns/camp-b/control')).status === 200, 5000, 'keys in use')

    await claim(p, alice, 'camp-b')
    const sub = await p.post(alice, '/v1/campaigns/camp-b/submissions', { requestId: rid('sub'), parts: [{ kind: 'text', text: 'train it' }] })
    expect(sub.status, JSON.stringify(sub.body)).toBe(202)

    await expectAllRefused(p, bob, 'camp-b')
    await expectConflicts(p.gw.metricsUrl, 3)
    // nothing of bob's is in the ledger: refused before any record
    const records = await p.get(p.gw.tokens.admin, '/v1/campaigns/camp-b/requests')
    expect(records.body.requests.map((r: { operation: string }) => r.operation)).toEqual(['submit', 'claim'])

    const admin = p.gw.tokens.admin
    const listed = await p.get(admin, '/v1/admin/controllers')
    expect(listed.status).toBe(200)
    expect(listed.body.controllers).toEqual([{ controllerId: 'ctl-shared', identity: `jwt:${ISSUER}#alice-0001`, caller: 'jwt:ml-team', boundAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) }])

    // alice's lease on camp-b is live: the binding stays unless forced, in any letter case
    for (const id of ['ctl-shared', 'CTL-Shared']) {
      const held = await call(`${p.gw.url}/v1/admin/controllers/${id}`, { method: 'DELETE', token: admin })
      expect(held.status, JSON.stringify(held.body)).toBe(409)
      expect(held.body.error).toMatchObject({ code: 'controller_lease_held', retryable: false, message: expect.stringContaining('camp-b') })
      expect((await call(`${p.gw.url}/v1/admin/controllers/${id}?force=false`, { method: 'DELETE', token: admin })).status).toBe(409)
    }
    expect((await p.get(admin, '/v1/admin/controllers')).body.controllers).toMatchObject([{ controllerId: 'ctl-shared', identity: `jwt:${ISSUER}#alice-0001` }])
    expect(p.gw.logs.join('')).not.toContain('controller-unbound')
    expect((await call(`${p.gw.url}/v1/admin/controllers/ctl-shared?force=yes`, { method: 'DELETE', token: admin })).body.error.code).toBe('invalid_request')

    // forced, and removed in another letter case: one id; the log names both identities, and the lease
    const removed = await call(`${p.gw.url}/v1/admin/controllers/CTL-Shared?force=true`, { method: 'DELETE', token: admin })
    expect(removed.status, JSON.stringify(removed.body)).toBe(200)
    expect(removed.body).toEqual({ controllerId: 'CTL-Shared', removed: true })
    const line = JSON.parse(p.gw.logs.find((l) => l.includes('"event":"controller-unbound"'))!)
    expect(line).toMatchObject({
      level: 40,
      controllerId: 'CTL-Shared',
      by: 'admin',
      byIdentity: 'static:admin',
      boundIdentity: `jwt:${ISSUER}#alice-0001`,
      boundCaller: 'jwt:ml-team',
      forced: true,
      liveLeases: ['camp-b'],
      msg: 'controller binding removed while it held a live lease'
    })
    expect((await call(`${p.gw.url}/v1/admin/controllers/ctl-shared`, { method: 'DELETE', token: admin })).body.error.code).toBe('not_found')
    expect((await p.get(admin, '/v1/admin/controllers')).body.controllers).toEqual([])

    // bob binds it now (the remote's lease is the controller id's, so his intervene applies); alice is refused
    const iv = await p.post(bob, '/v1/campaigns/camp-b/interventions', { requestId: rid('iv'), intervention: { action: 'pause' } })
    expect(iv.status, JSON.stringify(iv.body)).toBe(200)
    expect((await p.get(admin, '/v1/admin/controllers')).body.controllers).toMatchObject([{ controllerId: 'ctl-shared', identity: `jwt:${ISSUER}#bob-0002` }])
    await expectAllRefused(p, alice, 'camp-b')
    await expectConflicts(p.gw.metricsUrl, 6)
  })

  it('a static caller binds its own controller id too; the admin routes refuse what they should', async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-s')
    expect((await p.get(p.gw.tokens.admin, '/v1/admin/controllers')).body.controllers).toMatchObject([{ controllerId: 'ctl-1', identity: 'static:controller', caller: 'controller' }])
    const del = async (id: string, token = p.gw.tokens.admin): Promise<{ status: number; code: unknown }> => {
      const r = await call(`${p.gw.url}/v1/admin/controllers/${id}`, { method: 'DELETE', token })
      return { status: r.status, code: r.body?.error?.code }
    }
    expect(await del('ctl-1', p.gw.tokens.controller)).toEqual({ status: 403, code: 'forbidden' })
    expect((await p.get(p.gw.tokens.reader, '/v1/admin/controllers')).status).toBe(403)
    for (const bad of ['-ctl', 'ctl%201', 'ctl%E2%80%8B1', '%EF%BD%83tl-1', `c${'x'.repeat(128)}`]) expect(await del(bad), bad).toEqual({ status: 400, code: 'invalid_request' })
    expect(await del('ctl-none')).toEqual({ status: 404, code: 'not_found' })
    // a live lease does not make a missing binding exist, forced or not
    expect(await del('ctl-none?force=true')).toEqual({ status: 404, code: 'not_found' })
    expect((await p.get(p.gw.tokens.admin, '/v1/admin/controllers?x=1')).status).toBe(400)
    expect(await del('ctl-1?x=1')).toEqual({ status: 400, code: 'invalid_request' })
    expect(await del('ctl-1')).toEqual({ status: 409, code: 'controller_lease_held' })
    // a released lease holds nothing
    const released = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-s/control/release', { requestId: rid('release') })
    expect(released.status, JSON.stringify(released.body)).toBe(200)
    expect(await del('ctl-1')).toEqual({ status: 200, code: undefined })
  })
})

describe('a binding whose controller id holds a lease', () => {
  it('is kept while the lease is live on the ledger\'s clock, and removed without force once it has expired; logged with both identities', async ({ startControlPair }) => {
    let shiftMs = 0
    const p = await startControlPair({ clock: () => Date.now() + shiftMs })
    const admin = p.gw.tokens.admin
    const del = async (id: string): Promise<{ status: number; code: unknown }> => {
      const r = await call(`${p.gw.url}/v1/admin/controllers/${id}`, { method: 'DELETE', token: admin })
      return { status: r.status, code: r.body?.error?.code }
    }
    await claim(p, p.gw.tokens.controller, 'camp-x', 15)
    await claim(p, p.gw.tokens.controller, 'camp-y', 15)
    expect(await p.gw.app.ledger.liveLeasesOf('CTL-1', await p.gw.app.ledger.now())).toEqual(['camp-x', 'camp-y'])
    expect(await del('ctl-1')).toEqual({ status: 409, code: 'controller_lease_held' })
    expect((await p.get(admin, '/v1/admin/controllers')).body.controllers).toMatchObject([{ controllerId: 'ctl-1', identity: 'static:controller' }])

    // the ledger's clock past both leases' end (the remote's clock reads them; the margin is the remote's to keep)
    shiftMs = 20_000
    expect(await p.gw.app.ledger.liveLeasesOf('ctl-1', await p.gw.app.ledger.now())).toEqual([])
    expect(await del('Ctl-1')).toEqual({ status: 200, code: undefined })
    expect((await p.get(admin, '/v1/admin/controllers')).body.controllers).toEqual([])
    const line = JSON.parse(p.gw.logs.find((l) => l.includes('"event":"controller-unbound"'))!)
    expect(line).toMatchObject({ level: 30, controllerId: 'Ctl-1', by: 'admin', byIdentity: 'static:admin', boundIdentity: 'static:controller', boundCaller: 'controller', forced: false, liveLeases: [], msg: 'controller binding removed' })
    // nothing was sent for any of it: the remote still holds what it held
    expect(p.calls('campaign/release_control')).toEqual([])
  })
})

describe('a static caller\'s controller id in a JWT', () => {
  it('in another letter case, with a trailing space, a zero-width or a full-width letter: 401, nothing sent; the static caller keeps it', async ({ startControlPair }) => {
    const { idp, key } = await idpWithKey()
    const p = await startControlPair({ env: jwtEnv(idp) })
    const reader = await sign(key, { sub: 'reader-1', username: 'reader', scope: 'read' })
    await eventually(async () => (await p.get(reader, '/v1/campaigns/camp-v/control')).status === 200, 5000, 'keys in use')
    const before = p.sim.rpcCalls().length
    // the static controller holds ctl-1 (test/helpers/gateway.ts)
    const variants: Array<[string, string]> = [
      ['CTL-1', 'controller_conflict'],
      ['Ctl-1', 'controller_conflict'],
      ['ctl-1 ', 'claims'],
      ['ctl\u200b-1', 'claims'],
      ['\uff43tl-1', 'claims'],
      ['ctl\u20131', 'claims']
    ]
    for (const [id, reason] of variants) {
      const t = await controlToken(key, `impostor-${reason}`, id)
      const res = await p.post(t, '/v1/campaigns/camp-v/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })
      expect(res.status, JSON.stringify(id)).toBe(401)
      expect(res.body.error.code).toBe('unauthorized')
    }
    expect(p.sim.rpcCalls().length).toBe(before)
    const text = (await call(`${p.gw.metricsUrl}/metrics`)).text
    expect(text).toMatch(/^gateway_auth_refused_total\{reason="controller_conflict"\} 2$/m)
    expect(text).toMatch(/^gateway_auth_refused_total\{reason="claims"\} 4$/m)
    expect((await p.get(p.gw.tokens.admin, '/v1/admin/controllers')).body.controllers).toEqual([])
    await claim(p, p.gw.tokens.controller, 'camp-v')
  })
})

describe.skipIf(PG === undefined)('one identity per controller id, across replicas on PostgreSQL', () => {
  it('a binding made on replica A refuses the other identity on replica B, nothing sent; removed on B, it binds there', async ({ startControlPair }) => {
    const schema = await freshSchema(PG!)
    onTestFinished(schema.drop)
    const { idp, key } = await idpWithKey()
    const env = { ...jwtEnv(idp), GATEWAY_LEDGER_URL: schema.url }
    const a = await startControlPair({ env })
    const b = controlPairOf(a.sim, await startGateway({ simulator: a.sim, env: { ...CONTROL_ENV, ...env }, callerPrefix: 'b-' }))
    const alice = await controlToken(key, 'alice-0001')
    const bob = await controlToken(key, 'bob-0002')
    for (const g of [a, b]) await eventually(async () => (await g.get(alice, '/v1/campaigns/camp-r/control')).status === 200, 5000, 'keys in use')

    await claim(a, alice, 'camp-r')
    await expectAllRefused(b, bob, 'camp-r')
    await expectConflicts(b.gw.metricsUrl, 3)
    expect((await b.get(b.gw.tokens.admin, '/v1/admin/controllers')).body.controllers).toMatchObject([{ controllerId: 'ctl-shared', identity: `jwt:${ISSUER}#alice-0001` }])

    // alice's lease, written to the shared ledger by replica A, holds the binding on replica B
    expect((await call(`${b.gw.url}/v1/admin/controllers/ctl-shared`, { method: 'DELETE', token: b.gw.tokens.admin })).body.error.code).toBe('controller_lease_held')
    expect((await call(`${b.gw.url}/v1/admin/controllers/ctl-shared?force=true`, { method: 'DELETE', token: b.gw.tokens.admin })).status).toBe(200)
    const iv = await b.post(bob, '/v1/campaigns/camp-r/interventions', { requestId: rid('iv'), intervention: { action: 'pause' } })
    expect(iv.status, JSON.stringify(iv.body)).toBe(200)
    await expectAllRefused(a, alice, 'camp-r')
    await b.gw.close()
  }, 60_000)
})
