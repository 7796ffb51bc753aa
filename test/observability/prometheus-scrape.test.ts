// A real scrape (docs/design.md#metrics): Debian's Prometheus on loopback scrapes a running
// gateway every second with docker/prometheus/rules.yml loaded, and its HTTP API is asked what it
// ingested — the proof that what the gateway exports is what Prometheus reads, and that every rule
// evaluates against it. Skipped, saying why, where the `prometheus` binary is missing (.ci/run
// installs it). Bounded: Prometheus is killed at the end, well under 20 s in all.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { request } from 'undici'
import { afterAll, describe, expect } from 'vitest'
import { parse } from 'yaml'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

const RULES = resolve(import.meta.dirname, '../../docker/prometheus/rules.yml')
const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0
if (!hasPrometheus) console.log('SKIP prometheus-scrape: no `prometheus` binary on PATH (Debian package `prometheus`; .ci/run installs it)')

interface Sample { metric: Record<string, string>; value: [number, string] }
interface RuleGroup { rules: Array<{ name: string; health: string; lastError?: string; lastEvaluation: string }> }

async function freePort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res))
  const { port } = srv.address() as { port: number }
  await new Promise((res) => srv.close(res))
  return port
}

let prom: ChildProcess | undefined
let dir: string | undefined
afterAll(async () => {
  if (prom !== undefined && prom.exitCode === null) {
    const exited = new Promise((res) => prom!.once('exit', res))
    prom.kill('SIGTERM')
    const timer = setTimeout(() => prom!.kill('SIGKILL'), 3000)
    await exited
    clearTimeout(timer)
  }
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(!hasPrometheus)('a real Prometheus scraping the gateway', () => {
  it('ingests gateway_http_requests_total and evaluates the rules against it', { timeout: 30_000 }, async ({ startPair }) => {
    const started = Date.now()
    const { gw } = await startPair()
    const target = new URL(gw.metricsUrl).host

    dir = mkdtempSync(join(tmpdir(), 'gw-prometheus-'))
    const port = await freePort()
    writeFileSync(join(dir, 'prometheus.yml'), [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: [${JSON.stringify(RULES)}]`,
      'scrape_configs:',
      '  - job_name: openoperator-gateway',
      `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`
    ].join('\n'))
    const stderr: string[] = []
    prom = spawn('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    prom.stderr?.on('data', (c: Buffer) => stderr.push(String(c)))
    const api = `http://127.0.0.1:${port}/api/v1`
    const query = async (q: string): Promise<Sample[]> => {
      const res = await request(`${api}/query?query=${encodeURIComponent(q)}`)
      const body = await res.body.json() as { status: string; data: { result: Sample[] }; error?: string }
      expect(body.status, `${q}: ${body.error ?? ''}`).toBe('success')
      return body.data.result
    }
    const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
      for (;;) {
        const v = await probe().catch(() => undefined)
        if (v !== undefined) return v
        if (Date.now() - started > 20_000) throw new Error(`${what} not seen within 20 s; prometheus said: ${stderr.join('').slice(-2000)}`)
        await new Promise((r) => setTimeout(r, 200))
      }
    }

    await until('the scrape target up', async () => (await query('up{job="openoperator-gateway"} == 1')).length === 1 ? true : undefined)
    // traffic spread over a few scrapes, so that rate() sees it grow: reads that reach the remote, a 404
    const N = 8
    for (let i = 0; i < N; i++) {
      expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
      await new Promise((r) => setTimeout(r, 300))
    }
    expect((await call(`${gw.url}/v1/tasks/task-demo-1`, { token: gw.tokens.reader })).status).toBe(200)
    expect((await call(`${gw.url}/nope`, { token: gw.tokens.reader })).status).toBe(404)

    // the metrics listener renders at most once a second: a scrape may show the counts of up to 1 s
    // earlier, so wait for one that includes all the traffic
    const health = await until('all the traffic', async () => {
      const r = await query('gateway_http_requests_total{job="openoperator-gateway",route="/v1/supervisor/health",method="GET",status="200"}')
      return r.length === 1 && Number(r[0]!.value[1]) === N ? r[0]! : undefined
    })
    expect(health.metric.instance).toBe(target)
    expect(await query('gateway_http_requests_total{route="unmatched",status="404"}')).toHaveLength(1)
    expect(await query('gateway_upstream_request_duration_seconds_bucket{rpc_method="supervisor.health",le="0.0005"}')).toHaveLength(1)

    // one rule's own expression, its threshold turned into a floor: the p99 per route over what was
    // scraped (the error-ratio rules yield no series at all while nothing fails)
    const groups = parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }
    const p99Rule = groups.groups[0]!.rules.find((r) => r.alert === 'GatewayLatencyP99High')!
    const p99Expr = p99Rule.expr.trim().replace(/>\s*2\.5$/, '>= 0')
    expect(p99Expr).not.toBe(p99Rule.expr.trim())
    const p99 = await until('two scrapes for rate()', async () => {
      const r = await query(p99Expr)
      return r.find((x) => x.metric.route === '/v1/supervisor/health')
    })
    expect(p99.metric).toMatchObject({ job: 'openoperator-gateway', instance: target })
    const seconds = Number(p99.value[1])
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeLessThan(2.5)

    // every rule loaded and evaluated without an error, and none fires on a healthy gateway
    const rules = await until('every rule evaluated', async () => {
      const res = await request(`${api}/rules`)
      const body = await res.body.json() as { data: { groups: RuleGroup[] } }
      const all = body.data.groups.flatMap((g) => g.rules)
      return all.length > 0 && all.every((r) => !r.lastEvaluation.startsWith('0001')) ? all : undefined
    })
    expect(rules.length).toBe(groups.groups[0]!.rules.length)
    for (const r of rules) expect({ name: r.name, health: r.health, lastError: r.lastError ?? '' }).toEqual({ name: r.name, health: 'ok', lastError: '' })
    expect(await query('ALERTS{alertstate="firing",alertname!="GatewayDown"}')).toEqual([])
    console.log(`prometheus-scrape: ${rules.length} rules evaluated, ${N + 2} requests ingested, p99 of /v1/supervisor/health ${(seconds * 1000).toFixed(2)} ms, in ${Date.now() - started} ms`)
  })
})
