// Two replicas through a real PostgreSQL restart and a Redis loss (docs/design.md#ledger,
// docs/design.md#rate-limits): two gateway processes on a PostgreSQL cluster this file owns
// (test/helpers/pg-cluster.ts: initdb on a temporary directory, stopped, crashed and started with
// pg_ctl) and the simulator in campaign-control mode. Each scenario is checked against the
// remote's own log: no request id reached it twice, none reached it without a ledger record,
// and whatever it applied is `applied` or `ambiguous` in the ledger, never anything else.
// (a) a fast restart while the remote holds a mutation: the outcome is written after the
// reconnect, the other replica is kept out meanwhile by the pending record, a retry replays;
// (b) a crash (`-m immediate`) exactly between the pending commit and the send, and exactly
// before the pending commit (the gateway frozen there, test/helpers/crash-child.ts): the pending
// record survives, or the caller was told 503 with nothing sent; (c) outcomes that cannot be
// written — a crash while the gateway stands before the outcome write with the answer in hand,
// and the database down when a held mutation's answer arrives: 504 `ambiguous_write`, the record
// pending, ambiguous at its deadline, reconciled `applied`; meanwhile every mutation 503
// `ledger_unavailable` with nothing sent, and reads served; (d) a Redis of this file's own
// killed under both replicas: rate limits fail open, /readyz says so and stays 200, and the
// shared budget holds again once it is back.
// Skipped, saying so, without the PostgreSQL binaries (or, as root, runuser and a postgres user),
// and (d) without redis-server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startCrashChild, startGatewayChild, waitFor, type GatewayChild } from '../helpers/child.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { freePort, pgClusterUnavailable, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { freshSchema } from '../helpers/postgres.js'

const NO_CLUSTER = pgClusterUnavailable()
if (NO_CLUSTER !== undefined) console.warn(`SKIP the PostgreSQL-restart replica tests: ${NO_CLUSTER}`)
const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0
if (!HAVE_REDIS_SERVER) console.warn('SKIP the Redis-loss replica test: redis-server is not on PATH')
/** (c) waits out two records' real deadlines (the 30 s grace, in child processes): `npm run test:soak` runs it, `npm test` not */
const SOAK = process.env.SOAK === '1'
if (!SOAK) console.warn('SKIP (c) of the PostgreSQL-restart replica tests (outcome writes that fail, then the deadline): it waits out two 30 s deadlines, so it runs in npm run test:soak (SOAK=1)')

const CONNECT_MS = 500
/** long enough that a restart while the remote holds a request never times it out */
const PATIENT_MUTATION_MS = 20_000
/**
 * where the test waits for a deadline (the owner's wait plus the grace, docs/design.md#outcomes):
 * short, but past a slow `pg_ctl stop`, so the held request's answer comes with the server down
 */
const SHORT_MUTATION_MS = 4000
const SHORT_DEADLINE_MS = CONNECT_MS + SHORT_MUTATION_MS + 30_000
/** how long a replica may take to answer /readyz 200 again once the database is back */
const READY_WITHIN_MS = 15_000
/** the control extension's mutations: their JSON-RPC id is the request id (the only ones these tests send) */
const MUTATION_METHODS = new Set(['campaign/claim_control', 'campaign/renew_control', 'campaign/release_control', 'campaign/intervene'])

interface Pair {
  sim: Simulator
  a: string
  b: string
  children: GatewayChild[]
  metrics: string[]
  schemaUrl: string
  post: (base: string, path: string, body?: unknown) => Promise<JsonResponse>
  get: (base: string, path: string) => Promise<JsonResponse>
  /** every JSON-RPC call with this id that reached the remote's front end (held ones too) */
  sent: (id: string) => number
}

interface PairOptions {
  env?: Record<string, string>
  /** replica A as the crash child (test/helpers/crash-child.ts) with this trap */
  trapA?: Record<string, string>
}

let cluster: PgCluster
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

