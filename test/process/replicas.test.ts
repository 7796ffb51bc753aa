// Two replicas, proved with real processes (docs/design.md#ledger): two gateway processes on one
// PostgreSQL schema, one Redis and one simulator. What one replica recorded, the other honours;
// one request id is sent once whichever replica receives it; the campaign lock holds across
// them; a replica killed mid-mutation leaves a pending record the other turns ambiguous only
// after its deadline; PostgreSQL dropping every connection loses nothing and sends nothing twice;
// the rate budget is shared. Skipped, saying so, without TEST_POSTGRES_URL or TEST_REDIS_URL.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startGatewayChild, waitFor, type GatewayChild } from '../helpers/child.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
const REDIS = process.env.TEST_REDIS_URL
if (PG === undefined || REDIS === undefined) console.warn('SKIP the two-replica tests: TEST_POSTGRES_URL and TEST_REDIS_URL are both needed')

const CONNECT_MS = 500
const MUTATION_MS = 3000
/** the owner's wait plus the grace (docs/design.md#outcomes) */
const DEADLINE_MS = CONNECT_MS + MUTATION_MS + 30_000

interface Pair {
  sim: Simulator
  a: string
  b: string
  children: GatewayChild[]
  token: string
  schemaUrl: string
  post: (base: string, path: string, body?: unknown) => Promise<JsonResponse>
  get: (base: string, path: string) => Promise<JsonResponse>
  /** every JSON-RPC call with this id that reached the remote */
  sent: (id: string) => number
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

async function startPair (env: Record<string, string> = {}): Promise<Pair> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  const sim = await startSimulator({ profile: 'campaign-control', secret })
  cleanups.push(async () => { await sim.close() })
  const schema = await freshSchema(PG!)
  cleanups.push(schema.drop)
  const token = `tok-${randomBytes(12).toString('hex')}`
  // a caller name of this run's own: the Redis rate-limit keys are per caller
  const name = `ops-${randomBytes(4).toString('hex')}`
  const base = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name, tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-ops' }]),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: schema.url,
    GATEWAY_REDIS_URL: REDIS!,
    GATEWAY_RATE_LIMIT_READ: '100000',
    GATEWAY_RATE_LIMIT_CONTROL: '100000',
    // a busy machine must not shed these requests: load shedding is proved elsewhere
    GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
    UPSTREAM_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
    UPSTREAM_MUTATION_TIMEOUT_MS: String(MUTATION_MS),
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    ...env
  }
  const children = [startGatewayChild(base), startGatewayChild(base)]
  const [a, b] = await Promise.all(children.map(listenUrlOf))
  return {
    sim,
    a: a!,
    b: b!,
    children,
    token,
    schemaUrl: schema.url,
    post: async (url, path, body = {}) => await call(`${url}${path}`, { method: 'POST', token, body }),
    get: async (url, path) => await call(`${url}${path}`, { token }),
    sent: (id) => sim.rpcCalls().filter((c) => c.id === id).length
  }
}

const claim = async (p: Pair, url: string, campaign: string): Promise<void> => {
  const res = await p.post(url, `/v1/campaigns/${campaign}/control/claim`, { requestId: `claim-${randomBytes(6).toString('hex')}`, ttlSeconds: 600 })
  expect(res.status, res.text).toBe(200)
}

