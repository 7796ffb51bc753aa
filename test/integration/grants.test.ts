// Grants per campaign and project over REST (docs/design.md#grants), over real sockets against the
// campaign-control simulator: a caller granted `team-a-*` cannot claim, mutate, reconcile, read the
// records of or read the bound tasks of `team-b-7` — 403 campaign_forbidden, nothing sent, nothing
// written, counted by reason — and sees no trace of it in any listing; every campaign route with
// a caller granted by pattern, not granted, granted read alone, granted by project (learned from
// the remote's campaign list), by JWT claim and by the callers file's table keyed by identity;
// GATEWAY_REQUIRE_GRANTS; a grant removed by a reload refused at the next request while a mutation
// in flight finishes; the admins' view of the callers, in the API and the bin. A deployment with no
// grants is unchanged: the rest of the suite runs without any.
import { describe, expect, onTestFinished } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { runCallersCommand } from '../../src/cli/callers-command.js'
import { DEMO_TASK_ID } from '../../src/simulator/index.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { CAMPAIGN_LIST, grantCallers, startWithGrants, type Tokens } from '../helpers/grants.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey } from '../helpers/jwks.js'

const M = (path: string, body: object = {}): [string, object] => [path, body]
/** every mutation route a control caller has, with a body each takes */
const MUTATIONS: Array<[string, object]> = [
  M('control/claim', { ttlSeconds: 600 }),
  M('control/renew', { ttlSeconds: 600 }),
  M('control/release'),
  M('submissions', { parts: [{ kind: 'text', text: 'train it' }] }),
  M('interventions', { intervention: { action: 'pause' } }),
  M('cancel')
]

function expectForbidden (res: JsonResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(403)
  expect(res.body.error, what).toEqual({ code: 'campaign_forbidden', message: expect.any(String), retryable: false })
  // the refusal names no campaign: neither the one asked for nor any other
  expect(res.text, what).not.toMatch(/team-|vis-|orphan-/)
}

