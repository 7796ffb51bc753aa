// The ambiguous-write runbook (docs/runbooks/ambiguous-write.md), followed step by step over real
// sockets: a gateway in controller mode on 127.0.0.1 against the campaign-control simulator, an
// ambiguous write planted with a fault, then what the operator does — the alert's gauge and log
// line, the bin's `requests --state ambiguous` (the bin itself, in a child process, with the token
// in GATEWAY_TOKEN) and GET /v1/requests, `reconcile`, Retry-After on reconcile_too_early,
// `acknowledge` where request_status is missing or reconcile failed — ending with the record
// resolved and the campaign accepting mutations again, nothing sent twice (test/helpers/control.ts
// checks that after each test). The runbook, the alert and the alert table of docs/operating.md
// are checked to name what the test ran, so the documents cannot drift from it.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import { parse } from 'yaml'
import { runRequestsCommand, type OperatorCommand } from '../../src/cli/requests-command.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const RUNBOOK = 'docs/runbooks/ambiguous-write.md'
const runbook = readFileSync(join(root, RUNBOOK), 'utf8')

/** what the runbook must name, collected as the test uses it */
const used = new Set<string>()

interface Bin { code: number | null; out: string; err: string }

/**
 * the bin as the operator runs it: the gateway's URL and the token in the environment, never in
 * argv. `spawned`: the bin itself in a child process (the first scenario, which proves the command
 * wiring); otherwise the same command function in this process, over the same real socket
 */
async function bin (p: ControlPair, token: string, args: string[], o: { spawned?: boolean } = {}): Promise<Bin> {
  const env = { GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: token }
  let r: Bin
  if (o.spawned === true) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    r = { code, out, err }
  } else {
    const out: string[] = []
    const err: string[] = []
    const code = await runRequestsCommand(args[0] as OperatorCommand, args.slice(1), env, { out: (l) => out.push(l), err: (l) => err.push(l) })
    r = { code, out: out.map((l) => `${l}\n`).join(''), err: err.map((l) => `${l}\n`).join('') }
  }
  // never the token, whatever the answer
  expect(r.out + r.err).not.toContain(token)
  return r
}

function clock (): { now: () => number; advance: (ms: number) => void } {
  let offset = 0
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms } }
}

async function gauge (p: ControlPair): Promise<number> {
  const text = await fetch(`${p.gw.metricsUrl}/metrics`).then(async (r) => await r.text())
  return Number(/^gateway_ambiguous_mutations (\d+)$/m.exec(text)?.[1])
}

/** step 1: the alert's gauge and the warn line name the record */
async function seeTheAlert (p: ControlPair, campaignId: string, requestId: string): Promise<void> {
  expect(await gauge(p)).toBe(1)
  used.add('gateway_ambiguous_mutations')
  const line = p.gw.logs.flatMap((l) => l.split('\n')).filter((l) => l.includes('"event":"mutation"')).map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.requestId === requestId && l.outcome === 'ambiguous')
  expect(line).toMatchObject({ level: 40, campaignId, requestId })
  used.add('"level":40').add('"outcome":"ambiguous"')
}

/** step 2: the bin and the route list the record with its campaign */
async function listIt (p: ControlPair, campaignId: string, requestId: string, spawned = false): Promise<void> {
  const listed = await bin(p, p.gw.tokens.admin, ['requests', '--state', 'ambiguous'], { spawned })
  used.add('openoperator-gateway requests --state ambiguous')
  expect(listed.code, listed.err).toBe(0)
  const row = listed.out.split('\n').find((l) => l.includes(requestId))
  expect(row, listed.out).toMatch(new RegExp(`^${campaignId}\\s+${requestId}\\s+intervene\\s+ambiguous\\s`))
  expect(listed.out).toContain('openoperator-gateway reconcile <campaignId> <requestId>')
  const route = await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')
  used.add('GET /v1/requests?state=ambiguous')
  expect(route.body).toMatchObject({ requests: [{ campaignId, requestId, state: 'ambiguous', operation: 'intervene' }], nextCursor: null })
  // reconcile needs control, listing admin
  const refused = await bin(p, p.gw.tokens.controller, ['requests', '--state', 'ambiguous'])
  expect([refused.code, refused.err]).toEqual([1, expect.stringContaining('forbidden (HTTP 403)')])
}