describe.skipIf(PG === undefined || REDIS === undefined)('two replicas on one PostgreSQL and one Redis', () => {
  it('what one replica records, the other reads and honours', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-1')
    const lease = await p.get(p.b, '/v1/campaigns/camp-1/control')
    expect(lease.body.lease).toMatchObject({ controllerId: 'ctl-ops', epoch: 1 })
    const iv = await p.post(p.b, '/v1/campaigns/camp-1/interventions', { requestId: 'iv-through-b', intervention: { a: 1 } })
    expect(iv.status).toBe(200)
    const seen = await p.get(p.a, '/v1/campaigns/camp-1/requests/iv-through-b')
    expect(seen.body).toMatchObject({ state: 'applied', operation: 'intervene', controllerEpoch: 1 })
    // a replay through the other replica: the stored answer, nothing sent
    const replay = await p.post(p.a, '/v1/campaigns/camp-1/interventions', { requestId: 'iv-through-b', intervention: { a: 1 } })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(p.sent('iv-through-b')).toBe(1)
  }, 60_000)

  it('one request id, many concurrent requests spread over both: one send', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-2')
    const body = { requestId: 'iv-contended', intervention: { n: 1 } }
    const answers = await Promise.all(Array.from({ length: 24 }, async (_, i) => await p.post(i % 2 === 0 ? p.a : p.b, '/v1/campaigns/camp-2/interventions', body)))
    const codes = answers.map((r) => r.status === 200 ? (r.headers['idempotent-replayed'] === 'true' ? 'replayed' : 'sent') : String(r.body?.error?.code))
    console.log(`replicas: 24 concurrent requests with one id over two replicas: ${JSON.stringify(Object.fromEntries([...new Set(codes)].map((c) => [c, codes.filter((x) => x === c).length])))}`)
    expect(codes.filter((c) => c === 'sent')).toHaveLength(1)
    for (const c of codes) expect(['sent', 'replayed', 'request_in_flight', 'campaign_busy']).toContain(c)
    expect(p.sent('iv-contended')).toBe(1)
  }, 60_000)

  it('an ambiguous write through one blocks the campaign on the other, which can reconcile it', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-3')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(p.a, '/v1/campaigns/camp-3/interventions', { requestId: 'iv-dropped', intervention: { a: 1 } })).status).toBe(504)
    const blocked = await p.post(p.b, '/v1/campaigns/camp-3/interventions', { requestId: 'iv-after', intervention: { a: 2 } })
    expect(blocked.body.error).toMatchObject({ code: 'ambiguity_unresolved', requestId: 'iv-dropped' })
    const reconciled = await p.post(p.b, '/v1/campaigns/camp-3/requests/iv-dropped/reconcile')
    expect(reconciled.body.state).toBe('applied')
    expect((await p.post(p.a, '/v1/campaigns/camp-3/interventions', { requestId: 'iv-after', intervention: { a: 2 } })).status).toBe(200)
    expect(p.sent('iv-dropped')).toBe(1)
  }, 60_000)

  it('the campaign lock holds across them: a mutation on the other replica waits, then 409 campaign_busy', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-4')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const first = p.post(p.a, '/v1/campaigns/camp-4/interventions', { requestId: 'iv-held-1', intervention: { a: 1 } })
    await waitFor(() => p.sim.held().length === 1 ? true : undefined, 5000, 'the remote to hold the request')
    const t0 = Date.now()
    const second = await p.post(p.b, '/v1/campaigns/camp-4/interventions', { requestId: 'iv-waiting', intervention: { a: 2 } })
    const waited = Date.now() - t0
    expect(second.body.error.code).toBe('campaign_busy')
    expect(waited).toBeGreaterThanOrEqual(1900)
    expect((await first).status).toBe(504)
    p.sim.dropHeld()
    expect(p.sent('iv-waiting')).toBe(0)
  }, 60_000)

  it('a replica killed mid-mutation leaves a pending record; the other turns it ambiguous only after its deadline', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-5')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const sentAt = Date.now()
    void p.post(p.a, '/v1/campaigns/camp-5/interventions', { requestId: 'iv-orphan', intervention: { a: 1 } }).catch(() => undefined)
    await waitFor(() => p.sim.held().length === 1 ? true : undefined, 5000, 'the remote to hold the request')
    p.children[0]!.child.kill('SIGKILL')
    await p.children[0]!.exited
    p.sim.dropHeld()
    // the survivor sweeps every 10 s: the record stays pending until its deadline has passed
    const pendingSeen: number[] = []
    let ambiguousAt = 0
    const end = sentAt + DEADLINE_MS + 20_000
    while (Date.now() < end) {
      const state = (await p.get(p.b, '/v1/campaigns/camp-5/requests/iv-orphan')).body.state
      if (state === 'ambiguous') { ambiguousAt = Date.now(); break }
      expect(state).toBe('pending')
      pendingSeen.push(Date.now() - sentAt)
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    console.log(`replicas: orphaned pending record seen pending until +${Math.max(...pendingSeen)} ms, ambiguous at +${ambiguousAt - sentAt} ms (deadline +${DEADLINE_MS} ms)`)
    expect(ambiguousAt).toBeGreaterThan(0)
    expect(ambiguousAt - sentAt).toBeGreaterThanOrEqual(DEADLINE_MS)
    // blocked meanwhile; after the deadline reconcile settles it (the remote lost the request)
    expect((await p.post(p.b, '/v1/campaigns/camp-5/requests/iv-orphan/reconcile')).body.state).toBe('not_applied')
    expect(p.sent('iv-orphan')).toBe(1)
  }, 90_000)

  it('PostgreSQL dropping every gateway connection mid-run: no record lost, nothing sent twice, both recover', async () => {
    const p = await startPair()
    const campaigns = ['camp-6a', 'camp-6b', 'camp-6c', 'camp-6d']
    for (const c of campaigns) await claim(p, p.a, c)
    const ids: string[] = []
    const results: JsonResponse[] = []
    let stop = false
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const id = `iv-load-${i}`
        ids.push(id)
        results.push(await p.post(i % 2 === 0 ? p.a : p.b, `/v1/campaigns/${campaigns[i % campaigns.length]!}/interventions`, { requestId: id, intervention: { i } }))
      }
    })()
    const admin = new pg.Client({ connectionString: PG })
    await admin.connect()
    const app = new URL(p.schemaUrl).searchParams.get('application_name')
    let killed = 0
    for (let k = 0; k < 3; k++) {
      await new Promise((resolve) => setTimeout(resolve, 700))
      killed += (await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app])).rowCount ?? 0
    }
    await new Promise((resolve) => setTimeout(resolve, 700))
    stop = true
    await load
    await admin.end()
    const codes = results.map((r) => r.status === 200 ? 'ok' : String(r.body?.error?.code))
    const tally = Object.fromEntries([...new Set(codes)].map((c) => [c, codes.filter((x) => x === c).length]))
    console.log(`replicas: ${results.length} mutations while ${killed} sessions were terminated: ${JSON.stringify(tally)}`)
    expect(killed).toBeGreaterThan(0)
    for (const c of codes) expect(['ok', 'ledger_unavailable', 'ambiguous_write', 'ambiguity_unresolved']).toContain(c)
    // nothing twice; whatever reached the remote has its record
    for (const id of ids) {
      expect(p.sent(id), id).toBeLessThanOrEqual(1)
      if (p.sent(id) === 1) expect((await p.get(p.b, `/v1/campaigns/${campaigns[Number(id.split('-')[2]) % campaigns.length]!}/requests/${id}`)).status, id).toBe(200)
    }
    // both serve again
    for (const [url, c] of [[p.a, 'camp-6e'], [p.b, 'camp-6f']] as const) {
      let ok = false
      for (let i = 0; i < 20 && !ok; i++) {
        ok = (await p.post(url, `/v1/campaigns/${c}/control/claim`, { requestId: `claim-recover-${c}-${i}`, ttlSeconds: 60 })).status === 200
        if (!ok) await new Promise((resolve) => setTimeout(resolve, 250))
      }
      expect(ok).toBe(true)
    }
  }, 90_000)

  it('the per-caller rate budget is shared through Redis', async () => {
    const p = await startPair({ GATEWAY_RATE_LIMIT_READ: '4' })
    const statuses: number[] = []
    for (const url of [p.a, p.b, p.a, p.b, p.a, p.b]) statuses.push((await p.get(url, '/v1/upstream')).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
  }, 60_000)
})