async function refusals (metricsUrl: string): Promise<Record<string, number>> {
  const text = (await call(`${metricsUrl}/metrics`)).text
  return Object.fromEntries([...text.matchAll(/^gateway_authz_refusals_total\{reason="([a-z_]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]))
}

async function expectRefusals (metricsUrl: string, want: Record<string, number>): Promise<void> {
  // a rendering serves scrapes for a second (docs/design.md#metrics)
  await eventually(async () => {
    const seen = await refusals(metricsUrl)
    return Object.entries(want).every(([k, n]) => (seen[k] ?? 0) >= n)
  }, 3000, `refusals ${JSON.stringify(want)}`)
}

const campaignsIn = (res: JsonResponse): string[] => (res.body.result.campaigns as Array<{ campaign_id: string }>).map((c) => c.campaign_id)

/** team-b's campaign with a lease, a bound task and records; answers the task and a request id */
async function teamBCampaign (p: ControlPair, t: Tokens): Promise<{ taskB: string; submitB: string }> {
  await claim(p, t.teamB, 'team-b-7')
  const submitB = rid('sub-b')
  const sub = await p.post(t.teamB, '/v1/campaigns/team-b-7/submissions', { requestId: submitB, parts: [{ kind: 'text', text: 'team b work' }] })
  expect(sub.status, sub.text).toBe(202)
  return { taskB: sub.body.taskId, submitB }
}

describe('grants per campaign over REST', () => {
  it('done when: granted team-a-*, a caller cannot claim, mutate, reconcile, read the records or the bound task of team-b-7 — nothing sent or written — and no listing shows it', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    const { taskB, submitB } = await teamBCampaign(p, t)
    await claim(p, t.teamA, 'team-a-1')

    const before = p.sim.rpcCalls().length
    for (const [path, body] of [...MUTATIONS, M('control/fence', { ttlSeconds: 600 })]) {
      const requestId = rid('a-on-b')
      const res = await p.post(t.teamA, `/v1/campaigns/team-b-7/${path}`, { requestId, ...body })
      if (path === 'control/fence') {
        // an admin's route: the scope refuses first
        expect(res.body.error.code).toBe('forbidden')
        continue
      }
      expectForbidden(res, path)
      expect(await p.gw.app.ledger.get(requestId), `${path} wrote nothing`).toBeUndefined()
    }
    expectForbidden(await p.post(t.teamA, `/v1/campaigns/team-b-7/requests/${submitB}/reconcile`), 'reconcile')
    expectForbidden(await p.get(t.teamA, '/v1/campaigns/team-b-7/control'), 'control read')
    expectForbidden(await p.get(t.teamA, '/v1/campaigns/team-b-7/requests'), 'records')
    expectForbidden(await p.get(t.teamA, `/v1/campaigns/team-b-7/requests/${submitB}`), 'a record')
    expectForbidden(await p.get(t.teamA, `/v1/tasks/${taskB}`), 'the bound task')
    // not one byte to the remote: no mutation, no lease read, no tasks/get
    expect(p.sim.rpcCalls().length).toBe(before)
    await expectRefusals(p.gw.metricsUrl, { campaign_not_granted: 11 })

    // the listings: the campaign list shows team-a's alone, and nothing else of the remote's payload
    const listed = await p.get(t.teamA, '/v1/campaigns')
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.result).toEqual({ operation: 'campaign.list', requestId: expect.any(String), campaigns: [CAMPAIGN_LIST[0]] })
    expect(listed.text).not.toContain('team-b')
    // unresolved records across campaigns are an admin's listing: admins keep every campaign
    expect((await p.get(t.teamA, '/v1/requests')).body.error.code).toBe('forbidden')
    expect((await p.get(t.teamB, '/v1/campaigns')).body.result.campaigns).toEqual([CAMPAIGN_LIST[1]])
  })

  it('granted by pattern: every campaign route of team-a-1 answers as without grants', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    const ids: Record<string, string> = {}
    for (const [path, body] of [MUTATIONS[0]!, MUTATIONS[1]!, MUTATIONS[4]!, MUTATIONS[3]!, MUTATIONS[5]!]) {
      const requestId = ids[path] = rid('a')
      const res = await p.post(t.teamA, `/v1/campaigns/team-a-1/${path}`, { requestId, ...body })
      expect(res.status, `${path}: ${res.text}`).toBe(path === 'submissions' ? 202 : 200)
      if (path === 'submissions') ids.task = res.body.taskId
    }
    expect((await p.get(t.teamA, '/v1/campaigns/team-a-1/control')).status).toBe(200)
    expect((await p.get(t.teamA, '/v1/campaigns/team-a-1/requests')).body.requests).toHaveLength(5)
    expect((await p.get(t.teamA, `/v1/campaigns/team-a-1/requests/${ids.submissions!}`)).body.taskId).toBe(ids.task)
    expect((await p.get(t.teamA, `/v1/tasks/${ids.task!}`)).status).toBe(200)
    expect((await p.post(t.teamA, `/v1/campaigns/team-a-1/requests/${ids.submissions!}/reconcile`)).status).toBe(200)
    expect((await p.post(t.teamA, '/v1/campaigns/team-a-1/control/release', { requestId: rid('rel') })).status).toBe(200)
    // a prefix, anchored: team-a (no dash) and Team-a-1 (another case) are other campaigns
    for (const other of ['team-a', 'Team-a-1', 'xteam-a-1']) expectForbidden(await p.get(t.teamA, `/v1/campaigns/${other}/control`), other)
    expect((await refusals(p.gw.metricsUrl)).project_unknown ?? 0).toBe(0)
  })

  it('read alone reads and controls nothing; the scope answers first; admins keep every campaign, fence and acknowledge included', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    const { taskB, submitB } = await teamBCampaign(p, t)
    await claim(p, t.teamA, 'team-a-1')
    const subA = await p.post(t.teamA, '/v1/campaigns/team-a-1/submissions', { requestId: rid('sub-a'), parts: [{ kind: 'text', text: 'a' }] })
    expect((await p.get(t.reader, '/v1/campaigns/team-a-1/control')).status).toBe(200)
    expect((await p.get(t.reader, `/v1/tasks/${String(subA.body.taskId)}`)).status).toBe(200)
    expectForbidden(await p.get(t.reader, '/v1/campaigns/team-b-7/control'), 'reader on team-b-7')
    expectForbidden(await p.get(t.reader, `/v1/tasks/${String(taskB)}`), 'reader on team-b-7\'s task')
    expect((await p.post(t.reader, '/v1/campaigns/team-a-1/control/claim', { requestId: rid(), ttlSeconds: 60 })).body.error.code).toBe('forbidden')

    // team-a's control grant reads team-a-1 and controls nothing of team-b's
    const ops = t.ops
    expect((await p.get(ops, '/v1/campaigns/team-b-7/control')).status).toBe(200)
    expect((await p.get(ops, `/v1/tasks/${String(taskB)}`)).status).toBe(200)
    expect((await p.get(ops, `/v1/campaigns/team-b-7/requests/${submitB}`)).body.params).toBeDefined()
    expect(campaignsIn(await p.get(ops, '/v1/campaigns'))).toEqual(CAMPAIGN_LIST.map((c) => c.campaign_id))
    // the admin routes: neither is refused for the campaign (fence: team-b holds the lease; acknowledge: nothing ambiguous)
    expect((await p.post(ops, '/v1/campaigns/team-b-7/control/fence', { requestId: rid('fence'), ttlSeconds: 60 })).body.error.code).toBe('lease_held_by_other')
    expect((await p.post(ops, `/v1/campaigns/team-b-7/requests/${submitB}/acknowledge`, { resolution: 'assume_applied', note: 'checked' })).body.error.code).toBe('acknowledge_unsafe')
    expect((await p.get(ops, '/v1/requests')).status).toBe(200)
  })

  it('no grants, no GATEWAY_REQUIRE_GRANTS: every campaign, the remote\'s list whole, tasks the gateway cannot tie to a campaign readable; a caller with grants reads none of those', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    await teamBCampaign(p, t)
    expect((await p.get(t.legacy, '/v1/campaigns/team-b-7/control')).status).toBe(200)
    expect((await p.post(t.legacy, '/v1/campaigns/orphan-1/control/claim', { requestId: rid(), ttlSeconds: 60 })).status).toBe(200)
    const whole = await p.get(t.legacy, '/v1/campaigns')
    expect(whole.body.result).toEqual({ operation: 'campaign.list', requestId: expect.any(String), campaigns: CAMPAIGN_LIST })
    // the simulator's demo task was made by no submission the gateway recorded
    expect((await p.get(t.legacy, `/v1/tasks/${DEMO_TASK_ID}`)).status).toBe(200)
    expect((await p.get(t.star, `/v1/tasks/${DEMO_TASK_ID}`)).status).toBe(200)
    const before = p.sim.rpcCalls().length
    expectForbidden(await p.get(t.teamA, `/v1/tasks/${DEMO_TASK_ID}`), 'an untied task')
    expectForbidden(await p.get(t.teamA, '/v1/tasks/no-such-task-anywhere'), 'a task nobody made')
    expect(p.sim.rpcCalls().length).toBe(before)
    await expectRefusals(p.gw.metricsUrl, { task_unknown: 2 })
  })

  it('a project grant reaches the campaigns the remote reports under that project and submissions naming it; one whose project is unknown stays out', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair)
    // no list read yet: the gateway reads the remote's campaign list once to tell vis-3's project
    await claim(p, t.vision, 'vis-3')
    expect(p.sim.rpcCalls().filter((c) => JSON.stringify(c.params).includes('campaign.list')).length).toBe(1)
    const sub = await p.post(t.vision, '/v1/campaigns/vis-3/submissions', { requestId: rid(), parts: [{ kind: 'text', text: 'v' }], project: 'vision' })
    expect(sub.status, sub.text).toBe(202)
    expect((await p.get(t.vision, `/v1/tasks/${String(sub.body.taskId)}`)).status).toBe(200)
    const before = p.sim.rpcCalls().filter((c) => c.method !== 'message/send' || !JSON.stringify(c.params).includes('campaign.list')).length
    const other = rid()
    expectForbidden(await p.post(t.vision, '/v1/campaigns/vis-3/submissions', { requestId: other, parts: [{ kind: 'text', text: 'v' }], project: 'beta' }), 'naming another project')
    expect(await p.gw.app.ledger.get(other)).toBeUndefined()
    expectForbidden(await p.post(t.vision, '/v1/campaigns/team-a-1/control/claim', { requestId: rid(), ttlSeconds: 60 }), 'a campaign of another project')
    expectForbidden(await p.post(t.vision, '/v1/campaigns/orphan-1/control/claim', { requestId: rid(), ttlSeconds: 60 }), 'a campaign of no known project')
    // a campaign grant names no project: a submission naming one is a project the caller was not granted
    await claim(p, t.teamA, 'team-a-1')
    expectForbidden(await p.post(t.teamA, '/v1/campaigns/team-a-1/submissions', { requestId: rid(), parts: [{ kind: 'text', text: 'a' }], project: 'alpha' }), 'team-a naming a project')
    expect(p.sim.rpcCalls().filter((c) => c.method !== 'message/send' || !JSON.stringify(c.params).includes('campaign.list')).length).toBe(before + 1)
    expect(campaignsIn(await p.get(t.vision, '/v1/campaigns'))).toEqual(['vis-3'])
    await expectRefusals(p.gw.metricsUrl, { project_not_granted: 2, project_unknown: 1, campaign_not_granted: 1 })

    // the remote now reports orphan-1 under vision: once the gateway has seen that list, it is the project's
    p.sim.setCampaigns([...CAMPAIGN_LIST.slice(0, 3), { campaign_id: 'orphan-1', project: 'vision' }])
    expect(campaignsIn(await p.get(t.legacy, '/v1/campaigns'))).toContain('orphan-1')
    await claim(p, t.vision, 'orphan-1')
  })

  it('GATEWAY_REQUIRE_GRANTS: no grant means no campaign; a task the gateway cannot tie to a campaign is an all-campaigns grant\'s or an admin\'s', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair, { GATEWAY_REQUIRE_GRANTS: 'true' })
    expectForbidden(await p.get(t.legacy, '/v1/campaigns/team-a-1/control'), 'no grants')
    const id = rid()
    expectForbidden(await p.post(t.legacy, '/v1/campaigns/team-a-1/control/claim', { requestId: id, ttlSeconds: 60 }), 'no grants, a claim')
    expect(await p.gw.app.ledger.get(id)).toBeUndefined()
    expect((await p.get(t.legacy, '/v1/campaigns')).body.result).toEqual({ operation: 'campaign.list', requestId: expect.any(String), campaigns: [] })
    await claim(p, t.teamA, 'team-a-1')
    expectForbidden(await p.get(t.legacy, `/v1/tasks/${DEMO_TASK_ID}`), 'untied task, no grants')
    expectForbidden(await p.get(t.teamA, `/v1/tasks/${DEMO_TASK_ID}`), 'untied task, team-a')
    expect((await p.get(t.star, `/v1/tasks/${DEMO_TASK_ID}`)).status).toBe(200)
    expect((await p.get(t.ops, `/v1/tasks/${DEMO_TASK_ID}`)).status).toBe(200)
    expect(campaignsIn(await p.get(t.star, '/v1/campaigns'))).toEqual(CAMPAIGN_LIST.map((c) => c.campaign_id))
    await expectRefusals(p.gw.metricsUrl, { no_grants: 3, task_unknown: 1 })
  })

  it('JWT callers: grants from the mapped claims (an array or a string, other groups ignored), or from the callers file\'s table for their identity, which replaces the claims', async ({ startControlPair }) => {
    const key = await testKey('k1')
    const idp = await startIdp([key])
    onTestFinished(idp.close)
    const { p } = await startWithGrants(startControlPair, {
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
      GATEWAY_JWT_JWKS_URL: idp.url,
      GATEWAY_JWT_CLAIMS: JSON.stringify({ campaigns: 'groups', projects: 'oo_projects' }),
      GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000'
    }, (t) => ({ callers: grantCallers(t), grants: { [`jwt:${ISSUER}#pinned-1`]: { control: { campaigns: ['team-b-*'] } } } }))
    const token = async (sub: string, claims: object): Promise<string> => await sign(key, { sub, scope: 'read control', oo_controller_id: `ctl-${sub}`, ...claims })
    const ja = await token('ja-1', { groups: ['team-a-*', 'Domain Users', '/admins'] })
    await eventually(async () => (await p.get(ja, '/v1/campaigns/team-a-1/control')).status === 200, 5000, 'keys in use')
    await claim(p, ja, 'team-a-1')
    expectForbidden(await p.post(ja, '/v1/campaigns/team-b-7/control/claim', { requestId: rid(), ttlSeconds: 60 }), 'claim-granted on team-b-7')
    expect(campaignsIn(await p.get(ja, '/v1/campaigns'))).toEqual(['team-a-1'])
    const spaced = await token('js-1', { groups: 'team-b-7 vis-*' })
    expect((await p.get(spaced, '/v1/campaigns/team-b-7/control')).status).toBe(200)
    expectForbidden(await p.get(spaced, '/v1/campaigns/team-a-1/control'), 'string claim')
    // a grants claim is mapped: a token without it reaches nothing
    expectForbidden(await p.get(await token('jn-1', {}), '/v1/campaigns/team-a-1/control'), 'no claim')
    expect((await p.get(await token('jp-1', { oo_projects: ['vision'] }), '/v1/campaigns/vis-3/control')).status).toBe(200)
    // the table keyed by identity replaces what the token claims
    const pinned = await token('pinned-1', { groups: ['team-a-*'] })
    expect((await p.post(pinned, '/v1/campaigns/team-b-9/control/claim', { requestId: rid(), ttlSeconds: 60 })).status).toBe(200)
    expectForbidden(await p.get(pinned, '/v1/campaigns/team-a-1/control'), 'pinned by the table')
  })

  it('reloaded with the callers file: a grant removed is refused at the next request, a mutation already in flight finishes', async ({ startControlPair }) => {
    const { p, t, file } = await startWithGrants(startControlPair)
    await claim(p, t.teamA, 'team-a-1')
    // the remote answers the submission late; the grant goes meanwhile
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'delay', ms: 600 }, 1)
    const inFlight = p.post(t.teamA, '/v1/campaigns/team-a-1/submissions', { requestId: rid('late'), parts: [{ kind: 'text', text: 'x' }] })
    await eventually(async () => p.sim.rpcCalls().some((c) => c.method === 'message/send'), 3000, 'the submission sent')
    file.write(grantCallers(t, { control: { campaigns: ['team-a-9'] } }))
    expect(await p.gw.reloadCallers()).toBe(true)
    expectForbidden(await p.get(t.teamA, '/v1/campaigns/team-a-1/control'), 'after the reload')
    expect((await inFlight).status).toBe(202)
    expectForbidden(await p.post(t.teamA, '/v1/campaigns/team-a-1/interventions', { requestId: rid(), intervention: { a: 1 } }), 'the next mutation')
    expect((await p.get(t.teamA, '/v1/campaigns/team-a-9/control')).status).toBe(200)
  })

  it('admins see every caller\'s name, scopes, controller id, grants and identity kind, never a token or a digest; in the API and in the bin', async ({ startControlPair }) => {
    const { p, t } = await startWithGrants(startControlPair, { GATEWAY_REQUIRE_GRANTS: 'true', GATEWAY_JWT_ISSUER: ISSUER, GATEWAY_JWT_AUDIENCE: AUDIENCE, GATEWAY_JWT_JWKS_FILE: undefined, GATEWAY_JWT_JWKS_URL: 'http://127.0.0.1:9/jwks', GATEWAY_JWT_CLAIMS: JSON.stringify({ campaigns: 'groups' }) },
      (tk) => ({ callers: grantCallers(tk), grants: { [`jwt:${ISSUER}#pinned-1`]: { read: { campaigns: ['team-b-*'] } } } }))
    const res = await p.get(t.ops, '/v1/admin/callers')
    expect(res.status, res.text).toBe(200)
    expect(res.body.requireGrants).toBe(true)
    expect(res.body.jwtClaims).toEqual({ campaigns: 'groups' })
    expect(res.body.callers).toHaveLength(7)
    expect(res.body.callers[0]).toEqual({ name: 'team-a', kind: 'static', identity: 'static:team-a', scopes: ['read', 'control'], controllerId: 'ctl-team-a', expiresAt: null, grants: { control: { campaigns: ['team-a-*'] } }, reach: 'granted' })
    expect(res.body.callers.find((c: { name: string }) => c.name === 'legacy')).toMatchObject({ grants: null, reach: 'none' })
    expect(res.body.callers.find((c: { name: string }) => c.name === 'ops')).toMatchObject({ grants: null, reach: 'all' })
    expect(res.body.identities).toEqual([{ identity: `jwt:${ISSUER}#pinned-1`, kind: 'jwt', grants: { read: { campaigns: ['team-b-*'] } } }])
    for (const secret of Object.values(t)) {
      expect(res.text).not.toContain(secret)
      expect(res.text).not.toContain(sha256Hex(secret))
    }
    expect((await p.get(t.teamA, '/v1/admin/callers')).body.error.code).toBe('forbidden')

    const out: string[] = []
    const err: string[] = []
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }
    expect(await runCallersCommand([], { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: t.ops }, io)).toBe(0)
    const table = out.join('\n')
    expect(table).toMatch(/^GATEWAY_REQUIRE_GRANTS is true/m)
    expect(table).toMatch(/team-a\s+static\s+read,control\s+ctl-team-a\s+granted\s+control campaigns team-a-\*/)
    expect(table).toMatch(/legacy\s+static\s+read,control\s+ctl-legacy\s+none/)
    expect(table).toContain(`jwt:${ISSUER}#pinned-1`)
    out.length = 0
    expect(await runCallersCommand(['--json'], { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: t.ops }, io)).toBe(0)
    expect(JSON.parse(out.join('\n'))).toEqual(res.body)
    for (const line of [...out, ...err]) expect(line).not.toContain(t.ops)
    expect(await runCallersCommand([], { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: t.teamA }, io)).toBe(1)
    expect(err.join('\n')).toContain('forbidden')
  })
})