const iv = (id: string, n = 1): { requestId: string; intervention: Record<string, unknown> } => ({ requestId: id, intervention: { n } })
const ivPath = (campaign: string): string => `/v1/campaigns/${campaign}/interventions`
const codeOf = (r: JsonResponse): string => r.status === 200 ? (r.headers['idempotent-replayed'] === 'true' ? 'replayed' : 'ok') : `${r.status} ${String(r.body?.error?.code)}`
const tally = (codes: string[]): string => JSON.stringify(Object.fromEntries([...new Set(codes)].map((c) => [c, codes.filter((x) => x === c).length])))

async function startPair (o: PairOptions = {}): Promise<Pair> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  const sim = await startSimulator({ profile: 'campaign-control', secret })
  cleanups.push(async () => { await sim.close() })
  const schema = await freshSchema(cluster.url)
  const token = `tok-${randomBytes(12).toString('hex')}`
  const base = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name: 'ops', tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-ops' }]),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: schema.url,
    GATEWAY_RATE_LIMIT_READ: '100000',
    GATEWAY_RATE_LIMIT_CONTROL: '100000',
    // a busy machine must not shed these requests: load shedding is proved elsewhere
    GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
    UPSTREAM_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
    UPSTREAM_MUTATION_TIMEOUT_MS: String(PATIENT_MUTATION_MS),
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    ...o.env
  }
  const children = [o.trapA === undefined ? startGatewayChild(base) : startCrashChild({ ...base, ...o.trapA }), startGatewayChild(base)]
  onTestFailed(() => {
    for (const [i, c] of children.entries()) console.log(`replica ${'ab'[i]!} log (tail):\n${(c.out() + c.err()).split('\n').slice(-40).join('\n')}`)
    console.log(`PostgreSQL log (tail):\n${cluster.log().split('\n').slice(-20).join('\n')}`)
  })
  const [a, b] = await Promise.all(children.map(listenUrlOf))
  const metrics = children.map((c) => /"metricsUrl":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(c.out())?.[1] ?? '')
  return {
    sim,
    a: a!,
    b: b!,
    children,
    metrics,
    schemaUrl: schema.url,
    post: async (url, path, body = {}) => await call(`${url}${path}`, { method: 'POST', token, body }),
    get: async (url, path) => await call(`${url}${path}`, { token }),
    sent: (id) => sim.rpcCalls().filter((c) => c.id === id).length
  }
}

/** a redis-server of this file's own (never the machine's: other tests use it), in the foreground */
async function startRedis (port: number): Promise<ChildProcess> {
  const s = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' })
  try {
    await waitFor(() => spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().includes('PONG') === true ? true : undefined, 10_000, 'redis-server')
  } catch (err) {
    s.kill('SIGKILL')
    throw err
  }
  return s
}

const storeErrors = async (metricsUrl: string): Promise<number> =>
  Number(/^gateway_rate_limit_store_errors_total (\d+)/m.exec((await call(`${metricsUrl}/metrics`)).text)?.[1] ?? 'NaN')

async function claim (p: Pair, url: string, campaign: string): Promise<void> {
  const res = await p.post(url, `/v1/campaigns/${campaign}/control/claim`, { requestId: `claim-${randomBytes(6).toString('hex')}`, ttlSeconds: 600 })
  expect(res.status, res.text).toBe(200)
}

