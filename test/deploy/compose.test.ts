// The compose files (docs/operating.md#several-replicas and #docker): docker/compose.yaml — two
// replicas on PostgreSQL behind the reference nginx, a one-shot migrate, Redis, Prometheus, a
// demo profile with the simulator — and docker/compose.sqlite.yaml, the single replica on an
// SQLite file. No Docker engine runs here, so this is what can be verified without one: the
// structure (services, profiles, depends_on conditions), no published port on every interface
// but the ingress's API, env names the gateway really reads, each replica's environment loaded
// as the gateway would load it (secrets from their files, `${…}` interpolated), the ingress file
// naming exactly the replicas and their API port, Prometheus scraping each replica, and the YAML
// through yamllint and `docker compose config` / `docker-compose config` where installed (each
// skipped, saying so, where not).
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Script } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { loadConfig, longestRequestMs, type Env } from '../../src/config/index.js'
import { ingressDirective, SHIPPED_REPLICA, INGRESS_CONF } from '../helpers/ingress.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const docker = join(root, 'docker')
/** close-with-grace gives the close this long after the grace (src/cli/index.ts, docs/design.md#shutdown) */
const CLOSE_AFTER_GRACE_MS = 5000

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- compose files are free-form YAML, checked below
type Obj = any

// compose merges `<<: *anchor` keys, so parse the same way
const compose = (file: string): Obj => parse(readFileSync(join(docker, file), 'utf8'), { merge: true })
const multi = compose('compose.yaml')
const single = compose('compose.sqlite.yaml')

/** compose's `${…}` interpolation: `$$`, `${X}`, `${X:-default}`, `${X-default}`, `${X:?error}`, `${X?error}` */
function interpolate (value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}/g, (m, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (name === undefined) return '$'
    const v = vars[name]
    const unset = v === undefined || (op?.startsWith(':') === true && v === '')
    if (!unset) return v
    if (op?.endsWith('?') === true) throw new Error(`${name}: ${arg ?? 'required'}`)
    if (op?.endsWith('-') === true) return arg ?? ''
    return ''
  })
}

