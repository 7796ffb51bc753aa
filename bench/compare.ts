// npm run bench: what the gateway adds to the hop it replaces, every figure a ratio from one run
// (BENCHMARKS.md has the method and the latest table). Each process under test runs in its own
// process: the fixed upstream (upstream-child.ts), the bare node:http + undici proxy
// (bare-proxy-child.ts), nginx when installed, the gateway with coalescing on and off
// (gateway-child.ts), and, as a sanity row only, the gateway against the simulator. The load
// generators (load.ts) run here. Results go to bench/results/ as JSON and a Markdown table.
// `--soak` runs the soak instead (soak.ts). Bounded by a watchdog; no network beyond 127.0.0.1.
import { randomBytes, randomUUID } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sha256Hex } from '../src/callers/tokens.js'
import { startChild, type Child, type ChildStats } from './child-ipc.js'
import { closedLoop, openLoop, type LoadResult, type Request } from './load.js'
import { NGINX_HINT, nginxAvailable, nginxWorkerStats, startNginx, type Nginx } from './nginx.js'

/** the framework's own floor (bench/fastify-floor-child.ts): Fastify with one route and nothing else */
const FASTIFY_FLOOR = 'bare Fastify proxy'
const FASTIFY_MEMORY = 'bare Fastify, answer in memory'
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
export const RATE = Number(process.env.BENCH_RATE ?? 1000)
/** BENCH_ROWS=uncached,steady: only those groups (uncached, coalesced, steady, sanity) */
const ONLY = new Set((process.env.BENCH_ROWS ?? 'uncached,coalesced,steady,sanity').split(','))
const WARMUP = 2
const MiB = 2 ** 20

export interface Fleet {
  dir: string
  token: string
  secret: string
  upstream: Child
  bare: Child
  nginx: Nginx | undefined
  gateway: Child
  gatewayLog: string
  closeAll: () => Promise<void>
}

export function gatewayEnv (upstreamUrl: string, secret: string, token: string, dir: string, name: string): Record<string, string> {
  return {
    BENCH_GATEWAY_ENV: JSON.stringify({
      OPENOPERATOR_URL: upstreamUrl,
      SPYNEL_AGENT_ZERO_API_KEY: secret,
      GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read'] }]),
      GATEWAY_RATE_LIMIT_READ: '10000000',
      GATEWAY_LEDGER_URL: `sqlite:${join(dir, `${name}.db`)}`,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      // capacity is measured without the utilisation bound: under a closed loop that ignores
      // Retry-After it keeps shedding (BENCHMARKS.md); the steady rows run with the defaults
      // autocannon ignores `Connection: close` and keeps writing to the socket, which Node then
      // answers 503; the per-socket bound is for real clients (docs/design.md#http-edges)
      GATEWAY_MAX_REQUESTS_PER_SOCKET: '0',
      ...(process.env.BENCH_SHED_ELU === 'default' ? {} : { GATEWAY_MAX_EVENT_LOOP_UTILIZATION: '0' }),
      NODE_ENV: 'development'
    })
  }
}

/** the node flags `npm start` (and the Dockerfile) run the gateway with, e.g. `--max-semi-space-size=4` */
export function deployedNodeFlags (): string[] {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { scripts: { start: string } }
  // the words after `node` up to the first that is not a flag
  const words = pkg.scripts.start.split(/\s+/).slice(1)
  const end = words.findIndex((w) => !w.startsWith('--'))
  return end < 0 ? words : words.slice(0, end)
}

/** the gateway's log goes to a file: its cost is paid as in a container, its size is reported */
export async function startGateway (dir: string, upstreamUrl: string, secret: string, token: string, name: string, extra: Record<string, string> = {}): Promise<{ child: Child; log: string }> {
  const log = join(dir, `${name}.log`)
  const fd = openSync(log, 'a')
  // as deployed (the node flags of `npm start`), then the bench's own (later flags win)
  const execArgv = [...deployedNodeFlags(), ...process.env.BENCH_GATEWAY_NODE_OPTIONS?.split(' ').filter((s) => s !== '') ?? []]
  const child = await startChild('./gateway-child.ts', { ...gatewayEnv(upstreamUrl, secret, token, dir, name), ...extra }, { stdout: fd, execArgv })
  closeSync(fd)
  return { child, log }
}

