// A rolling restart behind the shipped ingress (docker/nginx/gateway.conf,
// docs/operating.md#several-replicas): a real nginx loading that very file in front of two gateway processes on
// one PostgreSQL schema, one Redis and one campaign-control simulator. Under steady reads and
// mutations (claims and interventions with fresh request ids on a few campaigns), each replica
// in turn is drained with SIGTERM and replaced by a new process on the same port. No read may
// fail: the ingress retries a read on the other replica. No mutation may be sent twice: the
// ingress never retries a POST once sent. Every 2xx mutation reached the remote exactly once,
// and a refused one either reached nothing or is recorded applied/ambiguous — and sent again by
// the client with the same request id it runs or replays, still once.
// Then the file's other promises: a read sent on a kept-alive connection the replica closes under
// it (a drain's idle close crossing the request) goes to the other replica, a POST does not;
// limit_conn in the gateway's error shape, /metrics not served.
// Skipped, saying so, without nginx, TEST_POSTGRES_URL or TEST_REDIS_URL.
import { randomBytes } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startGatewayChild, type GatewayChild } from '../helpers/child.js'
import { startGateway } from '../helpers/gateway.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { fixedPort, startIngress } from '../helpers/ingress.js'
import { nginxAvailable, NGINX_SKIP } from '../helpers/nginx.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
const REDIS = process.env.TEST_REDIS_URL
const NGINX = nginxAvailable()
if (!NGINX) console.warn(`SKIP the ingress tests: ${NGINX_SKIP}`)
if (PG === undefined || REDIS === undefined) console.warn('SKIP the rolling restart behind the ingress: TEST_POSTGRES_URL and TEST_REDIS_URL are both needed')

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const tally = (xs: string[]): string => [...new Set(xs)].sort().map((x) => `${x}×${xs.filter((y) => y === x).length}`).join(' ')
const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
const outcome = (r: JsonResponse): string => r.status === 0 ? 'socket error' : `${r.status}${r.body?.error?.code === undefined ? '' : ` ${String(r.body.error.code)}`}`

const CAMPAIGNS = ['roll-a', 'roll-b', 'roll-c', 'roll-d']
const MUTATING = new Set(['campaign/claim_control', 'campaign/intervene'])

interface Mutation { id: string; campaign: string; path: string; body: Record<string, unknown>; res: JsonResponse }