/** the names the gateway reads (every file of src/config/): EnvSchema's keys, the `X` / `X_FILE` pairs, and `env.X` */
const configDir = join(root, 'src/config')
const configSource = readdirSync(configDir).filter((f) => f.endsWith('.ts')).sort().map((f) => readFileSync(join(configDir, f), 'utf8')).join('\n')
const schemaStart = configSource.indexOf('const EnvSchema = z.object({')
const schemaBlock = configSource.slice(schemaStart, configSource.indexOf('\n})', schemaStart))
const GATEWAY_ENV = new Set([
  ...[...schemaBlock.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!),
  ...[...configSource.matchAll(/pick\('([A-Z0-9_]+)', '([A-Z0-9_]+)'\)/g)].flatMap((m) => [m[1]!, m[2]!]),
  ...[...configSource.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
])

/** a secret file's sample content, by the compose secret's file name */
const SAMPLE_FILES: Record<string, string> = {
  './secrets/upstream-key': 'sample-upstream-key-0123456789\n',
  './secrets/callers.json': JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read', 'control', 'admin'], controllerId: 'ops' }])
}
const PRODUCTION_VARS = { OPENOPERATOR_URL: 'https://openoperator.example', POSTGRES_PASSWORD: 'samplePassword1' }
const DEMO_VARS: Record<string, string> = Object.fromEntries(readFileSync(join(docker, 'demo.env'), 'utf8').split('\n')
  .filter((l) => /^[A-Z]/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))

const envOf = (file: Obj, service: string, vars: Record<string, string>): Env =>
  Object.fromEntries(Object.entries(file.services[service].environment as Record<string, string>).map(([k, v]) => [k, interpolate(String(v), vars)]))

/** a service's environment as the gateway loads it, each /run/secrets/<name> read from the compose secret's file */
function gatewayConfig (file: Obj, service: string, vars: Record<string, string>): ReturnType<typeof loadConfig> {
  const mounted = new Map<string, string>((file.services[service].secrets as string[]).map((s) => [`/run/secrets/${s}`, file.secrets[s].file as string]))
  return loadConfig(envOf(file, service, vars), {
    readFile: (path) => {
      const source = mounted.get(path)
      if (source === undefined) throw new Error(`${path} is not a secret of ${service}`)
      return SAMPLE_FILES[source]!
    }
  })
}

/** every published port of a service: [host address or '' for every interface, host port, container port] */
function published (svc: Obj): Array<{ address: string; host: number; container: number }> {
  return ((svc.ports ?? []) as Array<string | Obj>).map((p) => {
    if (typeof p !== 'string') return { address: p.host_ip ?? '', host: Number(p.published), container: Number(p.target) }
    const parts = p.replace(/\/tcp$/, '').split(':')
    if (parts.length === 3) return { address: parts[0]!, host: Number(parts[1]), container: Number(parts[2]) }
    if (parts.length === 2) return { address: '', host: Number(parts[0]), container: Number(parts[1]) }
    return { address: '', host: Number(parts[0]), container: Number(parts[0]) }
  })
}

const seconds = (d: string): number => {
  const m = /^(\d+)(s|m)$/.exec(d)
  if (m === null) throw new Error(`unsupported duration ${d}`)
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1)
}
const defaultServices = (file: Obj): string[] => Object.keys(file.services).filter((s) => file.services[s].profiles === undefined).sort()
const dependsOn = (svc: Obj): Record<string, string> => Array.isArray(svc.depends_on)
  ? Object.fromEntries((svc.depends_on as string[]).map((d) => [d, 'service_started']))
  : Object.fromEntries(Object.entries((svc.depends_on ?? {}) as Record<string, Obj>).map(([d, c]) => [d, c.condition]))

const GATEWAYS = ['gateway-1', 'gateway-2']
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