// an interrupted bench ends its children too (forked ones also leave when their IPC channel closes)
process.once('SIGINT', () => { process.exit(130) })

export async function startFleet (): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-bench-'))
  const token = randomBytes(18).toString('base64url')
  const secret = randomBytes(24).toString('base64url')
  const upstream = await startChild('./upstream-child.ts', {})
  const bare = await startChild('./bare-proxy-child.ts', { BENCH_UPSTREAM: upstream.url })
  const nginx = nginxAvailable() ? await startNginx(upstream.url) : undefined
  const { child: gateway, log: gatewayLog } = await startGateway(dir, upstream.url, secret, token, 'gateway')
  return {
    dir,
    token,
    secret,
    upstream,
    bare,
    nginx,
    gateway,
    gatewayLog,
    closeAll: async () => {
      await Promise.all([gateway.close(), bare.close(), nginx?.close()])
      await upstream.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

// ---- requests ------------------------------------------------------------------------------
const rpc = (method: string, params: Record<string, unknown>): Request => ({
  method: 'POST',
  path: '/a2a/',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
})
const run = randomBytes(3).toString('hex')
/** every task id new: nothing can be coalesced or cached */
export const directTask = (i: number): Request => rpc('tasks/get', { id: `t-${run}-${i}`, historyLength: 0 })
export const directHealth = (): Request => rpc('message/send', { message: { role: 'user', kind: 'message', messageId: randomUUID(), parts: [{ kind: 'data', data: { params: {} } }] } })
export const restTask = (token: string) => (i: number): Request => ({ method: 'GET', path: `/v1/tasks/t-${run}-${i}`, headers: { authorization: `Bearer ${token}` } })
export const restHealth = (token: string) => (): Request => ({ method: 'GET', path: '/v1/supervisor/health', headers: { authorization: `Bearer ${token}` } })
const bareTask = (i: number): Request => ({ method: 'GET', path: `/v1/tasks/t-${run}-${i}` })
export const bareHealth = (): Request => ({ method: 'GET', path: '/v1/supervisor/health' })

// ---- one row -------------------------------------------------------------------------------
export interface Row {
  name: string
  group: 'uncached' | 'coalesced' | 'steady' | 'sanity'
  load: string
  result: LoadResult
  upstreamCalls: number
  /** CPU µs per answered request of the process under test (gateway, bare proxy, nginx) */
  proxyCpuUsPerReq?: number
  /** CPU µs per call of the upstream */
  upstreamCpuUsPerCall: number
  /** peak RSS of the process under test during the row, bytes */
  peakRss?: number
  logBytesPerReq?: number
  /** the process under test's V8 heap: bytes allocated per answered request, and per 10,000 answers the scavenges, mark-compacts and ms in GC */
  gc?: { bytesPerReq: number; scavengesPer10k: number; markCompactsPer10k: number; gcMsPer10k: number }
}

interface Probe { stats: () => Promise<{ cpuUs: number; peakRss: number; gc?: ChildStats['gc'] } | undefined>; reset: () => void }
const childProbe = (c: Child): Probe => ({ stats: async () => await c.stats(), reset: () => { c.reset() } })
const nginxProbe = (n: Nginx): Probe => {
  let peak = 0
  return {
    stats: async () => { const s = nginxWorkerStats(n.pid); if (s === undefined) return undefined; peak = Math.max(peak, s.rss); return { cpuUs: s.cpuUs, peakRss: peak } },
    reset: () => { peak = 0 }
  }
}
const sumCalls = (s: ChildStats): number => Object.values(s.calls).reduce((a, b) => a + b, 0)
const size = (path: string | undefined): number => { if (path === undefined) return 0; try { return statSync(path).size } catch { return 0 } }

export async function measure (o: {
  name: string;
  group: Row['group'];
  load: string;
  upstream: Child;
  probe?: Probe;
  log?: string
  generate: () => Promise<LoadResult>
}): Promise<Row> {
  o.probe?.reset()
  const u0 = await o.upstream.stats()
  const p0 = await o.probe?.stats()
  const l0 = size(o.log)
  const result = await o.generate()
  const u1 = await o.upstream.stats()
  const p1 = await o.probe?.stats()
  const answered = result.ok + result.non2xx
  const calls = sumCalls(u1) - sumCalls(u0)
  const row: Row = {
    name: o.name,
    group: o.group,
    load: o.load,
    result,
    upstreamCalls: calls,
    upstreamCpuUsPerCall: calls > 0 ? (u1.cpuUs - u0.cpuUs) / calls : 0
  }
  if (p0 !== undefined && p1 !== undefined) {
    row.proxyCpuUsPerReq = (p1.cpuUs - p0.cpuUs) / Math.max(1, answered)
    row.peakRss = p1.peakRss
    if (p0.gc !== undefined && p1.gc !== undefined) {
      const per = Math.max(1, answered)
      row.gc = {
        bytesPerReq: (p1.gc.allocatedBytes - p0.gc.allocatedBytes) / per,
        scavengesPer10k: (p1.gc.scavenges - p0.gc.scavenges) * 10_000 / per,
        markCompactsPer10k: (p1.gc.markCompacts - p0.gc.markCompacts) * 10_000 / per,
        gcMsPer10k: (p1.gc.gcMs - p0.gc.gcMs) * 10_000 / per
      }
    }
  }
  if (o.log !== undefined) row.logBytesPerReq = (size(o.log) - l0) / Math.max(1, answered)
  const r = result
  console.log(`  ${o.name.padEnd(34)} ${o.load.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${us(r.p50)}  p99 ${us(r.p99)}  p99.9 ${us(r.p999)}  max ${us(r.max)}  ` +
    `2xx ${r.ok} non-2xx ${r.non2xx} errors ${r.errors}  upstream ${calls}` +
    (row.proxyCpuUsPerReq !== undefined ? `  cpu ${row.proxyCpuUsPerReq.toFixed(0)} µs/req` : '') +
    (row.peakRss !== undefined ? `  peak RSS ${(row.peakRss / MiB).toFixed(0)} MiB` : '') +
    (row.gc !== undefined ? `  alloc ${gcCell(row.gc)}` : '') +
    (r.sendLagP99 !== undefined ? `  send lag p99 ${us(r.sendLagP99)} max ${us(r.sendLagMax ?? 0)}` : '') +
    (r.firstFailure !== undefined ? `  first failure: ${r.firstFailure}` : ''))
  return row
}

/** KB allocated per request · scavenges / mark-compacts / GC ms per 10k requests */
const gcCell = (g: NonNullable<Row['gc']>): string =>
  `${(g.bytesPerReq / 1024).toFixed(1)} KB · ${g.scavengesPer10k.toFixed(1)} / ${g.markCompactsPer10k.toFixed(1)} / ${g.gcMsPer10k.toFixed(0)} ms`

export const us = (v: number): string => v >= 10_000 ? `${(v / 1000).toFixed(1)} ms` : `${v} µs`

/** a row of the bare Fastify child, started for that row only */
async function fastifyFloor (upstream: Child, row: (floor: Child) => Promise<Row>): Promise<Row> {
  const floor = await startChild('./fastify-floor-child.ts', { BENCH_UPSTREAM: upstream.url })
  try {
    return await row(floor)
  } finally {
    await floor.close()
  }
}

// ---- the table -----------------------------------------------------------------------------
export function table (rows: Row[]): string {
  const get = (name: string): Row | undefined => rows.find((r) => r.name === name)
  const direct32 = get('direct')
  const direct64 = get('direct (message/send)')
  const bare = get('bare Node proxy')
  const fastify = get(FASTIFY_FLOOR)
  const fastifyMemory = get(FASTIFY_MEMORY)
  const directSteady = get('direct, steady')
  const ratio = (r: Row): string => {
    if (r.group === 'uncached' && direct32 !== undefined && r !== direct32) {
      const vsBare = bare !== undefined && r !== bare && (r.name.startsWith('gateway') || r === fastify) ? `; ${(r.result.rps / bare.result.rps).toFixed(2)}× the floor` : ''
      const vsFastify = fastify !== undefined && r.name.startsWith('gateway') ? `; ${(r.result.rps / fastify.result.rps).toFixed(2)}× bare Fastify` : ''
      return `${(r.result.rps / direct32.result.rps).toFixed(2)}× direct${vsBare}${vsFastify}`
    }
    if (r.group === 'coalesced' && direct64 !== undefined && r !== direct64) {
      const vsFastify = fastifyMemory !== undefined && r.name.startsWith('gateway') ? `; ${(r.result.rps / fastifyMemory.result.rps).toFixed(2)}× bare Fastify` : ''
      return `${(r.result.rps / direct64.result.rps).toFixed(2)}× direct${vsFastify}`
    }
    if (r.group === 'steady' && directSteady !== undefined && r !== directSteady) return `p99 ${r.result.p99 - directSteady.result.p99 >= 0 ? '+' : ''}${((r.result.p99 - directSteady.result.p99) / 1000).toFixed(2)} ms`
    return ''
  }
  const lines = [
    '| row | load | req/s | ratio | p50 | p99 | p99.9 | max | non-2xx | upstream calls | CPU µs/req (proxy · upstream) | peak RSS | log B/req | heap KB/req · scavenges / mark-compacts / GC ms per 10k |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of rows) {
    const res = r.result
    const callsPerAnswer = res.ok > 0 ? ` (${(r.upstreamCalls / res.ok).toFixed(3)}/answer)` : ''
    lines.push(`| ${r.name} | ${r.load} | ${res.rps.toFixed(0)} | ${ratio(r)} | ${us(res.p50)} | ${us(res.p99)} | ${us(res.p999)} | ${us(res.max)} | ${res.non2xx + res.errors} | ${r.upstreamCalls}${callsPerAnswer} | ` +
      `${r.proxyCpuUsPerReq !== undefined ? r.proxyCpuUsPerReq.toFixed(0) : '—'} · ${r.upstreamCpuUsPerCall.toFixed(0)} | ${r.peakRss !== undefined ? `${(r.peakRss / MiB).toFixed(0)} MiB` : '—'} | ${r.logBytesPerReq !== undefined ? r.logBytesPerReq.toFixed(0) : '—'} | ${r.gc !== undefined ? gcCell(r.gc) : '—'} |`)
  }
  return lines.join('\n')
}

export function header (): string {
  return `node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), ${SECONDS} s per row after a ${WARMUP} s warm-up per target, steady rate ${RATE} req/s; load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}`
}

export function save (kind: string, rows: Row[], extra: Record<string, unknown>, md: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const dir = fileURLToPath(new URL('./results/', import.meta.url))
  const json = join(dir, `${kind}-${stamp}.json`)
  writeFileSync(json, `${JSON.stringify({ kind, at: new Date().toISOString(), node: process.version, cpus: availableParallelism(), seconds: SECONDS, rate: RATE, ...extra, rows }, null, 2)}\n`)
  writeFileSync(join(dir, `${kind}-${stamp}.md`), `${md}\n`)
  return json
}

// ---- the run -------------------------------------------------------------------------------
export async function compare (): Promise<void> {
  const watchdog = setTimeout(() => { console.error('bench: over its time budget, aborting'); process.exit(1) }, (SECONDS + WARMUP) * 20_000 + 120_000)
  watchdog.unref()
  const f = await startFleet()
  const rows: Row[] = []
  const { token, upstream } = f
  const gw = childProbe(f.gateway)
  try {
    console.log(header())
    if (f.nginx === undefined) console.log(`(${NGINX_HINT})`)
    const warm = async (origin: string, conns: number, next: (i: number) => Request): Promise<void> => { await closedLoop(origin, conns, WARMUP, next) }

    if (ONLY.has('uncached')) {
      console.log('\nuncached GET /v1/tasks/:id (every id new), 32 connections, saturation')
      await warm(upstream.url, 32, directTask)
      rows.push(await measure({ name: 'direct', group: 'uncached', load: '32 conns', upstream, generate: () => closedLoop(upstream.url, 32, SECONDS, directTask) }))
      await warm(f.bare.url, 32, bareTask)
      rows.push(await measure({ name: 'bare Node proxy', group: 'uncached', load: '32 conns', upstream, probe: childProbe(f.bare), generate: () => closedLoop(f.bare.url, 32, SECONDS, bareTask) }))
      rows.push(await fastifyFloor(upstream, async (floor) => {
        await warm(floor.url, 32, bareTask)
        return await measure({ name: FASTIFY_FLOOR, group: 'uncached', load: '32 conns', upstream, probe: childProbe(floor), generate: () => closedLoop(floor.url, 32, SECONDS, bareTask) })
      }))
      if (f.nginx !== undefined) {
        const n = f.nginx
        await warm(n.url, 32, directTask)
        rows.push(await measure({ name: 'nginx proxy_pass', group: 'uncached', load: '32 conns', upstream, probe: nginxProbe(n), generate: () => closedLoop(n.url, 32, SECONDS, directTask) }))
      }
      await warm(f.gateway.url, 32, restTask(token))
      rows.push(await measure({ name: 'gateway, uncached', group: 'uncached', load: '32 conns', upstream, probe: gw, log: f.gatewayLog, generate: () => closedLoop(f.gateway.url, 32, SECONDS, restTask(token)) }))
    }
    if (ONLY.has('coalesced')) {
      console.log('\nGET /v1/supervisor/health, 64 connections, saturation')
      await warm(upstream.url, 64, directHealth)
      rows.push(await measure({ name: 'direct (message/send)', group: 'coalesced', load: '64 conns', upstream, generate: () => closedLoop(upstream.url, 64, SECONDS, directHealth) }))
      await warm(f.gateway.url, 64, restHealth(token))
      rows.push(await fastifyFloor(upstream, async (floor) => {
        await warm(floor.url, 64, bareHealth)
        return await measure({ name: FASTIFY_MEMORY, group: 'coalesced', load: '64 conns', upstream, probe: childProbe(floor), generate: () => closedLoop(floor.url, 64, SECONDS, bareHealth) })
      }))
      rows.push(await measure({ name: 'gateway, coalesced', group: 'coalesced', load: '64 conns', upstream, probe: gw, log: f.gatewayLog, generate: () => closedLoop(f.gateway.url, 64, SECONDS, restHealth(token)) }))
      {
        const { child, log } = await startGateway(f.dir, upstream.url, f.secret, token, 'gateway-nocoalesce', { BENCH_COALESCE: '0' })
        try {
          await warm(child.url, 64, restHealth(token))
          rows.push(await measure({ name: 'gateway, coalescing off', group: 'coalesced', load: '64 conns', upstream, probe: childProbe(child), log, generate: () => closedLoop(child.url, 64, SECONDS, restHealth(token)) }))
        } finally {
          await child.close()
        }
      }
    }
    if (ONLY.has('steady')) {
      console.log(`\nsteady ${RATE} req/s open loop, uncached GET /v1/tasks/:id, latency from each request's due time`)
      const steady = `${RATE} req/s`
      rows.push(await measure({ name: 'direct, steady', group: 'steady', load: steady, upstream, generate: () => openLoop(upstream.url, RATE, SECONDS, directTask) }))
      rows.push(await measure({ name: 'bare Node proxy, steady', group: 'steady', load: steady, upstream, probe: childProbe(f.bare), generate: () => openLoop(f.bare.url, RATE, SECONDS, bareTask) }))
      if (f.nginx !== undefined) {
        const n = f.nginx
        rows.push(await measure({ name: 'nginx proxy_pass, steady', group: 'steady', load: steady, upstream, probe: nginxProbe(n), generate: () => openLoop(n.url, RATE, SECONDS, directTask) }))
      }
      rows.push(await measure({ name: 'gateway, steady', group: 'steady', load: steady, upstream, probe: gw, log: f.gatewayLog, generate: () => openLoop(f.gateway.url, RATE, SECONDS, restTask(token)) }))
    }
    if (ONLY.has('sanity')) {
      console.log('\nsanity: the gateway against the simulator (its own process), GET /v1/supervisor/health, coalescing off, 32 connections')
      {
        const sim = await startChild('./simulator-sanity-child.ts', { BENCH_SIM_SECRET: f.secret })
        const { child, log } = await startGateway(f.dir, sim.url, f.secret, token, 'gateway-sim', { BENCH_COALESCE: '0' })
        try {
          await warm(child.url, 32, restHealth(token))
          rows.push(await measure({ name: 'gateway → simulator (sanity)', group: 'sanity', load: '32 conns', upstream: sim, probe: childProbe(child), log, generate: () => closedLoop(child.url, 32, SECONDS, restHealth(token)) }))
        } finally {
          await child.close()
          await sim.close()
        }
      }
    }
  } finally {
    await f.closeAll()
  }
  const md = `${header()}\n\n${table(rows)}`
  console.log(`\n${md}\n`)
  console.log(`results: ${save('compare', rows, { nginx: f.nginx !== undefined }, md)}`)
}