/** step 6: nothing left to resolve, the campaign takes a mutation, the old id replays the resolved record */
async function checkResolved (p: ControlPair, campaignId: string, requestId: string, state: 'applied' | 'not_applied', body: unknown, spawned = false): Promise<void> {
  const after = await bin(p, p.gw.tokens.admin, ['requests', '--state', 'ambiguous'], { spawned })
  expect([after.code, after.out.trim()]).toEqual([0, 'no ambiguous requests'])
  expect((await p.get(p.gw.tokens.admin, '/v1/requests')).body.requests).toEqual([])
  const reads = p.calls('campaign/read_control').length
  const next = await p.post(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/interventions`, { requestId: rid('next'), intervention: { resume: true } })
  expect(next.status, JSON.stringify(next.body)).toBe(200)
  // the lease view was forgotten at the resolution: the next mutation read it from the remote
  expect(p.calls('campaign/read_control').length).toBe(reads + 1)
  used.add('read_control')
  const replay = await p.post(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/interventions`, { requestId, ...body as object })
  expect(replay.status).toBe(200)
  expect(replay.headers['idempotent-replayed']).toBe('true')
  expect(replay.body).toMatchObject({ requestId, state })
  await new Promise((r) => setTimeout(r, 1_100)) // past the metrics render cache
  expect(await gauge(p)).toBe(0)
}