describe('docker/compose.yaml: two replicas on PostgreSQL behind nginx', () => {
  it('services: PostgreSQL, a one-shot migrate, two gateway replicas, Redis, the ingress and Prometheus; Grafana and the simulator behind profiles', () => {
    expect(defaultServices(multi)).toEqual(['gateway-1', 'gateway-2', 'ingress', 'migrate', 'postgres', 'prometheus', 'redis'])
    expect(multi.services.grafana.profiles).toEqual(['grafana'])
    for (const s of ['simulator', 'simulator-link-1', 'simulator-link-2']) expect(multi.services[s].profiles, s).toEqual(['demo'])
    expect(multi.services.postgres.image).toMatch(/^postgres:16\b/)
    expect(multi.services.ingress.image).toMatch(/^nginx:/)
    for (const s of ['migrate', ...GATEWAYS]) {
      expect(multi.services[s].image, s).toBe('openoperator-gateway:local')
      expect(multi.services[s].build, s).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' })
    }
  })

  it('depends_on: the replicas start after the migrations completed and Redis is healthy; migrate after PostgreSQL is healthy', () => {
    for (const g of GATEWAYS) expect(dependsOn(multi.services[g]), g).toEqual({ migrate: 'service_completed_successfully', redis: 'service_healthy' })
    expect(dependsOn(multi.services.migrate)).toEqual({ postgres: 'service_healthy' })
    for (const s of ['postgres', 'redis']) expect(multi.services[s].healthcheck.test, s).toBeDefined()
    expect(multi.services.migrate.restart).toBe('no')
    expect(Object.keys(dependsOn(multi.services.ingress)).sort()).toEqual(GATEWAYS)
    expect(Object.keys(dependsOn(multi.services.prometheus)).sort()).toEqual(GATEWAYS)
    // a depends_on names a service of the file, and no default service waits for a profiled one
    for (const [name, svc] of Object.entries(multi.services as Record<string, Obj>)) {
      for (const d of Object.keys(dependsOn(svc))) {
        expect(multi.services[d], `${name} → ${d}`).toBeDefined()
        if (svc.profiles === undefined) expect(multi.services[d].profiles, `${name} → ${d}`).toBeUndefined()
      }
    }
  })

  it('ports: the API only through nginx; every other published port, the replicas\' metrics included, on loopback only', () => {
    for (const [name, svc] of Object.entries(multi.services as Record<string, Obj>)) {
      for (const p of published(svc)) {
        if (name === 'ingress') continue
        expect(p.address, `${name} ${p.host}:${p.container}`).toBe('127.0.0.1')
      }
    }
    expect(published(multi.services.ingress)).toEqual([{ address: '', host: 8080, container: 8080 }])
    const hostPorts = new Set<number>()
    for (const g of GATEWAYS) {
      const config = gatewayConfig(multi, g, PRODUCTION_VARS)
      // the metrics port on loopback, the API port not at all
      expect(published(multi.services[g]).map((p) => p.container), g).toEqual([config.metricsPort])
      for (const p of published(multi.services[g])) hostPorts.add(p.host)
    }
    expect(hostPorts.size).toBe(GATEWAYS.length)
    for (const s of ['postgres', 'redis', 'migrate']) expect(published(multi.services[s]), s).toEqual([])
  })

  it('every env name of a replica and of migrate is one the gateway reads; both replicas load as production on PostgreSQL and Redis', () => {
    expect(GATEWAY_ENV.has('GATEWAY_LEDGER_URL') && GATEWAY_ENV.has('SPYNEL_AGENT_ZERO_API_KEY_FILE') && GATEWAY_ENV.size > 40).toBe(true)
    for (const s of ['migrate', ...GATEWAYS]) {
      for (const name of Object.keys(multi.services[s].environment)) expect(GATEWAY_ENV.has(name), `${s}: ${name}`).toBe(true)
    }
    expect(multi.services['gateway-2'].environment).toEqual(multi.services['gateway-1'].environment)
    const pgEnv = multi.services.postgres.environment
    for (const g of GATEWAYS) {
      const config = gatewayConfig(multi, g, PRODUCTION_VARS)
      expect(config.production).toBe(true)
      expect(config.upstream.secret).toBe('sample-upstream-key-0123456789')
      expect(config.callers?.map((c) => c.name)).toEqual(['ops'])
      expect(config.controlEnabled).toBe(false)
      const ledger = new URL(config.ledgerUrl)
      expect([ledger.protocol, ledger.hostname, ledger.username, ledger.password, ledger.pathname])
        .toEqual(['postgres:', 'postgres', pgEnv.POSTGRES_USER, PRODUCTION_VARS.POSTGRES_PASSWORD, `/${String(pgEnv.POSTGRES_DB)}`])
      expect(interpolate(pgEnv.POSTGRES_PASSWORD, PRODUCTION_VARS)).toBe(PRODUCTION_VARS.POSTGRES_PASSWORD)
      expect(new URL(config.redisUrl!).hostname).toBe('redis')
      // behind one nginx that appends to X-Forwarded-For
      expect(config.trustProxy).toBe(1)
      expect(config.host).toBe('0.0.0.0')
    }
    // the required variables are required
    expect(() => gatewayConfig(multi, 'gateway-1', { OPENOPERATOR_URL: 'https://x.example' })).toThrow(/POSTGRES_PASSWORD/)
    expect(() => gatewayConfig(multi, 'gateway-1', { POSTGRES_PASSWORD: 'x' })).toThrow(/OPENOPERATOR_URL/)
  })

  it('migrate runs the bin\'s `ledger migrate` on the replicas\' ledger URL', () => {
    expect(multi.services.migrate.command).toEqual(['node', pkg.bin['openoperator-gateway'], 'ledger', 'migrate'])
    expect(envOf(multi, 'migrate', PRODUCTION_VARS)).toEqual({ GATEWAY_LEDGER_URL: envOf(multi, 'gateway-1', PRODUCTION_VARS).GATEWAY_LEDGER_URL })
  })

  it('stop_grace_period outlasts the drain grace and the close', () => {
    const config = gatewayConfig(multi, 'gateway-1', PRODUCTION_VARS)
    for (const g of GATEWAYS) expect(seconds(multi.services[g].stop_grace_period) * 1000, g).toBeGreaterThanOrEqual(config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
  })

  it('the ingress runs docker/nginx/gateway.conf, which names exactly the replicas\' API ports and never a metrics port', () => {
    expect(multi.services.ingress.volumes).toEqual(['./nginx/gateway.conf:/etc/nginx/conf.d/default.conf:ro'])
    const conf = readFileSync(INGRESS_CONF, 'utf8')
    const named = [...conf.matchAll(SHIPPED_REPLICA)].map((m) => `${m[2]!}:${m[3]!}`)
    expect(named).toEqual(GATEWAYS.map((g) => `${g}:${gatewayConfig(multi, g, PRODUCTION_VARS).port}`))
    expect(ingressDirective('listen')).toEqual([String(published(multi.services.ingress)[0]!.container)])
    expect(ingressDirective('proxy_pass')).toEqual(['http://openoperator_gateway'])
    const metricsPorts = GATEWAYS.map((g) => gatewayConfig(multi, g, PRODUCTION_VARS).metricsPort)
    for (const p of metricsPorts) expect(conf).not.toContain(`:${p}`)
    // X-Forwarded-For appended, for GATEWAY_TRUST_PROXY=1
    expect(ingressDirective('proxy_set_header')).toContain('X-Forwarded-For $proxy_add_x_forwarded_for')
    // a POST is never passed on once sent; reads are, on a 502 or 503 too
    expect(ingressDirective('proxy_next_upstream')).toEqual(['error timeout http_502 http_503'])
    expect(conf.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n')).not.toMatch(/non_idempotent/)
    expect(ingressDirective('proxy_next_upstream_tries')).toEqual([String(GATEWAYS.length)])
    // the proxy never cuts a request the gateway is still completing, nor keeps a socket the gateway closes
    const config = gatewayConfig(multi, 'gateway-1', PRODUCTION_VARS)
    expect(seconds(ingressDirective('proxy_read_timeout')[0]!) * 1000).toBeGreaterThan(longestRequestMs(config.upstream))
    expect(seconds(ingressDirective('keepalive_timeout')[0]!) * 1000).toBeLessThan(config.http.keepAliveTimeoutMs)
    // the gateway bounds no address behind a trusted proxy: the ingress does
    expect(config.http.maxConnectionsPerAddress).toBe(0)
    expect(ingressDirective('limit_conn')[0]).toMatch(/^gateway_clients \d+$/)
  })

  it('Prometheus scrapes each replica\'s metrics port, under the job the rules select', () => {
    const prom = parse(readFileSync(join(docker, 'prometheus/prometheus.yml'), 'utf8'))
    expect(multi.services.prometheus.volumes).toContain('./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro')
    const job = prom.scrape_configs.find((j: Obj) => j.job_name === 'openoperator-gateway')
    const targets = job.static_configs.flatMap((c: Obj) => c.targets)
    expect(targets).toEqual(GATEWAYS.map((g) => `${g}:${gatewayConfig(multi, g, PRODUCTION_VARS).metricsPort}`))
  })

  it('profile demo: the simulator reached on each replica\'s own loopback through a link in its network namespace; docker/demo.env loads', () => {
    const sim = multi.services.simulator
    const cli = readFileSync(join(root, 'src/cli/index.ts'), 'utf8')
    for (const name of Object.keys(sim.environment)) expect(cli, name).toMatch(new RegExp(`process\\.env\\.${name}\\b`))
    expect(sim.secrets).toEqual(['upstream-key'])
    expect(sim.command.join(' ')).toContain('cat /run/secrets/upstream-key')
    expect(sim.command.join(' ')).toContain(`node ${pkg.bin['openoperator-gateway'] as string} simulator`)
    expect(published(sim)).toEqual([])
    const simPort = Number(sim.environment.SIMULATOR_PORT)
    for (const [i, g] of GATEWAYS.entries()) {
      const link = multi.services[`simulator-link-${i + 1}`]
      expect(link.network_mode).toBe(`service:${g}`)
      // the link's script parses, and forwards its loopback port to the simulator's
      const script = link.command[2] as string
      expect(link.command.slice(0, 2)).toEqual(['node', '-e'])
      expect(() => new Script(script)).not.toThrow()
      expect(script).toContain(`net.connect(${simPort}, 'simulator')`)
      const config = gatewayConfig(multi, g, DEMO_VARS)
      expect(config.production).toBe(false)
      expect(config.upstream.origin).toBe(`http://127.0.0.1:${simPort}`)
      expect(script).toContain(`.listen(${new URL(config.upstream.origin).port}, '127.0.0.1')`)
      expect(config.controlEnabled).toBe(true)
      // the compose simulator, not one embedded in each replica
      expect(config.embeddedSimulator).toBe(false)
    }
    expect(interpolate(sim.environment.SIMULATOR_PROFILE, DEMO_VARS)).toBe('campaign-control')
    // the demo needs nothing the production start needs beyond the secret files
    expect(Object.keys(DEMO_VARS).sort()).toEqual(['GATEWAY_CONTROL_ENABLED', 'GATEWAY_DISCOVERY_INTERVAL_MS', 'GATEWAY_NODE_ENV', 'OPENOPERATOR_URL', 'POSTGRES_PASSWORD', 'SIMULATOR_PROFILE'])
  })
})

describe('docker/compose.sqlite.yaml: one replica on an SQLite file', () => {
  it('one gateway, its ledger on the volume the image declares, Redis and Prometheus; no PostgreSQL, migrate or ingress', () => {
    expect(defaultServices(single)).toEqual(['gateway', 'prometheus', 'redis'])
    const config = gatewayConfig(single, 'gateway', PRODUCTION_VARS)
    expect(config.production).toBe(true)
    expect(config.ledgerUrl).toBe('sqlite:/app/data/ledger.db')
    const ledgerDir = posix.dirname(config.ledgerUrl.slice('sqlite:'.length))
    expect(single.services.gateway.volumes).toEqual([`ledger:${ledgerDir}`])
    expect(readFileSync(join(docker, 'Dockerfile'), 'utf8')).toContain(`VOLUME ["${ledgerDir}"]`)
    // reached directly, no proxy in front: the socket's address is the client's
    expect(config.trustProxy).toBe(false)
    for (const name of Object.keys(single.services.gateway.environment)) expect(GATEWAY_ENV.has(name), name).toBe(true)
    expect(dependsOn(single.services.gateway)).toEqual({ redis: 'service_healthy' })
    expect(seconds(single.services.gateway.stop_grace_period) * 1000).toBeGreaterThanOrEqual(config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
  })

  it('the API published, the metrics and every other port on loopback only; Prometheus scrapes the one gateway', () => {
    const config = gatewayConfig(single, 'gateway', PRODUCTION_VARS)
    expect(published(single.services.gateway)).toEqual([
      { address: '', host: config.port, container: config.port },
      { address: '127.0.0.1', host: config.metricsPort, container: config.metricsPort }
    ])
    for (const [name, svc] of Object.entries(single.services as Record<string, Obj>)) {
      if (name === 'gateway') continue
      for (const p of published(svc)) expect(p.address, name).toBe('127.0.0.1')
    }
    expect(single.services.prometheus.volumes).toContain('./prometheus/prometheus.sqlite.yml:/etc/prometheus/prometheus.yml:ro')
    const prom = parse(readFileSync(join(docker, 'prometheus/prometheus.sqlite.yml'), 'utf8'))
    expect(prom.scrape_configs.flatMap((j: Obj) => j.static_configs.flatMap((c: Obj) => c.targets))).toEqual([`gateway:${config.metricsPort}`])
    // the same rules either way
    expect(prom.rule_files).toEqual(parse(readFileSync(join(docker, 'prometheus/prometheus.yml'), 'utf8')).rule_files)
  })
})

describe('the compose files through the tools', () => {
  const FILES = ['compose.yaml', 'compose.sqlite.yaml', 'prometheus/prometheus.yml', 'prometheus/prometheus.sqlite.yml']

  it('yamllint (strict, the docker/k8s rules) accepts them', (ctx) => {
    const found = spawnSync('yamllint', ['--version'], { encoding: 'utf8' })
    if (found.error !== undefined || found.status !== 0) {
      console.warn('SKIP yamllint of the compose files: yamllint is not installed (Debian: apt-get install yamllint)')
      ctx.skip()
      return
    }
    const r = spawnSync('yamllint', ['-s', '-c', join(docker, 'k8s/.yamllint'), ...FILES.map((f) => join(docker, f))], { encoding: 'utf8' })
    expect(r.status, r.stdout + r.stderr).toBe(0)
  })

  it('promtool check config accepts the single replica\'s Prometheus (prometheus.yml: test/observability/promtool.test.ts)', (ctx) => {
    if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status !== 0) {
      console.warn('SKIP promtool check config of prometheus.sqlite.yml: no `promtool` on PATH (Debian package `prometheus`)')
      ctx.skip()
      return
    }
    const dir = mkdtempSync(join(tmpdir(), 'oo-gw-promtool-'))
    try {
      const cfg = readFileSync(join(docker, 'prometheus/prometheus.sqlite.yml'), 'utf8').replace('/etc/prometheus/rules.yml', join(docker, 'prometheus/rules.yml'))
      writeFileSync(join(dir, 'prometheus.yml'), cfg)
      const r = spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], { encoding: 'utf8', timeout: 15_000 })
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('`docker compose config` (or docker-compose) accepts both files and the demo profile', (ctx) => {
    const tool = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0
      ? ['docker', 'compose']
      : spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0 ? ['docker-compose'] : undefined
    if (tool === undefined) {
      console.warn('SKIP `docker compose config`: neither the docker compose plugin nor docker-compose is installed (the structure is checked above)')
      ctx.skip()
      return
    }
    // a copy, with the secret files the operator would create (never in the repository)
    const dir = mkdtempSync(join(tmpdir(), 'oo-gw-compose-'))
    try {
      cpSync(docker, join(dir, 'docker'), { recursive: true })
      mkdirSync(join(dir, 'docker/secrets'), { recursive: true })
      for (const [file, text] of Object.entries(SAMPLE_FILES)) writeFileSync(join(dir, 'docker', file), text)
      const run = (args: string[], vars: Record<string, string>): string => {
        const r = spawnSync(tool[0]!, [...tool.slice(1), ...args, 'config', '-q'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, ...vars } })
        expect(r.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0)
        return r.stderr
      }
      run(['-f', 'docker/compose.yaml'], PRODUCTION_VARS)
      run(['-f', 'docker/compose.yaml', '--env-file', 'docker/demo.env', '--profile', 'demo', '--profile', 'grafana'], {})
      run(['-f', 'docker/compose.sqlite.yaml', '--profile', 'grafana'], PRODUCTION_VARS)
      // and a missing required variable is refused
      const missing = spawnSync(tool[0]!, [...tool.slice(1), '-f', 'docker/compose.yaml', 'config', '-q'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } })
      expect(missing.status).not.toBe(0)
      expect(missing.stderr).toMatch(/OPENOPERATOR_URL|POSTGRES_PASSWORD/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
