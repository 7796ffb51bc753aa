// Two replicas on one PostgreSQL ledger where what a single replica may take for granted fails
// (docs/design.md#serialisation, docs/design.md#one-clock): the campaign lock's database session
// dies mid-mutation, and one replica's clock runs a minute ahead. Both replicas run in this
// process against the simulator over loopback; the remote's own log judges. Skipped, saying so,
// without TEST_POSTGRES_URL.
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { CONTROL_ENV, CONTROL_SIM, controlPairOf, expectEachRequestOnce, rid, type ControlPair } from '../helpers/control.js'
import { startGateway } from '../helpers/gateway.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP two replicas on PostgreSQL (lock sessions, skewed clocks): TEST_POSTGRES_URL is not set')

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** the simulator and two replicas on one fresh schema; `skewMs` moves replica B's clock alone */
async function twoReplicas (o: { skewMs?: number; env?: Record<string, string> } = {}): Promise<{ sim: Simulator; a: ControlPair; b: ControlPair; schema: string; url: string }> {
  const schema = await freshSchema(PG!)
  cleanups.push(schema.drop)
  const sim = await startSimulator(CONTROL_SIM)
  cleanups.push(async () => { expectEachRequestOnce(sim); await sim.close() })
  const env = { ...CONTROL_ENV, GATEWAY_LEDGER_URL: schema.url, ...o.env }
  const gwA = await startGateway({ simulator: sim, env })
  const skew = o.skewMs ?? 0
  const gwB = await startGateway({ simulator: sim, env, tokens: gwA.tokens, clock: () => Date.now() + skew })
  return { sim, a: controlPairOf(sim, gwA), b: controlPairOf(sim, gwB), schema: new URL(schema.url).searchParams.get('application_name')!, url: schema.url }
}

async function until (what: string, fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** the value of one metric family on a replica's /metrics */
async function metric (p: ControlPair, name: string): Promise<number> {
  const text = await (await fetch(`${p.gw.metricsUrl}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(name))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

describe.skipIf(PG === undefined)('two replicas on PostgreSQL', () => {
  it('a lock session killed while a cancel waits on tasks/get: the other replica\'s mutation goes first, the cancel is refused and never sent', async () => {
    const { sim, a, b, schema } = await twoReplicas()
    const t = a.gw.tokens.controller
    expect((await a.post(t, '/v1/campaigns/camp-k/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(200)
    expect((await a.post(t, '/v1/campaigns/camp-k/submissions', { requestId: rid('sub'), parts: [{ kind: 'text', text: 'train' }] })).status).toBe(202)

    // replica A's cancel holds the campaign's lock while the remote answers its tasks/get slowly
    sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 1500 }, 1)
    const cancelId = rid('cancel')
    const cancelling = a.post(t, '/v1/campaigns/camp-k/cancel', { requestId: cancelId })
    await until('the cancel\'s tasks/get', () => sim.rpcCalls().some((c) => c.method === 'tasks/get'))

    // the database drops the lock's session (a failover, pg_terminate_backend, a pooler timeout)
    const admin = new pg.Client({ connectionString: PG })
    await admin.connect()
    const killed = await admin.query(`SELECT pg_terminate_backend(l.pid) AS ok FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = 726011 AND s.application_name = $1`, [schema])
    await admin.end()
    expect(killed.rowCount, 'the campaign lock\'s session').toBe(1)

    // replica B takes the freed lock; its intervention reaches the remote and is held there
    sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const ivId = rid('iv')
    const intervening = b.post(t, '/v1/campaigns/camp-k/interventions', { requestId: ivId, intervention: { pause: true } })
    await until('the intervention at the remote', () => sim.held().some((h) => String(h.id) === ivId))

    const cancel = await cancelling
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(409)
    expect(cancel.body.error).toMatchObject({ code: 'campaign_busy', requestId: cancelId })
    expect(sim.rpcCalls().filter((c) => c.method === 'tasks/cancel'), 'no cancel left while the intervention was in flight').toEqual([])
    expect(await a.gw.app.ledger.get(cancelId)).toBeUndefined()

    sim.deliverHeld()
    expect((await intervening).status).toBe(200)
    expect(await metric(a, 'gateway_ledger_lock_sessions_lost_total')).toBe(1)
    // and the cancel, sent again, now goes through once
    const again = await a.post(t, '/v1/campaigns/camp-k/cancel', { requestId: cancelId })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(sim.rpcCalls().filter((c) => c.method === 'tasks/cancel')).toHaveLength(1)
  }, 30_000)

  it('a replica whose clock runs 60 s ahead turns nothing ambiguous early, settles nothing early, and refuses its own mutations', async () => {
    const { sim, a, b } = await twoReplicas({ skewMs: 60_000, env: { UPSTREAM_MUTATION_TIMEOUT_MS: '1000' } })
    const t = a.gw.tokens.controller
    expect((await a.post(t, '/v1/campaigns/camp-s/control/claim', { requestId: rid('claim'), ttlSeconds: 600 })).status).toBe(200)

    // replica A's intervention is held by the remote: pending, its owner waiting
    sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const id = rid('iv')
    const sending = a.post(t, '/v1/campaigns/camp-s/interventions', { requestId: id, intervention: { n: 1 } })
    await until('the intervention at the remote', () => sim.held().some((h) => String(h.id) === id))
    // replica B's sweep, its clock a minute past the record's deadline by its own reading
    expect(await b.gw.app.control.sweep()).toEqual([])
    expect((await b.gw.app.ledger.get(id))?.state).toBe('pending')

    // A gives up waiting: ambiguous. B's reconcile hears "not applied" — too early on the ledger's clock
    const sent = await sending
    expect(sent.status).toBe(504)
    const early = await b.post(t, `/v1/campaigns/camp-s/requests/${id}/reconcile`)
    expect(early.status, JSON.stringify(early.body)).toBe(409)
    expect(early.body.error.code).toBe('reconcile_too_early')
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(20)
    expect((await b.gw.app.ledger.get(id))?.state).toBe('ambiguous')

    // the remote applies the late arrival; the record was never settled wrongly
    sim.deliverHeld()
    expect(sim.control.applied().some((x) => x.requestId === id)).toBe(true)
    const settled = await a.post(t, `/v1/campaigns/camp-s/requests/${id}/reconcile`)
    expect(settled.body).toMatchObject({ state: 'applied' })

    // B measured its offset to the ledger at start: its mutations are refused, reads go on
    const refused = await b.post(t, '/v1/campaigns/camp-s/interventions', { requestId: rid('iv'), intervention: { n: 2 } })
    expect(refused.status, JSON.stringify(refused.body)).toBe(503)
    expect(refused.body.error).toMatchObject({ code: 'clock_skew', retryable: true })
    expect((await b.get(t, '/v1/campaigns/camp-s/control')).status).toBe(200)
    const ready = await b.get(t, '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body.checks.clock).toMatchObject({ ok: false, marginMs: 2000 })
    expect(ready.body.checks.clock.ledgerOffsetMs).toBeLessThan(-55_000)
    expect(await metric(b, 'gateway_clock_offset_seconds{peer="ledger"}')).toBeLessThan(-55)
    expect((await a.get(t, '/readyz')).body.checks.clock.ok).toBe(true)
  }, 30_000)
})