describe('the ambiguous-write runbook, followed', () => {
  it('the remote applied it: list, reconcile → applied, the campaign accepts mutations again', { timeout: 60_000 }, async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-rb1')
    // planted: the remote applies the intervention and the connection drops before its answer
    const id = rid('iv')
    const body = { intervention: { pause: true } }
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    const sent = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb1/interventions', { requestId: id, ...body })
    expect(sent.body.error).toMatchObject({ code: 'ambiguous_write', reconcile: `/v1/campaigns/camp-rb1/requests/${id}/reconcile` })
    const blocked = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb1/interventions', { requestId: rid(), intervention: { go: true } })
    expect(blocked.body.error).toMatchObject({ code: 'ambiguity_unresolved', requestId: id })
    used.add('ambiguity_unresolved').add('ambiguous_write')

    await seeTheAlert(p, 'camp-rb1', id)
    await listIt(p, 'camp-rb1', id, true)

    // step 3: reconcile with a control token
    const rec = await bin(p, p.gw.tokens.controller, ['reconcile', 'camp-rb1', id], { spawned: true })
    used.add('openoperator-gateway reconcile <campaignId> <requestId>').add('POST /v1/campaigns/<campaignId>/requests/<requestId>/reconcile').add('request_status')
    expect(rec.code, rec.err).toBe(0)
    expect(rec.out).toContain(`request ${id} (intervene) of campaign camp-rb1: applied`)
    expect(rec.out).toContain('resolved by reconcile, by controller')
    used.add('"state": "applied"')
    // asked once, never resent
    expect(p.calls('campaign/request_status')).toHaveLength(1)
    expect(p.calls('campaign/intervene')).toHaveLength(1)

    await checkResolved(p, 'camp-rb1', id, 'applied', body, true)
    expect(p.calls('campaign/intervene')).toHaveLength(2)
  })

  it('the remote never applied it: reconcile is too early, wait Retry-After, reconcile → not_applied', { timeout: 60_000 }, async ({ startControlPair }) => {
    const c = clock()
    const p = await startControlPair({ clock: c.now })
    await claim(p, p.gw.tokens.controller, 'camp-rb2')
    // planted: a 502 without a JSON-RPC body, the remote having done nothing
    const id = rid('iv')
    const body = { intervention: { pause: true } }
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'status', status: 502 }, 1)
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb2/interventions', { requestId: id, ...body })).status).toBe(504)
    expect(p.sim.control.interventions('camp-rb2')).toHaveLength(0)

    await seeTheAlert(p, 'camp-rb2', id)
    await listIt(p, 'camp-rb2', id)

    const early = await bin(p, p.gw.tokens.controller, ['reconcile', 'camp-rb2', id])
    used.add('reconcile_too_early').add('Retry-After')
    expect(early.code).toBe(1)
    expect(early.err).toContain('reconcile_too_early (HTTP 409)')
    const wait = Number(/retry after (\d+) s \(Retry-After\)/.exec(early.err)?.[1])
    used.add('retry after N s (Retry-After)')
    // the deadline: written + connect (2 s here) + mutation (10 s) timeouts + 30 s
    expect(wait).toBeGreaterThan(30)
    expect(wait).toBeLessThanOrEqual(42)
    // nothing recorded: still ambiguous, no failure counted
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')).body.requests).toMatchObject([{ requestId: id, reconcileFailures: 0 }])

    // step 4: wait Retry-After (the clocks move instead: the gateway's and the remote's, as time
    // passes for both; the gateway's alone would be a skew, docs/design.md#one-clock), then reconcile again
    c.advance(wait * 1000)
    p.sim.control.advanceClock(wait * 1000)
    const rec = await bin(p, p.gw.tokens.controller, ['reconcile', 'camp-rb2', id])
    expect(rec.code, rec.err).toBe(0)
    expect(rec.out).toContain(`request ${id} (intervene) of campaign camp-rb2: not_applied`)
    expect(rec.out).toContain('send a new request with a new request id')
    used.add('"state": "not_applied"')
    expect(p.calls('campaign/intervene')).toHaveLength(1)

    await checkResolved(p, 'camp-rb2', id, 'not_applied', body)
  })

  it('request_status not advertised: reconcile says so, an admin acknowledges with a note', { timeout: 60_000 }, async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { operations: { request_status: null } } } })
    await claim(p, p.gw.tokens.controller, 'camp-rb3')
    const id = rid('iv')
    const body = { intervention: { pause: true } }
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb3/interventions', { requestId: id, ...body })).status).toBe(504)

    await seeTheAlert(p, 'camp-rb3', id)
    await listIt(p, 'camp-rb3', id)

    const rec = await bin(p, p.gw.tokens.controller, ['reconcile', 'camp-rb3', id])
    used.add('capability_unavailable')
    expect([rec.code, rec.err]).toEqual([1, expect.stringContaining('capability_unavailable (HTTP 503)')])

    // step 5: acknowledge, an admin's decision with the evidence in the note
    const note = 'the remote log shows the pause applied'
    const notAdmin = await bin(p, p.gw.tokens.controller, ['acknowledge', 'camp-rb3', id, '--resolution', 'assume_applied', '--note', note])
    expect([notAdmin.code, notAdmin.err]).toEqual([1, expect.stringContaining('forbidden (HTTP 403)')])
    // assume_not_applied is refused while the remote shows no higher epoch
    const unsafe = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb3', id, '--resolution', 'assume_not_applied', '--note', note])
    used.add('acknowledge_unsafe').add('--resolution assume_not_applied')
    expect([unsafe.code, unsafe.err]).toEqual([1, expect.stringContaining('acknowledge_unsafe (HTTP 409)')])
    const ack = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb3', id, '--resolution', 'assume_applied', '--note', note])
    used.add('openoperator-gateway acknowledge <campaignId> <requestId> --resolution assume_applied --note').add('POST /v1/campaigns/<campaignId>/requests/<requestId>/acknowledge')
    expect(ack.code, ack.err).toBe(0)
    expect(ack.out).toContain(`request ${id} (intervene) of campaign camp-rb3: applied`)
    expect(ack.out).toContain('resolved by acknowledge (assume_applied), by admin at ')
    expect(ack.out).toContain(note)

    await checkResolved(p, 'camp-rb3', id, 'applied', body)
  })

  it('no request_status and the remote never applied it: an admin fences the campaign, then acknowledges assume_not_applied', { timeout: 60_000 }, async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { operations: { request_status: null } } } })
    await claim(p, p.gw.tokens.controller, 'camp-rb5')
    // planted: a 502 without a JSON-RPC body, the remote having done nothing
    const id = rid('iv')
    const body = { intervention: { pause: true } }
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'status', status: 502 }, 1)
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb5/interventions', { requestId: id, ...body })).status).toBe(504)
    expect(p.sim.control.interventions('camp-rb5')).toHaveLength(0)
    await listIt(p, 'camp-rb5', id)

    // the dead end: no request_status to ask, assume_not_applied needs a higher epoch at the
    // remote, and a takeover claim through the gateway is refused while the campaign is blocked
    const unsafe = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb5', id, '--resolution', 'assume_not_applied', '--note', 'not in the remote log'])
    expect([unsafe.code, unsafe.err]).toEqual([1, expect.stringContaining('acknowledge_unsafe (HTTP 409)')])
    const takeover = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-rb5/control/claim', { requestId: rid('claim'), ttlSeconds: 60 })
    expect(takeover.body.error.code).toBe('ambiguity_unresolved')

    // step 6: the fence — an admin's own claim, allowed while the campaign is blocked
    const noController = await p.post(p.gw.tokens.admin, '/v1/campaigns/camp-rb5/control/fence', { requestId: rid('fence'), ttlSeconds: 60 })
    expect(noController.body.error.code).toBe('forbidden')
    const notAdmin = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb5/control/fence', { requestId: rid('fence'), ttlSeconds: 60 })
    expect(notAdmin.body.error.code).toBe('forbidden')
    // the remote's lease must lapse first: the fence claims, it does not override a live lease
    p.sim.control.setLease('camp-rb5', { controller_id: 'ctl-1', epoch: 1, expires_at: Math.floor(p.sim.control.now() / 1000) - 1 })
    const fenceId = rid('fence')
    const fence = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-rb5/control/fence', { requestId: fenceId, ttlSeconds: 60 })
    used.add('POST /v1/campaigns/<campaignId>/control/fence')
    expect(fence.status, JSON.stringify(fence.body)).toBe(200)
    expect(fence.body.lease).toMatchObject({ controllerId: 'ctl-all', epoch: 2 })
    expect((await p.get(p.gw.tokens.admin, `/v1/campaigns/camp-rb5/requests/${fenceId}`)).body).toMatchObject({ operation: 'fence', state: 'applied' })
    // a replay sends nothing; a plain mutation is still blocked until the record is resolved
    expect((await p.post(p.gw.tokens.all, '/v1/campaigns/camp-rb5/control/fence', { requestId: fenceId, ttlSeconds: 60 })).headers['idempotent-replayed']).toBe('true')
    expect(p.calls('campaign/claim_control')).toHaveLength(2)

    // the epoch the record carries is overtaken: assume_not_applied is now safe
    const ack = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb5', id, '--resolution', 'assume_not_applied', '--note', 'fenced at epoch 2; not in the remote log'])
    expect(ack.code, ack.err).toBe(0)
    expect(ack.out).toContain(`request ${id} (intervene) of campaign camp-rb5: not_applied`)
    // the admin hands the campaign back: release, and the controller claims again
    const released = await p.post(p.gw.tokens.all, '/v1/campaigns/camp-rb5/control/release', { requestId: rid('release') })
    used.add('control/release')
    expect(released.status, JSON.stringify(released.body)).toBe(200)
    await claim(p, p.gw.tokens.controller, 'camp-rb5')
    const after = await bin(p, p.gw.tokens.admin, ['requests', '--state', 'ambiguous'])
    expect([after.code, after.out.trim()]).toEqual([0, 'no ambiguous requests'])
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb5/interventions', { requestId: rid('next'), intervention: { resume: true } })).status).toBe(200)
    const replay = await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb5/interventions', { requestId: id, ...body })
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body.state]).toEqual([200, 'true', 'not_applied'])
    expect(p.calls('campaign/intervene')).toHaveLength(2)
  })

  it('reconcile keeps failing: each failure counted, then an admin acknowledges', { timeout: 60_000 }, async ({ controlPair: p }) => {
    await claim(p, p.gw.tokens.controller, 'camp-rb4')
    const id = rid('iv')
    const body = { intervention: { pause: true } }
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(p.gw.tokens.controller, '/v1/campaigns/camp-rb4/interventions', { requestId: id, ...body })).status).toBe(504)
    await listIt(p, 'camp-rb4', id)

    // acknowledge before any reconcile is refused: the remote offers request_status
    const first = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb4', id, '--resolution', 'assume_applied', '--note', 'too soon'])
    expect([first.code, first.err]).toEqual([1, expect.stringContaining('acknowledge_unsafe (HTTP 409)')])
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'rpc-error', code: -32603, message: 'internal' }, 1)
    const failed = await bin(p, p.gw.tokens.controller, ['reconcile', 'camp-rb4', id])
    expect([failed.code, failed.err]).toEqual([1, expect.stringContaining('upstream_rejected (HTTP 502)')])
    used.add('upstream_rejected').add('reconcileFailures')
    expect((await p.get(p.gw.tokens.admin, '/v1/requests?state=ambiguous')).body.requests).toMatchObject([{ requestId: id, reconcileFailures: 1 }])

    const ack = await bin(p, p.gw.tokens.admin, ['acknowledge', 'camp-rb4', id, '--resolution', 'assume_applied', '--note', 'the remote console shows it'])
    expect(ack.code, ack.err).toBe(0)
    await checkResolved(p, 'camp-rb4', id, 'applied', body)
  })

  it('the runbook names every command, route and answer the test used; the alert and docs/operating.md point at it', () => {
    expect(used.size).toBeGreaterThan(15)
    for (const s of used) expect(runbook, s).toContain(s)
    // the token from the environment only, and why
    expect(runbook).toContain('GATEWAY_TOKEN')
    expect(runbook).toContain('GATEWAY_URL')
    expect(runbook).toMatch(/never as an argument[^\n]*\n?[^\n]*`ps`/)
    expect(runbook).toMatch(/\*\*Never resend the mutation\.\*\*/)

    const rules = parse(readFileSync(join(root, 'docker/prometheus/rules.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; annotations: Record<string, string> }> }> }
    const alert = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'GatewayAmbiguousMutationsUnresolved')!
    expect(runbook).toContain(alert.alert)
    expect(alert.annotations.runbook_url).toMatch(new RegExp(`${RUNBOOK.replaceAll('.', '\\.')}$`))
    expect(alert.annotations.description).toContain('/v1/campaigns/<campaignId>/requests/<requestId>/reconcile')
    expect(alert.annotations.description).toContain('GET /v1/requests?state=ambiguous')
    expect(alert.annotations.description).not.toMatch(/POST \/v1\/requests\//)

    const operating = readFileSync(join(root, 'docs/operating.md'), 'utf8')
    const row = operating.split('\n').find((l) => l.startsWith('| `GatewayAmbiguousMutationsUnresolved`'))!
    expect(row).toContain(RUNBOOK)
    // the link itself resolves from docs/ (the text names the path from the repository root)
    expect(row).toContain('](runbooks/ambiguous-write.md)')
    expect(row).toContain('/v1/campaigns/<campaignId>/requests/<requestId>/reconcile')
    expect(row).not.toMatch(/POST \/v1\/requests\//)
  })
})