/** polls until `ok` holds for the answer, within `ms`; answers how long it took */
async function pollUntil (what: string, ms: number, fetch: () => Promise<JsonResponse>, ok: (r: JsonResponse) => boolean): Promise<number> {
  const t0 = Date.now()
  let last: JsonResponse | undefined
  while (Date.now() - t0 < ms) {
    last = await fetch().catch(() => undefined)
    if (last !== undefined && ok(last)) return Date.now() - t0
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}; last answer ${last?.status ?? 'none'} ${last?.text ?? ''}`)
}

const readyAgain = async (url: string): Promise<number> =>
  await pollUntil(`${url}/readyz to be 200`, READY_WITHIN_MS, async () => await call(`${url}/readyz`), (r) => r.status === 200)

/** the ledger's rows, read straight from the cluster */
async function ledgerRows (p: Pair): Promise<Map<string, { state: string; owner: string }>> {
  const c = new pg.Client({ connectionString: p.schemaUrl })
  await c.connect()
  try {
    const rows = (await c.query<{ request_id: string; state: string; owner: string }>('SELECT request_id, state, owner FROM mutation_records')).rows
    return new Map(rows.map((r) => [r.request_id, { state: r.state, owner: r.owner }]))
  } finally {
    await c.end()
  }
}

/**
 * The remote's log against the ledger: no mutation id reached the remote twice (on the wire,
 * held and faulted calls included, and at its handler), none reached it without a record, and
 * every mutation it applied is `applied` or `ambiguous` in the ledger. Answers the counts.
 */
async function expectLedgerAgreesWithRemote (p: Pair): Promise<{ onWire: number; applied: number }> {
  const rows = await ledgerRows(p)
  const wire = p.sim.rpcCalls().filter((c) => MUTATION_METHODS.has(c.method)).map((c) => String(c.id))
  for (const id of new Set(wire)) {
    expect(wire.filter((x) => x === id), `request id ${id} on the wire`).toHaveLength(1)
    expect(rows.has(id), `request id ${id} reached the remote without a ledger record`).toBe(true)
  }
  for (const [id, n] of p.sim.control.requestCounts()) expect(n, `request id ${id} reached the remote's handler ${n} times`).toBe(1)
  const applied = p.sim.control.applied()
  for (const m of applied) expect(['applied', 'ambiguous'], `${m.requestId}, applied by the remote`).toContain(rows.get(m.requestId)?.state)
  return { onWire: wire.length, applied: applied.length }
}

