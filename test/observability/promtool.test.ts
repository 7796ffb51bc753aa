// What CI checks with promtool (Debian's `prometheus` package; .ci/run installs it): the alert
// rules (`check rules`, and their unit tests, `test rules`), the compose Prometheus configuration
// (`check config`), and a running gateway's /metrics after traffic (`check metrics`: the
// exposition lint, which prom-client's three `nodejs_active_*_total` gauges used to fail).
// Without promtool those checks are skipped, saying so; the consistency checks below always run:
// the rules, the dashboard and the operators' document (docs/operating.md, its "Observability"
// section) name only series the gateway exports, and that section names every one of them and
// every alert.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect } from 'vitest'
import { parse } from 'yaml'
import { createMetrics } from '../../src/http/metrics.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

const ROOT = resolve(import.meta.dirname, '../..')
const PROM = join(ROOT, 'docker/prometheus')
const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0
if (!hasPromtool) console.log('SKIP promtool checks: no `promtool` on PATH (Debian package `prometheus`; .ci/run installs it)')

const promtool = (args: string[], input?: string): { status: number | null; out: string } => {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 15_000 })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

describe.skipIf(!hasPromtool)('promtool', () => {
  it('check rules: docker/prometheus/rules.yml', () => {
    const r = promtool(['check', 'rules', join(PROM, 'rules.yml')])
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/)
    expect(r.status, r.out).toBe(0)
  })

  it('test rules: each alert fires when it should and not before (rules.test.yml)', () => {
    const r = promtool(['test', 'rules', join(PROM, 'rules.test.yml')])
    expect(r.status, r.out).toBe(0)
  })

  it('check config: the compose Prometheus, its rule file path pointed at the repository', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-promtool-'))
    try {
      const cfg = readFileSync(join(PROM, 'prometheus.yml'), 'utf8').replace('/etc/prometheus/rules.yml', join(PROM, 'rules.yml'))
      writeFileSync(join(dir, 'prometheus.yml'), cfg)
      const r = promtool(['check', 'config', join(dir, 'prometheus.yml')])
      expect(r.status, r.out).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('check metrics: a running gateway\'s /metrics after traffic passes the exposition lint', async ({ gw }) => {
    expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
    expect((await call(`${gw.url}/v1/tasks/task-demo-1`, { token: gw.tokens.reader })).status).toBe(200)
    expect((await call(`${gw.url}/v1/upstream`)).status).toBe(401)
    const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
    expect(text).toMatch(/gateway_http_request_duration_seconds_bucket\{le="0.0005"/)
    const r = promtool(['check', 'metrics'], text)
    expect(r.out.trim()).toBe('')
    expect(r.status).toBe(0)
  })
})

describe('rules, dashboard and docs/operating.md name the series the gateway exports', () => {
  const families = createMetrics().registry.getMetricsAsArray().map((m) => m.name).filter((n) => n.startsWith('gateway_'))
  const exported = new Set(families.flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]))
  const named = (text: string): string[] => [...new Set(text.match(/\bgateway_[a-z0-9_]+\b/g) ?? [])]
  const rulesText = readFileSync(join(PROM, 'rules.yml'), 'utf8')
  const rules = parse(rulesText) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }
  const dashboard = JSON.parse(readFileSync(join(PROM, 'grafana/dashboard.json'), 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> }
  const doc = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8')
  const section = doc.indexOf('\n## Observability\n')
  const operating = doc.slice(section, doc.indexOf('\n## ', section + 1))

  it('every series a rule or a panel queries is exported', () => {
    const exprs = [...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))]
    for (const name of named(exprs.join('\n'))) expect(exported.has(name), name).toBe(true)
  })

  it('the dashboard shows every gateway family', () => {
    const shown = new Set(named(dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n')).map((n) => n.replace(/_(bucket|sum|count)$/, '')))
    for (const f of families) expect(shown.has(f), f).toBe(true)
  })

  it('docs/operating.md "Observability" lists every family and every alert', () => {
    expect(section).toBeGreaterThan(0)
    expect(operating.length).toBeGreaterThan(100)
    for (const f of families) expect(operating, f).toContain(`\`${f}`)
    for (const r of rules.groups.flatMap((g) => g.rules)) expect(operating, r.alert).toContain(r.alert)
  })
})