describe.skipIf(!NGINX || PG === undefined || REDIS === undefined)('two replicas behind the shipped nginx ingress', () => {
  it('a rolling restart under steady reads and mutations: every read 200, no mutation sent twice, every refusal safe to retry', async () => {
    const started = Date.now()
    const secret = `sim-${randomBytes(12).toString('hex')}`
    const sim: Simulator = await startSimulator({ profile: 'campaign-control', secret })
    cleanups.push(async () => { await sim.close() })
    const schema = await freshSchema(PG!)
    cleanups.push(schema.drop)
    const token = `tok-${randomBytes(12).toString('hex')}`
    // a caller name of this run's own: the Redis rate-limit keys are per caller
    const caller = `roll-${randomBytes(4).toString('hex')}`
    // the ingress names fixed ports: each replica keeps its port across its restart
    const ports: number[] = []
    while (ports.length < 2) {
      const port = await fixedPort()
      if (!ports.includes(port)) ports.push(port)
    }
    const base = {
      OPENOPERATOR_URL: sim.url,
      SPYNEL_AGENT_ZERO_API_KEY: secret,
      GATEWAY_CALLERS: JSON.stringify([{ name: caller, tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-roll' }]),
      GATEWAY_CONTROL_ENABLED: 'true',
      GATEWAY_LEDGER_URL: schema.url,
      GATEWAY_REDIS_URL: REDIS!,
      // behind one nginx that appends to X-Forwarded-For, as the shipped file says
      GATEWAY_TRUST_PROXY: '1',
      GATEWAY_RATE_LIMIT_READ: '100000',
      GATEWAY_RATE_LIMIT_CONTROL: '100000',
      // a busy machine must not shed these requests: load shedding is proved elsewhere
      GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
      GATEWAY_ACCESS_LOG: 'false',
      UPSTREAM_CONNECT_TIMEOUT_MS: '500',
      UPSTREAM_MUTATION_TIMEOUT_MS: '3000',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info'
    }
    const startReplica = (i: number): GatewayChild => startGatewayChild({ ...base, PORT: String(ports[i]!) })
    const processes: Array<{ name: string; child: GatewayChild }> = [{ name: 'A', child: startReplica(0) }, { name: 'B', child: startReplica(1) }]
    const live = [processes[0]!.child, processes[1]!.child]
    const direct = ports.map((p) => `http://127.0.0.1:${p}`)
    await Promise.all(live.map(listenUrlOf))
    const ingress = await startIngress(direct.map((u) => u.slice('http://'.length)))
    cleanups.push(ingress.close)
    const via = ingress.url
    const post = async (url: string, path: string, body: unknown): Promise<JsonResponse> =>
      await call(`${url}${path}`, { method: 'POST', token, body }).catch(() => ({ status: 0, headers: {}, body: undefined, text: '' }))
    const get = async (url: string, path: string): Promise<JsonResponse> =>
      await call(`${url}${path}`, { token }).catch(() => ({ status: 0, headers: {}, body: undefined, text: '' }))

    for (const c of CAMPAIGNS) {
      const res = await post(via, `/v1/campaigns/${c}/control/claim`, { requestId: `claim-${c}-setup`, ttlSeconds: 600 })
      expect(res.status, res.text).toBe(200)
    }

    // the remote takes its time, so reads and mutations are in flight when a replica drains
    sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'delay', ms: 300 })
    sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 300 })
    // steady load through the ingress until `stop`: three readers, one mutator per campaign
    let stop = false
    const reads: string[] = []
    const mutations: Mutation[] = []
    const readers = [0, 1, 2].map(async (r) => {
      for (let n = 0; !stop; n++) {
        const res = await get(via, (n + r) % 2 === 0 ? '/v1/upstream' : '/v1/supervisor/health')
        reads.push(outcome(res))
        await sleep(15)
      }
    })
    const mutators = CAMPAIGNS.map(async (c) => {
      for (let n = 0; !stop; n++) {
        // every fourth a claim (the holder's: same epoch, a later expiry), else an intervention
        const claim = n % 4 === 3
        const id = `${claim ? 'claim' : 'iv'}-${c}-${n}-${randomBytes(3).toString('hex')}`
        const path = claim ? `/v1/campaigns/${c}/control/claim` : `/v1/campaigns/${c}/interventions`
        const body = claim ? { requestId: id, ttlSeconds: 600 } : { requestId: id, intervention: { n } }
        mutations.push({ id, campaign: c, path, body, res: await post(via, path, body) })
        await sleep(200)
      }
    })

    // each replica in turn: SIGTERM (the drain), then a new process on the same port
    const restarts: string[] = []
    const restart = async (i: number): Promise<void> => {
      const old = live[i]!
      const t0 = Date.now()
      old.child.kill('SIGTERM')
      const code = await old.exited
      const drained = jsonLines(old.out()).find((l) => l.msg === 'drained')
      const t1 = Date.now()
      const fresh = startReplica(i)
      processes.push({ name: `${processes[i]!.name}'`, child: fresh })
      await listenUrlOf(fresh)
      live[i] = fresh
      expect((await get(direct[i]!, '/readyz')).status).toBe(200)
      restarts.push(`${processes[i]!.name}: exit ${String(code)} after ${t1 - t0} ms (in flight ${String(drained?.inFlight)}, cut ${String(drained?.cut)}), new process ready after ${Date.now() - t1} ms`)
      expect(code).toBe(0)
      expect(drained).toMatchObject({ cut: 0 })
    }
    const loadStarted = Date.now()
    try {
      await sleep(1500)
      await restart(0)
      await sleep(1500)
      await restart(1)
      await sleep(1500)
    } finally {
      stop = true
      await Promise.all([...readers, ...mutators])
    }
    const loadMs = Date.now() - loadStarted

    // what reached the remote (asked afresh each time)
    const mutatingCalls = (): Array<{ id: unknown }> => sim.rpcCalls().filter((c) => MUTATING.has(c.method))
    const sent = (id: string): number => mutatingCalls().filter((c) => c.id === id).length
    const appliedAt = (id: string): number => sim.control.applied().filter((a) => a.requestId === id).length
    const ok = mutations.filter((m) => m.res.status >= 200 && m.res.status < 300)
    const refused = mutations.filter((m) => !(m.res.status >= 200 && m.res.status < 300))
    // each refused one, as the ledger has it (asked of a replica directly, not through the ingress)
    const refusals: Array<{ m: Mutation; state: string }> = []
    for (const m of refused) {
      const record = await get(direct[0]!, `/v1/campaigns/${m.campaign}/requests/${m.id}`)
      refusals.push({ m, state: record.status === 200 ? String(record.body.state) : `no record (${record.status})` })
    }
    const served = processes.map((p) => `${p.name} ${jsonLines(p.child.out()).filter((l) => l.event === 'mutation').length}`)
    console.log(`ingress-rolling: ${reads.length} reads → ${tally(reads)}; ${mutations.length} mutations → ${tally(mutations.map((m) => outcome(m.res)))} over ${loadMs} ms`)
    console.log(`ingress-rolling: restarts — ${restarts.join('; ')}`)
    console.log(`ingress-rolling: mutations logged per process: ${served.join(', ')}`)
    if (refusals.length > 0) console.log(`ingress-rolling: refused mutations — ${tally(refusals.map(({ m, state }) => `${outcome(m.res)}: reached the remote ${sent(m.id)}×, ledger ${state}`))}`)
    // what nginx met on the way: each refused connection was a request passed on to the other replica
    const nginxLog = ingress.errorLog()
    const passedOn = (nginxLog.match(/Connection refused\) while connecting to upstream/g) ?? []).length
    console.log(`ingress-rolling: nginx error log — ${passedOn} refused connections to a replica that was down, ${(nginxLog.match(/prematurely closed/g) ?? []).length} connections closed under a request, ${(nginxLog.match(/no live upstreams/g) ?? []).length} "no live upstreams"`)

    // every read answered 200: the ingress took each one to a replica that served it
    expect(reads.length).toBeGreaterThan(50)
    expect(reads.filter((r) => r !== '200')).toEqual([])
    // no mutation sent twice; every 2xx one reached the remote once, and was applied once
    const ids = mutatingCalls().map((c) => c.id)
    expect(ids.length).toBe(new Set(ids).size)
    expect(ok.length).toBeGreaterThan(mutations.length / 2)
    for (const m of ok) {
      expect(sent(m.id), m.id).toBe(1)
      expect(appliedAt(m.id), m.id).toBe(1)
    }
    // a refused mutation is retryable only when nothing was sent: whatever was sent is recorded
    // as sent (applied, or ambiguous until reconciled)
    for (const { m, state } of refusals) if (sent(m.id) > 0) expect(['applied', 'ambiguous'], m.id).toContain(state)
    // traffic reached every process: both replicas before, during and after their restarts
    for (const p of processes) expect(jsonLines(p.child.out()).some((l) => l.event === 'mutation'), p.name).toBe(true)

    // the caller retries each refused mutation with the same request id: it runs (nothing had
    // been sent) or replays (something had), and it still reaches the remote at most once
    const retried: string[] = []
    for (const m of refused) {
      const again = await post(via, m.path, m.body)
      retried.push(again.headers['idempotent-replayed'] === 'true' ? `${again.status} replayed` : outcome(again))
      expect(sent(m.id), m.id).toBeLessThanOrEqual(1)
      if (again.status === 200) expect(appliedAt(m.id), m.id).toBe(1)
    }
    if (retried.length > 0) console.log(`ingress-rolling: the refused ones sent again with their request ids → ${tally(retried)}`)
    const after = mutatingCalls().map((c) => c.id)
    expect(after.length).toBe(new Set(after).size)
    // the restarts did send traffic towards a replica that was down, and none found both out
    expect(passedOn).toBeGreaterThan(0)
    expect(nginxLog).not.toMatch(/no live upstreams/)
    console.log(`ingress-rolling: whole test ${Date.now() - started} ms`)
  }, 90_000)
})