describe.skipIf(NO_CLUSTER !== undefined)('two replicas through a PostgreSQL restart and a Redis loss', () => {
  beforeAll(async () => { cluster = await startPgCluster() }, 60_000)
  afterAll(async () => { await cluster?.destroy() }, 60_000)
  // a test that failed while the server was down leaves it down: the next one starts it
  beforeEach(async () => { if (!cluster.running()) await cluster.start() }, 60_000)

  it('(a) a fast restart while the remote holds a mutation: the outcome is written after the reconnect, nothing sent twice', async () => {
    const p = await startPair()
    await claim(p, p.a, 'camp-a')
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const answer = p.post(p.a, ivPath('camp-a'), iv('iv-a-held'))
    answer.catch(() => undefined) // awaited below; a failure before then must not leave it unhandled
    await waitFor(() => p.sim.held().length === 1 ? true : undefined, 10_000, 'the remote to hold the request')

    const t0 = Date.now()
    await cluster.stop('fast')
    await cluster.start()
    const restartMs = Date.now() - t0
    const readyMs = await Promise.all([p.a, p.b].map(readyAgain))

    // the campaign lock's session died with the server; the pending record still keeps B out
    const same = await p.post(p.b, ivPath('camp-a'), iv('iv-a-held'))
    expect(same.body.error).toMatchObject({ code: 'request_in_flight', requestId: 'iv-a-held' })
    const other = await p.post(p.b, ivPath('camp-a'), iv('iv-a-other'))
    expect(['ambiguity_unresolved', 'campaign_busy'], other.text).toContain(other.body.error?.code)
    expect(p.sent('iv-a-other')).toBe(0)

    expect(p.sim.deliverHeld()).toBe(1)
    const res = await answer
    expect(res.status, res.text).toBe(200)
    expect((await p.get(p.b, '/v1/campaigns/camp-a/requests/iv-a-held')).body.state).toBe('applied')
    const replay = await p.post(p.b, ivPath('camp-a'), iv('iv-a-held'))
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(p.sent('iv-a-held')).toBe(1)
    // both replicas mutate again
    expect((await p.post(p.b, ivPath('camp-a'), iv('iv-a-after-b'))).status).toBe(200)
    expect((await p.post(p.a, ivPath('camp-a'), iv('iv-a-after-a'))).status).toBe(200)
    const seen = await expectLedgerAgreesWithRemote(p)
    console.log(`pg-restart (a): fast restart ${restartMs} ms with the request held; /readyz 200 again after ${readyMs.join(' / ')} ms; held answer ${codeOf(res)}; the other replica meanwhile: ${codeOf(same)}, ${codeOf(other)}; ${seen.onWire} mutations on the wire, each once`)
  }, 90_000)

  it('(b) a crash between the pending commit and the send, and before the commit: the record survives, or 503 with nothing sent', async () => {
    const resume = mkdtempSync(join(tmpdir(), 'oogw-resume-'))
    cleanups.push(() => { rmSync(resume, { recursive: true, force: true }) })
    const p = await startPair({ trapA: { PAUSE_AT: 'before-send@iv-b-committed,before-pending@iv-b-uncommitted', PAUSE_RESUME_DIR: resume } })
    await claim(p, p.b, 'camp-b')
    const paused = async (step: string, id: string): Promise<void> => {
      await waitFor(() => p.children[0]!.out().includes(`PAUSE-POINT ${step} ${id}`) ? true : undefined, 10_000, `replica a to pause at ${step}`)
    }

    // A commits the pending record and stops right before the send; the server crashes under it
    const committed = p.post(p.a, ivPath('camp-b'), iv('iv-b-committed'))
    committed.catch(() => undefined)
    await paused('before-send', 'iv-b-committed')
    await cluster.stop('immediate')
    await cluster.start()
    const row = (await ledgerRows(p)).get('iv-b-committed')
    expect(row?.state, 'the pending record after crash recovery').toBe('pending')
    await readyAgain(p.b)
    const same = await p.post(p.b, ivPath('camp-b'), iv('iv-b-committed'))
    expect(same.body.error).toMatchObject({ code: 'request_in_flight' })
    const other = await p.post(p.b, ivPath('camp-b'), iv('iv-b-other'))
    expect(['ambiguity_unresolved', 'campaign_busy'], other.text).toContain(other.body.error?.code)
    writeFileSync(join(resume, 'iv-b-committed'), '')
    const sentAfterCrash = await committed
    expect(sentAfterCrash.status, sentAfterCrash.text).toBe(200)
    expect(p.sent('iv-b-committed')).toBe(1)
    expect((await p.get(p.b, '/v1/campaigns/camp-b/requests/iv-b-committed')).body.state).toBe('applied')
    expect((await p.post(p.b, ivPath('camp-b'), iv('iv-b-committed'))).headers['idempotent-replayed']).toBe('true')

    // A holds the campaign and stops right before the pending insert; the server crashes and stays down
    const uncommitted = p.post(p.a, ivPath('camp-b'), iv('iv-b-uncommitted'))
    uncommitted.catch(() => undefined)
    await paused('before-pending', 'iv-b-uncommitted')
    await cluster.stop('immediate')
    writeFileSync(join(resume, 'iv-b-uncommitted'), '')
    const refused = await uncommitted
    expect(refused.status, refused.text).toBe(503)
    expect(refused.body.error).toMatchObject({ code: 'ledger_unavailable', retryable: true })
    expect(p.sent('iv-b-uncommitted')).toBe(0)
    await cluster.start()
    const readyMs = await Promise.all([p.a, p.b].map(readyAgain))
    expect((await ledgerRows(p)).has('iv-b-uncommitted')).toBe(false)
    expect((await p.get(p.b, '/v1/campaigns/camp-b/requests/iv-b-uncommitted')).status).toBe(404)
    // retryable means it: the same request runs as new, once
    const retried = await p.post(p.b, ivPath('camp-b'), iv('iv-b-uncommitted'))
    expect(retried.status, retried.text).toBe(200)
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    expect(p.sent('iv-b-uncommitted')).toBe(1)
    const seen = await expectLedgerAgreesWithRemote(p)
    console.log(`pg-restart (b): crash after the pending commit: record ${row?.state} after recovery, the other replica ${codeOf(same)} / ${codeOf(other)}, the send then ${codeOf(sentAfterCrash)}; crash before the commit: ${codeOf(refused)}, sent 0, no record, retried ${codeOf(retried)}; /readyz 200 again after ${readyMs.join(' / ')} ms; ${seen.onWire} mutations on the wire, each once`)
  }, 90_000)

  it.skipIf(!SOAK)('(c) outcomes that cannot be written: a crash with the answer in hand, the database down when it comes; mutations 503 meanwhile, reads served; pending until the deadline, then reconciled', async () => {
    const resume = mkdtempSync(join(tmpdir(), 'oogw-resume-'))
    cleanups.push(() => { rmSync(resume, { recursive: true, force: true }) })
    const p = await startPair({
      env: { UPSTREAM_MUTATION_TIMEOUT_MS: String(SHORT_MUTATION_MS) },
      trapA: { PAUSE_AT: 'before-outcome@iv-c-answered', PAUSE_RESUME_DIR: resume }
    })
    for (const c of ['camp-c1', 'camp-c2', 'camp-c3']) await claim(p, p.b, c)

    // A has the remote's answer and stops right before writing it; the server crashes and comes
    // back meanwhile. The pool still holds the connections that died while A stood still: the
    // write may fail on one of them (then 504, the record pending), never be lost or re-sent
    const postedAt: Record<string, number> = { 'iv-c-answered': Date.now() }
    const answered = p.post(p.a, ivPath('camp-c3'), iv('iv-c-answered'))
    answered.catch(() => undefined)
    await waitFor(() => p.children[0]!.out().includes('PAUSE-POINT before-outcome iv-c-answered') ? true : undefined, 10_000, 'replica a to pause before the outcome write')
    await cluster.stop('immediate')
    await cluster.start()
    writeFileSync(join(resume, 'iv-c-answered'), '')
    const afterCrash = await answered
    expect(['ok', '504 ambiguous_write'], afterCrash.text).toContain(codeOf(afterCrash))
    await Promise.all([p.a, p.b].map(readyAgain))
    const afterCrashState = (await p.get(p.b, '/v1/campaigns/camp-c3/requests/iv-c-answered')).body.state
    expect(afterCrashState).toBe(afterCrash.status === 200 ? 'applied' : 'pending')
    expect(p.sent('iv-c-answered')).toBe(1)

    // the remote holds a mutation; the server stops; the remote applies it and answers
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    postedAt['iv-c-held'] = Date.now()
    const held = p.post(p.a, ivPath('camp-c1'), iv('iv-c-held'))
    held.catch(() => undefined)
    await waitFor(() => p.sim.held().length === 1 ? true : undefined, 10_000, 'the remote to hold the request')
    await cluster.stop('fast')
    const downAt = Date.now()
    expect(p.sim.deliverHeld()).toBe(1)
    const unwritten = await held
    expect(unwritten.status, unwritten.text).toBe(504)
    expect(unwritten.body.error).toMatchObject({ code: 'ambiguous_write', retryable: false })

    // while it is down: every mutation 503 ledger_unavailable (retryable), nothing sent; reads served
    const down: string[] = []
    const reads: number[] = []
    for (const [i, url] of [p.a, p.b, p.a, p.b].entries()) {
      const r = await p.post(url, ivPath('camp-c2'), iv(`iv-c-down-${i}`))
      down.push(codeOf(r))
      expect(r.body.error).toMatchObject({ code: 'ledger_unavailable', retryable: true })
      expect(p.sent(`iv-c-down-${i}`)).toBe(0)
      const read = await p.get(url, '/v1/supervisor/health')
      reads.push(read.status)
      expect(read.status, read.text).toBe(200)
    }
    for (const url of [p.a, p.b]) {
      const ready = await call(`${url}/readyz`)
      expect(ready.status).toBe(503)
      expect(ready.body.checks.ledger).toBe(false)
      expect((await p.get(url, '/v1/campaigns/camp-c1/requests/iv-c-held')).body.error.code).toBe('ledger_unavailable')
    }
    await cluster.start()
    const downMs = Date.now() - downAt
    const readyMs = await Promise.all([p.a, p.b].map(readyAgain))

    // nothing lost: the record is pending, so the id and the campaign stay blocked, nothing sent again
    expect((await p.get(p.b, '/v1/campaigns/camp-c1/requests/iv-c-held')).body.state).toBe('pending')
    expect((await p.post(p.b, ivPath('camp-c1'), iv('iv-c-held'))).body.error.code).toBe('request_in_flight')
    expect((await p.post(p.b, ivPath('camp-c1'), iv('iv-c-blocked'))).body.error).toMatchObject({ code: 'ambiguity_unresolved', requestId: 'iv-c-held' })
    // the refused ones were never recorded: retried, each runs once
    for (let i = 0; i < 4; i++) {
      const r = await p.post(i % 2 === 0 ? p.b : p.a, ivPath('camp-c2'), iv(`iv-c-down-${i}`))
      expect(r.status, r.text).toBe(200)
      expect(p.sent(`iv-c-down-${i}`)).toBe(1)
    }

    // a sweep turns each unwritten record ambiguous once its deadline has passed, never before;
    // reconcile then finds it applied, and the same id replays
    const unresolved = Object.keys(postedAt).filter((id) => id === 'iv-c-held' || afterCrash.status !== 200)
    const campaignOf: Record<string, string> = { 'iv-c-held': 'camp-c1', 'iv-c-answered': 'camp-c3' }
    const ambiguousAfter: string[] = []
    for (const id of unresolved) {
      let at = 0
      await pollUntil(`${id} to turn ambiguous`, SHORT_DEADLINE_MS + 30_000, async () => await p.get(p.a, `/v1/campaigns/${campaignOf[id]!}/requests/${id}`), (r) => {
        expect(['pending', 'ambiguous']).toContain(r.body.state)
        if (r.body.state === 'ambiguous') at = Date.now()
        return at > 0
      })
      expect(at - postedAt[id]!).toBeGreaterThanOrEqual(SHORT_DEADLINE_MS)
      ambiguousAfter.push(`${id} +${at - postedAt[id]!} ms`)
      const reconciled = await p.post(p.b, `/v1/campaigns/${campaignOf[id]!}/requests/${id}/reconcile`)
      expect(reconciled.body.state, reconciled.text).toBe('applied')
    }
    for (const id of Object.keys(postedAt)) {
      const replay = await p.post(p.a, ivPath(campaignOf[id]!), iv(id))
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(p.sent(id)).toBe(1)
      expect((await p.post(p.a, ivPath(campaignOf[id]!), iv(`${id}-after`))).status).toBe(200)
    }
    const seen = await expectLedgerAgreesWithRemote(p)
    console.log(`pg-restart (c): crash before the outcome write: answered ${codeOf(afterCrash)}, record ${String(afterCrashState)}; down ${downMs} ms: held mutation answered ${codeOf(unwritten)}, mutations ${tally(down)}, nothing sent, reads ${tally(reads.map(String))}, /readyz 503 on both, 200 again after ${readyMs.join(' / ')} ms; pending records ambiguous at ${ambiguousAfter.join(', ')} (deadline +${SHORT_DEADLINE_MS} ms), reconciled applied; ${seen.onWire} mutations on the wire, each once`)
  }, 120_000)

  it.skipIf(!HAVE_REDIS_SERVER)('(d) Redis killed under both: reads and mutations served past the budget (fail open), /readyz says so and stays 200; the shared budget holds again once it is back', async () => {
    const port = await freePort()
    let redis = await startRedis(port)
    cleanups.push(() => { redis.kill('SIGKILL') })
    const p = await startPair({ env: { GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_RATE_LIMIT_READ: '4', GATEWAY_RATE_LIMIT_CONTROL: '3' } })
    const read = async (url: string): Promise<number> => (await p.get(url, '/v1/upstream')).status
    const alternate = [p.a, p.b, p.a, p.b, p.a, p.b]
    const redisCheck = async (url: string): Promise<JsonResponse> => await call(`${url}/readyz`)

    await claim(p, p.a, 'camp-d')
    const up: number[] = []
    for (const url of alternate) up.push(await read(url))
    expect(up).toEqual([200, 200, 200, 200, 429, 429])
    for (const url of [p.a, p.b]) expect((await redisCheck(url)).body.checks.redis).toBe(true)
    const errorsBefore = await Promise.all(p.metrics.map(storeErrors))

    redis.kill('SIGKILL')
    await new Promise((resolve) => redis.once('exit', resolve))
    for (const url of [p.a, p.b]) {
      await pollUntil(`${url}/readyz to report Redis down`, 10_000, async () => await redisCheck(url), (r) => r.body?.checks?.redis === false)
      expect((await redisCheck(url)).status).toBe(200)
    }
    const down: number[] = []
    for (const url of alternate) down.push(await read(url))
    const downMutations: string[] = []
    for (const [i, url] of [p.a, p.b, p.a, p.b].entries()) downMutations.push(codeOf(await p.post(url, ivPath('camp-d'), iv(`iv-d-down-${i}`))))
    // the documented fallback: no budget at all while the shared counters are unreachable
    expect(down).toEqual([200, 200, 200, 200, 200, 200])
    expect(downMutations).toEqual(['ok', 'ok', 'ok', 'ok'])
    // counted on both (the metrics listener may serve a render up to a second old: poll)
    for (const [i, m] of p.metrics.entries()) {
      await pollUntil(`replica ${'ab'[i]!}'s store errors to rise`, 5000, async () => await call(`${m}/metrics`), (r) =>
        Number(/^gateway_rate_limit_store_errors_total (\d+)/m.exec(r.text)?.[1] ?? 'NaN') > errorsBefore[i]!)
    }
    const errorsDown = await Promise.all(p.metrics.map(storeErrors))

    redis = await startRedis(port)
    const backMs: number[] = []
    for (const url of [p.a, p.b]) backMs.push(await pollUntil(`${url}/readyz to report Redis back`, 15_000, async () => await redisCheck(url), (r) => r.status === 200 && r.body?.checks?.redis === true))
    const again: number[] = []
    for (const url of alternate) again.push(await read(url))
    const againMutations: number[] = []
    for (const [i, url] of [p.a, p.b, p.a, p.b].entries()) againMutations.push((await p.post(url, ivPath('camp-d'), iv(`iv-d-again-${i}`))).status)
    console.log(`redis-lost (two replicas, read budget 4, control 3): up ${up.join(',')} · down: reads ${down.join(',')}, mutations ${downMutations.join(',')}, store errors ${errorsBefore.join('/')} → ${errorsDown.join('/')}, /readyz 200 with redis false · back (ready after ${backMs.join(' / ')} ms): reads ${again.join(',')}, mutations ${againMutations.join(',')}`)
    expect(again).toEqual([200, 200, 200, 200, 429, 429])
    expect(againMutations).toEqual([200, 200, 200, 429])
    expect(p.sent('iv-d-again-3')).toBe(0)
    const seen = await expectLedgerAgreesWithRemote(p)
    console.log(`redis-lost: ${seen.onWire} mutations on the wire, each once`)
  }, 90_000)
})