describe.skipIf(!NGINX)('the shipped ingress file', () => {
  it('a read sent on a kept-alive connection that the replica closes (a drain\'s idle close crossing it) is retried on the other replica; a POST is not', async () => {
    // replica A answers the first request of each connection, and closes the connection on the
    // next one without a byte — what nginx meets when a draining replica closes an idle
    // keep-alive connection just as nginx sends a request on it. Replica B answers everything.
    const seen: Array<{ replica: string; method: string; path: string; closed: boolean }> = []
    const replica = async (name: string, closesReused: boolean): Promise<string> => {
      const served = new WeakMap<object, number>()
      const server = createHttpServer((req, res) => {
        const n = (served.get(req.socket) ?? 0) + 1
        served.set(req.socket, n)
        const closed = closesReused && n > 1
        seen.push({ replica: name, method: req.method!, path: req.url!, closed })
        if (closed) { req.socket.destroy(); return }
        req.resume()
        req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ replica: name })) })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      cleanups.push(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
      return `127.0.0.1:${(server.address() as AddressInfo).port}`
    }
    const ingress = await startIngress([await replica('A', true), await replica('B', false)])
    cleanups.push(ingress.close)

    const answers: Array<{ method: string; path: string; status: number; replica: unknown }> = []
    for (const method of ['GET', 'POST'] as const) {
      for (let i = 0; i < 8; i++) {
        const path = `/v1/${method.toLowerCase()}-${i}`
        const res = await call(`${ingress.url}${path}`, { method, ...(method === 'POST' && { body: { requestId: path } }) })
        answers.push({ method, path, status: res.status, replica: res.body?.replica })
      }
    }
    const closedOn = (method: string): string[] => seen.filter((s) => s.closed && s.method === method).map((s) => s.path)
    const reached = (path: string): string[] => seen.filter((s) => s.path === path).map((s) => s.replica)
    console.log(`ingress retry on a closed connection: ${answers.map((a) => `${a.method} ${a.status}${a.status === 200 ? ` ${String(a.replica)}` : ''}`).join(', ')}; closed by A: ${[...closedOn('GET'), ...closedOn('POST')].join(' ')}`)
    // each read the replica closed under it reached the other replica and was answered
    expect(closedOn('GET').length).toBeGreaterThan(0)
    for (const a of answers.filter((x) => x.method === 'GET')) expect(a.status, a.path).toBe(200)
    for (const path of closedOn('GET')) expect(reached(path), path).toEqual(['A', 'B'])
    // a POST the replica closed under it is never passed on (it was sent): the client gets the
    // proxy's 502 and sends it again itself, with its request id
    expect(closedOn('POST').length).toBeGreaterThan(0)
    for (const path of closedOn('POST')) {
      expect(reached(path), path).toEqual(['A'])
      expect(answers.find((a) => a.path === path)?.status, path).toBe(502)
    }
    for (const a of answers.filter((x) => x.method === 'POST' && x.status === 200)) expect(reached(a.path), a.path).toHaveLength(1)
  })

  it('limit_conn per client address answers 429 in the gateway\'s error shape; /metrics is not served', async () => {
    const sim = await startSimulator()
    cleanups.push(async () => { await sim.close() })
    // slow enough that all five are in flight at once, even on a busy machine
    sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 1500 })
    const first = await startGateway({ simulator: sim, env: { GATEWAY_TRUST_PROXY: '1' } })
    // replicas of one deployment: the same callers and tokens
    const replicas = [first, await startGateway({ simulator: sim, env: { GATEWAY_TRUST_PROXY: '1' }, tokens: first.tokens })]
    // the shipped limit (256) lowered to 2, to reach it with a handful of requests
    const ingress = await startIngress(replicas.map((g) => g.url.slice('http://'.length)), { replace: [['limit_conn gateway_clients 256;', 'limit_conn gateway_clients 2;']] })
    cleanups.push(ingress.close)
    const answers = await Promise.all(Array.from({ length: 5 }, async () => await call(`${ingress.url}/v1/supervisor/health`, { token: replicas[0]!.tokens.reader })))
    const statuses = answers.map((a) => a.status).sort()
    const refused = answers.filter((a) => a.status === 429)
    const metrics = await call(`${ingress.url}/metrics`)
    console.log(`ingress limits: 5 concurrent slow reads from one address with limit_conn 2 → ${tally(statuses.map(String))}; GET /metrics through the ingress → ${metrics.status}`)
    expect(statuses).toEqual([200, 200, 429, 429, 429])
    for (const r of refused) {
      expect(r.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), retryable: true } })
      expect(r.headers['retry-after']).toBe('1')
      expect(r.headers['content-type']).toMatch(/^application\/json/)
    }
    // the gateway's own 404: the metrics listener is another port, which the ingress never names
    expect(metrics.status).toBe(404)
    expect(metrics.body.error.code).toBe('not_found')
  })
})
