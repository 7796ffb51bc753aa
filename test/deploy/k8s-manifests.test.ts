// The Kubernetes manifests of docker/k8s/ (docs/operating.md#kubernetes): each object validated against
// the Kubernetes API schemas with kubernetes-models, the YAML checked with yamllint (skipped,
// with the reason printed, where it is not installed), and the values checked against what the
// gateway really serves and reads: probe paths answered by a running gateway, ports, metrics
// annotations, env names the code reads, *_FILE paths that land on mounted Secret items, the
// ledger on the volume, a termination grace longer than the drain, and a qualify Job whose
// configuration loads. No cluster runs here: this is what can be verified without one.
// The PostgreSQL variant (docker/k8s/postgres/, with the shared ConfigMap, Secret, Service and
// qualify Job) the same way, and for what several replicas need: two of them rolled one at a
// time, a PodDisruptionBudget, the migrate Job on the Deployment's ledger URL from a Secret, a
// hop count of 1 behind ingress-nginx with only the controller let in, and an Ingress that
// retries as the reference docker/nginx/gateway.conf does. The prometheus-operator ServiceMonitor
// (a CRD, which kubernetes-models has no type for: its structure is checked by hand) against the
// shared Service, the pods' labels and the alert rules' selector, for both variants.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { z } from 'zod'
import { loadConfig, longestRequestMs } from '../../src/config.js'
import { loadQualifyConfig } from '../../src/qualify/config.js'
import { CHECKS } from '../../src/qualify/run.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'
import { ingressDirective } from '../helpers/ingress.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const dir = join(root, 'docker/k8s')
/** close-with-grace gives the close this long after the grace (src/cli/index.ts, docs/design.md#shutdown) */
const CLOSE_AFTER_GRACE_MS = 5000

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are free-form YAML, validated below
type Obj = any
interface KeyRef { name: string; key: string }
interface EnvVar { name: string; value?: string; valueFrom?: { configMapKeyRef?: KeyRef; secretKeyRef?: KeyRef } }
type Loaded = Array<{ file: string; obj: Obj }>

// kubectl's YAML reader follows YAML 1.1 (0440 is octal there), so parse the same way
const load = (from: string, names: string[]): Loaded => names.flatMap((file) =>
  parseAllDocuments(readFileSync(join(from, file), 'utf8'), { version: '1.1' }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`)
    return { file, obj: doc.toJS() as Obj }
  }))
const oneOf = (from: Loaded, kind: string, name?: string): Obj => {
  const found = from.filter((o) => o.obj.kind === kind && (name === undefined || o.obj.metadata.name === name))
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1)
  return found[0]!.obj
}
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'))
const objects = load(dir, files)
const one = (kind: string, name?: string): Obj => oneOf(objects, kind, name)

/**
 * monitoring.coreos.com/v1 ServiceMonitor, the fields this repository uses, by hand: kubernetes-models
 * types only the core API. Strict, so a misspelt key (`endpoint`, `podTargetLabel`) fails here
 * rather than being ignored by the operator.
 */
const LabelSelectorSchema = z.strictObject({ matchLabels: z.record(z.string(), z.string()) })
const ServiceMonitorSchema = z.strictObject({
  apiVersion: z.literal('monitoring.coreos.com/v1'),
  kind: z.literal('ServiceMonitor'),
  metadata: z.strictObject({ name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.strictObject({
    selector: LabelSelectorSchema,
    namespaceSelector: z.strictObject({ matchNames: z.array(z.string()).optional(), any: z.boolean().optional() }).optional(),
    jobLabel: z.string().optional(),
    podTargetLabels: z.array(z.string()).optional(),
    targetLabels: z.array(z.string()).optional(),
    endpoints: z.array(z.strictObject({
      port: z.string(),
      path: z.string().startsWith('/'),
      scheme: z.enum(['http', 'https']).optional(),
      interval: z.string().regex(/^\d+[smh]$/).optional(),
      scrapeTimeout: z.string().regex(/^\d+[smh]$/).optional()
    })).min(1)
  })
})
class ServiceMonitor {
  constructor (private readonly data: Obj) {}
  validate (): void { ServiceMonitorSchema.parse(this.data) }
}

const MODELS: Record<string, new (data: Obj) => { validate: () => void }> = {
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
  'apps/v1 Deployment': Deployment,
  'batch/v1 Job': Job,
  'v1 Service': Service,
  'v1 Secret': Secret,
  'v1 ConfigMap': ConfigMap,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1 Ingress': Ingress,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy
}

const deployment = one('Deployment')
const job = one('Job')
const configMap = one('ConfigMap')
const secret = one('Secret')
const pod = deployment.spec.template.spec
const container = pod.containers[0]
const jobPod = job.spec.template.spec
const jobContainer = jobPod.containers[0]
const portOf = (name: string): number => container.ports.find((p: Obj) => p.name === name).containerPort

/** the container's environment as the kubelet would build it (ConfigMap and Secret references resolved, Secrets from `from`) */
function envOf (c: Obj, overrides: Record<string, string> = {}, from: Loaded = objects): Record<string, string> {
  const env: Record<string, string> = {}
  for (const v of c.env as EnvVar[]) {
    const ref = v.valueFrom?.configMapKeyRef
    const secretRef = v.valueFrom?.secretKeyRef
    if (ref !== undefined) {
      expect(ref.name).toBe(configMap.metadata.name)
      expect(Object.keys(configMap.data)).toContain(ref.key)
      env[v.name] = configMap.data[ref.key]
    } else if (secretRef !== undefined) {
      const stringData = oneOf(from, 'Secret', secretRef.name).stringData
      expect(Object.keys(stringData), `${v.name}: ${secretRef.name}`).toContain(secretRef.key)
      env[v.name] = stringData[secretRef.key]
    } else env[v.name] = v.value!
  }
  return { ...env, ...overrides }
}

/** file path → Secret key, for every item of a secret volume the container mounts */
function mountedSecretFiles (podSpec: Obj, c: Obj): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of c.volumeMounts as Obj[]) {
    const volume = podSpec.volumes.find((v: Obj) => v.name === m.name)
    if (volume?.secret === undefined) continue
    expect(volume.secret.secretName).toBe(secret.metadata.name)
    expect(m.readOnly).toBe(true)
    for (const item of volume.secret.items) out.set(posix.join(m.mountPath, item.path), item.key)
  }
  return out
}

const SAMPLE_SECRETS: Record<string, string> = {
  'upstream-key': 'sample-upstream-key\n',
  'callers.json': JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read', 'admin'] }])
}

/** a Deployment's configuration as the gateway loads it, the Secret's files holding sample values */
function deploymentConfig (overrides: Record<string, string> = {}, podSpec: Obj = pod, from: Loaded = objects): ReturnType<typeof loadConfig> {
  const c = podSpec.containers[0]
  const files = mountedSecretFiles(podSpec, c)
  const read = (path: string): string => {
    const key = files.get(path)
    if (key === undefined) throw new Error(`${path} is not a mounted Secret item`)
    expect(Object.keys(secret.stringData)).toContain(key)
    return SAMPLE_SECRETS[key]!
  }
  return loadConfig(envOf(c, { OPENOPERATOR_URL: 'https://openoperator.example', ...overrides }, from), { readFile: read })
}

// the PostgreSQL variant: its own directory, with the base's ConfigMap, Secret, Service and qualify Job
const pgDir = join(dir, 'postgres')
const pgFiles = readdirSync(pgDir).filter((f) => f.endsWith('.yaml'))
const SHARED = ['configmap.yaml', 'qualify-job.yaml', 'secret.example.yaml', 'service.yaml', 'servicemonitor.yaml']
const pgObjects = [...objects.filter((o) => SHARED.includes(o.file)), ...load(pgDir, pgFiles)]
const pgOne = (kind: string, name?: string): Obj => oneOf(pgObjects, kind, name)
const pgDeployment = pgOne('Deployment')
const pgPod = pgDeployment.spec.template.spec
const pgContainer = pgPod.containers[0]
const migrateJob = pgOne('Job', 'openoperator-gateway-ledger-migrate')
const migrateContainer = migrateJob.spec.template.spec.containers[0]

/** whether a label selector's matchLabels all hold for these labels */
const selects = (selector: Obj, labels: Record<string, string>): boolean =>
  Object.entries(selector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v)

describe('docker/k8s manifests', () => {
  it('every object validates against the Kubernetes API schemas (kubernetes-models)', () => {
    expect(files.sort()).toEqual(['configmap.yaml', 'deployment.yaml', 'pvc.yaml', 'qualify-job.yaml', 'secret.example.yaml', 'service.yaml', 'servicemonitor.yaml'])
    for (const { file, obj } of objects) {
      const Model = MODELS[`${obj.apiVersion} ${obj.kind}`]
      expect(Model, `${file}: ${obj.apiVersion} ${obj.kind} has no model here`).toBeDefined()
      expect(() => new Model!(obj).validate(), file).not.toThrow()
    }
    // the validator does catch a wrong type (it ignores unknown keys, as the API server's schema does)
    const broken = structuredClone(deployment)
    broken.spec.template.spec.containers[0].ports[0].containerPort = '8080'
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/)
    // and so does the hand-written ServiceMonitor check, on a wrong type and on a misspelt key
    const monitor = one('ServiceMonitor')
    for (const bad of [{ ...monitor, spec: { ...monitor.spec, endpoints: 'metrics' } }, { ...monitor, spec: { ...monitor.spec, endpoint: monitor.spec.endpoints } }]) {
      expect(() => new ServiceMonitor(bad).validate()).toThrow()
    }
  })

  it('yamllint (strict) accepts every file, docker/k8s/postgres/ included', (ctx) => {
    const found = spawnSync('yamllint', ['--version'], { encoding: 'utf8' })
    if (found.error !== undefined || found.status !== 0) {
      console.log('yamllint is not installed (Debian: apt-get install yamllint); the YAML lint is skipped')
      ctx.skip()
      return
    }
    execFileSync('yamllint', ['-s', '-c', join(dir, '.yamllint'), dir], { encoding: 'utf8' })
  })

  it('one replica, replaced with Recreate, the SQLite ledger on the PersistentVolumeClaim at /app/data', () => {
    expect(deployment.spec.replicas).toBe(1)
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' })
    const env = envOf(container)
    expect(env.GATEWAY_LEDGER_URL).toBe('sqlite:/app/data/ledger.db')
    const ledgerDir = posix.dirname(env.GATEWAY_LEDGER_URL!.slice('sqlite:'.length))
    const mount = container.volumeMounts.find((m: Obj) => m.mountPath === ledgerDir)
    const volume = pod.volumes.find((v: Obj) => v.name === mount.name)
    expect(volume.persistentVolumeClaim.claimName).toBe(one('PersistentVolumeClaim').metadata.name)
    expect(one('PersistentVolumeClaim').spec.accessModes).toEqual(['ReadWriteOnce'])
    // the image's VOLUME is the same directory
    expect(readFileSync(join(root, 'docker/Dockerfile'), 'utf8')).toContain(`VOLUME ["${ledgerDir}"]`)
  })

  it('every env name is one the gateway reads, and the Deployment\'s environment loads as production', () => {
    const source = readFileSync(join(root, 'src/config.ts'), 'utf8')
    for (const v of container.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`\\b${v.name}\\b['":]`))
    const files = mountedSecretFiles(pod, container)
    const env = envOf(container)
    const config = deploymentConfig()
    expect(config.production).toBe(true)
    expect(config.upstream.secret).toBe('sample-upstream-key')
    expect(config.callers?.map((c) => c.name)).toEqual(['ops'])
    expect(config.controlEnabled).toBe(false) // enabled only after the remote's control support is qualified
    // each *_FILE variable names a mounted Secret item
    for (const name of ['SPYNEL_AGENT_ZERO_API_KEY_FILE', 'GATEWAY_CALLERS_FILE']) expect(files.has(env[name]!), name).toBe(true)
  })

  it('ports: the API and metrics ports are what the gateway listens on, and the Service targets them', () => {
    const config = deploymentConfig()
    expect(portOf('http')).toBe(config.port)
    expect(portOf('metrics')).toBe(config.metricsPort)
    // the defaults agree too: a Deployment without PORT/METRICS_PORT would listen there
    const defaults = loadConfig({})
    expect([defaults.port, defaults.metricsPort]).toEqual([portOf('http'), portOf('metrics')])
    const annotations = deployment.spec.template.metadata.annotations
    expect(annotations['prometheus.io/scrape']).toBe('true')
    expect(Number(annotations['prometheus.io/port'])).toBe(portOf('metrics'))
    const service = one('Service')
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels)
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels)
    for (const p of service.spec.ports) expect(container.ports.map((c: Obj) => c.name)).toContain(p.targetPort)
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) expect(probe.httpGet.port).toBe('http')
  })

  it('terminationGracePeriodSeconds outlasts preStop + the drain grace + the close', () => {
    const config = deploymentConfig()
    const preStopMs = Number(container.lifecycle.preStop.exec.command[1]) * 1000
    expect(config.shutdownGraceMs).toBe(43_000) // the derived default (docs/design.md#shutdown)
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
  })

  it('the Secret template carries no real value, and its items are mounted with a readable mode', () => {
    expect(secret.stringData['upstream-key']).toMatch(/^REPLACE-/)
    expect(JSON.parse(secret.stringData['callers.json'])[0].tokenSha256).toMatch(/^REPLACE-/)
    expect(secret.data).toBeUndefined()
    const volume = pod.volumes.find((v: Obj) => v.secret !== undefined)
    expect(volume.secret.defaultMode).toBe(0o440) // group-readable: fsGroup is the container's group
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup)
  })

  it('the qualify Job runs the bin\'s qualify, once, bounded, with the upstream key only; its configuration loads', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(jobContainer.command).toEqual(['node', pkg.bin['openoperator-gateway'], 'qualify'])
    expect(jobContainer.image).toBe(container.image)
    expect(jobPod.restartPolicy).toBe('Never')
    expect(job.spec.backoffLimit).toBe(0)
    const files = mountedSecretFiles(jobPod, jobContainer)
    expect([...files.values()]).toEqual(['upstream-key'])
    const source = readFileSync(join(root, 'src/qualify/config.ts'), 'utf8')
    for (const v of jobContainer.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`\\b${v.name}\\b`))
    const env = envOf(jobContainer, { EXPECTED_SOURCE_SHA: 'f'.repeat(40) })
    const config = loadQualifyConfig(env, { readFile: (p) => { expect(files.has(p)).toBe(true); return 'sample-upstream-key\n' } })
    expect(config.secret).toBe('sample-upstream-key')
    // every assertion is bounded: the Job's deadline covers them all
    expect(job.spec.activeDeadlineSeconds * 1000).toBeGreaterThan(CHECKS.length * config.assertionTimeoutMs)
    // the ConfigMap's placeholder SHA makes qualify refuse to run rather than pass by accident
    expect(() => loadQualifyConfig(envOf(jobContainer), { readFile: () => 'k' })).toThrow(/EXPECTED_SOURCE_SHA/)
  })

  it('the ServiceMonitor scrapes the Service\'s metrics port at the annotated path, for both variants, under a job and a label the alert rules select', () => {
    const rules = parse(readFileSync(join(root, 'docker/prometheus/rules.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }
    const down = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'GatewayDown')!.expr
    const jobRegex = /up\{job=~"([^"]+)"\}/.exec(down)?.[1]
    expect(jobRegex).toBeDefined()
    for (const [from, podTemplate] of [[objects, deployment.spec.template], [pgObjects, pgDeployment.spec.template]] as const) {
      const monitor = oneOf(from, 'ServiceMonitor')
      const service = oneOf(from, 'Service')
      // a ServiceMonitor selects Services by their labels, in its own namespace
      expect(selects(monitor.spec.selector, service.metadata.labels)).toBe(true)
      expect(monitor.spec.namespaceSelector).toBeUndefined()
      const [endpoint, ...more] = monitor.spec.endpoints
      expect(more).toEqual([])
      // a port name of the Service, whose target is the container's metrics port, at the scrape path
      const port = service.spec.ports.find((p: Obj) => p.name === endpoint.port)
      expect(port, endpoint.port).toBeDefined()
      expect(port.targetPort).toBe('metrics')
      const c = podTemplate.spec.containers[0]
      expect(c.ports.find((p: Obj) => p.name === port.targetPort).containerPort).toBe(Number(podTemplate.metadata.annotations['prometheus.io/port']))
      expect(endpoint.path).toBe('/metrics')
      expect(endpoint.path).toBe(podTemplate.metadata.annotations['prometheus.io/path'])
      expect(endpoint.scheme).toBe('http')
      // the job is the Service's name (no jobLabel), which the rules' job matcher accepts
      expect(monitor.spec.jobLabel).toBeUndefined()
      expect(new RegExp(`^(?:${jobRegex!})$`).test(service.metadata.name)).toBe(true)
      // the pod label it copies, sanitised as the operator does (app.kubernetes.io/name → app_kubernetes_io_name), is the rules' other matcher
      for (const label of monitor.spec.podTargetLabels as string[]) {
        const value = podTemplate.metadata.labels[label]
        expect(value, label).toBeDefined()
        expect(down).toContain(`up{${label.replace(/[^a-zA-Z0-9_]/g, '_')}="${String(value)}"}`)
      }
      // a scrape gives up before the next one is due
      const seconds = (d: string): number => Number(d.slice(0, -1)) * ({ s: 1, m: 60, h: 3600 } as Record<string, number>)[d.slice(-1)]!
      expect(seconds(endpoint.scrapeTimeout as string)).toBeLessThan(seconds(endpoint.interval as string))
    }
  })

  describe('against a running gateway', () => {
    let sim: Simulator
    beforeAll(async () => { sim = await startSimulator({ secret: 'k8s-test-secret-0123' }) })
    afterAll(async () => { await sim.close() })

    it('the probe paths (of both variants) answer 200 on the API port, the scrape path on the metrics port', async () => {
      const gw = await startGateway({ simulator: sim })
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe, pgContainer.readinessProbe, pgContainer.livenessProbe, pgContainer.startupProbe]) {
        const res = await request(`${gw.url}${probe.httpGet.path}`)
        await res.body.text()
        expect(res.statusCode, probe.httpGet.path).toBe(200)
      }
      for (const path of [deployment.spec.template.metadata.annotations['prometheus.io/path'], one('ServiceMonitor').spec.endpoints[0].path]) {
        const scrape = await request(`${gw.metricsUrl}${path as string}`)
        expect(scrape.statusCode, path).toBe(200)
        expect(await scrape.body.text()).toContain('gateway_http_requests_total')
      }
    })
  })
})

describe('docker/k8s/postgres manifests (several replicas on the PostgreSQL ledger)', () => {
  const pdb = pgOne('PodDisruptionBudget')
  const ingress = pgOne('Ingress')
  const policy = pgOne('NetworkPolicy')
  const stores = pgOne('Secret', 'openoperator-gateway-stores')
  const podLabels = pgDeployment.spec.template.metadata.labels as Record<string, string>
  const jobPodLabels = [migrateJob, job].map((j) => j.spec.template.metadata.labels as Record<string, string>)
  const envVar = (c: Obj, name: string): EnvVar => (c.env as EnvVar[]).find((v) => v.name === name)!

  it('every object validates against the Kubernetes API schemas (kubernetes-models), beside the shared base files', () => {
    expect(pgFiles.sort()).toEqual(['deployment.yaml', 'ingress.yaml', 'migrate-job.yaml', 'networkpolicy.yaml', 'pdb.yaml', 'stores-secret.example.yaml'])
    for (const { file, obj } of pgObjects) {
      const Model = MODELS[`${obj.apiVersion} ${obj.kind}`]
      expect(Model, `${file}: ${obj.apiVersion} ${obj.kind} has no model here`).toBeDefined()
      expect(() => new Model!(obj).validate(), file).not.toThrow()
    }
    // the validator catches a wrong type in the new kinds too
    const broken = structuredClone(pdb)
    broken.spec.selector.matchLabels = 'app'
    expect(() => new PodDisruptionBudget(broken).validate()).toThrow()
  })

  it('two replicas, rolled one at a time (maxUnavailable 0, maxSurge 1), no ledger volume: GATEWAY_LEDGER_URL comes from a Secret', () => {
    expect(pgDeployment.spec.replicas).toBe(2)
    expect(pgDeployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } })
    expect(pgPod.volumes.some((v: Obj) => v.persistentVolumeClaim !== undefined)).toBe(false)
    for (const name of ['GATEWAY_LEDGER_URL', 'GATEWAY_REDIS_URL']) {
      const v = envVar(pgContainer, name)
      expect(v.value, name).toBeUndefined()
      expect(v.valueFrom?.secretKeyRef?.name, name).toBe(stores.metadata.name)
    }
    // the template carries placeholders only
    expect(stores.data).toBeUndefined()
    for (const value of Object.values(stores.stringData as Record<string, string>)) expect(value).toMatch(/REPLACE-/)
    expect(stores.stringData['ledger-url']).toMatch(/^postgres:\/\//)
    expect(stores.stringData['redis-url']).toMatch(/^redis:\/\//)
  })

  it('every env name is one the gateway reads, and the environment loads as production on PostgreSQL and Redis', () => {
    const source = readFileSync(join(root, 'src/config.ts'), 'utf8')
    for (const v of pgContainer.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`\\b${v.name}\\b['":]`))
    const config = deploymentConfig({}, pgPod, pgObjects)
    expect(config.production).toBe(true)
    expect(config.ledgerUrl).toBe(stores.stringData['ledger-url'])
    expect(config.redisUrl).toBe(stores.stringData['redis-url'])
    expect(config.controlEnabled).toBe(false)
    // one hop: the address ingress-nginx saw (it sets or appends it); never `true`
    expect(config.trustProxy).toBe(1)
    // behind a trusted proxy the gateway bounds no address itself: the ingress does (limit-connections below)
    expect(config.http.maxConnectionsPerAddress).toBe(0)
  })

  it('the same name, selector, ports, probes, preStop and Secret mounts as the SQLite Deployment: the shared Service and qualify Job serve it', () => {
    expect(pgDeployment.metadata.name).toBe(deployment.metadata.name)
    // switching variants is a `kubectl apply`: a Deployment's selector cannot change
    expect(pgDeployment.spec.selector).toEqual(deployment.spec.selector)
    expect(pgContainer.image).toBe(container.image)
    expect(pgContainer.ports).toEqual(container.ports)
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe', 'lifecycle']) expect(pgContainer[probe], probe).toEqual(container[probe])
    expect(pgContainer.readinessProbe.httpGet.path).toBe('/readyz')
    expect(pgContainer.livenessProbe.httpGet.path).toBe('/healthz')
    expect(pgDeployment.spec.template.metadata.annotations).toEqual(deployment.spec.template.metadata.annotations)
    expect(mountedSecretFiles(pgPod, pgContainer)).toEqual(mountedSecretFiles(pod, container))
    const service = pgOne('Service')
    expect(selects({ matchLabels: service.spec.selector }, podLabels)).toBe(true)
    expect(selects(pgDeployment.spec.selector, podLabels)).toBe(true)
    const config = deploymentConfig({}, pgPod, pgObjects)
    expect([config.port, config.metricsPort]).toEqual([portOf('http'), portOf('metrics')])
  })

  it('terminationGracePeriodSeconds outlasts preStop + the drain grace + the close (≥ the grace + 5 s)', () => {
    const config = deploymentConfig({}, pgPod, pgObjects)
    const preStopMs = Number(pgContainer.lifecycle.preStop.exec.command[1]) * 1000
    expect(pgPod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
    expect(pgPod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
  })

  it('the PodDisruptionBudget keeps one of the serving pods, and counts no Job\'s pod', () => {
    expect(pdb.spec.minAvailable).toBe(1)
    expect(pdb.spec.minAvailable).toBeLessThan(pgDeployment.spec.replicas)
    expect(selects(pdb.spec.selector, podLabels)).toBe(true)
    for (const labels of jobPodLabels) expect(selects(pdb.spec.selector, labels)).toBe(false)
  })

  it('the migrate Job runs the bin\'s `ledger migrate` once to completion, on the Deployment\'s ledger URL', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(migrateContainer.command).toEqual(['node', pkg.bin['openoperator-gateway'], 'ledger', 'migrate'])
    expect(migrateContainer.image).toBe(pgContainer.image)
    expect(migrateJob.spec.template.spec.restartPolicy).toBe('Never')
    expect(migrateJob.spec.backoffLimit).toBeGreaterThan(0)
    expect(migrateJob.spec.activeDeadlineSeconds).toBeGreaterThan(0)
    expect(envVar(migrateContainer, 'GATEWAY_LEDGER_URL').valueFrom).toEqual(envVar(pgContainer, 'GATEWAY_LEDGER_URL').valueFrom)
    // the command reads GATEWAY_LEDGER_URL and nothing else of this environment
    const source = readFileSync(join(root, 'src/cli/ledger-command.ts'), 'utf8')
    for (const v of migrateContainer.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`env\\.${v.name}\\b`))
    expect(migrateContainer.securityContext).toEqual(pgContainer.securityContext)
  })

  it('behind ingress-nginx: only the controller reaches the API port (a hop count trusts whoever connects), the metrics port stays in-cluster', () => {
    expect(selects(policy.spec.podSelector, podLabels)).toBe(true)
    expect(policy.spec.policyTypes).toEqual(['Ingress'])
    const api = policy.spec.ingress.find((r: Obj) => r.ports.some((p: Obj) => p.port === 'http'))
    expect(api.from).toEqual([{
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } }
    }])
    expect(api.ports).toEqual([{ port: 'http' }])
    const metrics = policy.spec.ingress.find((r: Obj) => r.ports.some((p: Obj) => p.port === 'metrics'))
    expect(metrics.ports).toEqual([{ port: 'metrics' }])
    for (const rule of policy.spec.ingress) for (const p of rule.ports) expect(container.ports.map((c: Obj) => c.name)).toContain(p.port)
  })

  it('the Ingress routes the API port only, with the reference nginx file\'s retries, timeouts and connection bound', () => {
    const service = pgOne('Service')
    const paths = ingress.spec.rules.flatMap((r: Obj) => r.http.paths)
    for (const p of paths) {
      expect(p.backend.service.name).toBe(service.metadata.name)
      expect(p.backend.service.port).toEqual({ name: 'http' })
    }
    expect(service.spec.ports.find((p: Obj) => p.name === 'http').targetPort).toBe('http')
    const a = ingress.metadata.annotations as Record<string, string>
    const ann = (k: string): string => a[`nginx.ingress.kubernetes.io/${k}`]!
    // reads retried on another replica; never non_idempotent, so a POST is never passed on once sent
    expect(ann('proxy-next-upstream')).toBe(ingressDirective('proxy_next_upstream')[0])
    expect(ann('proxy-next-upstream')).toBe('error timeout http_502 http_503')
    expect(Object.values(a).join(' ')).not.toMatch(/non_idempotent/)
    expect(Number(ann('proxy-next-upstream-tries'))).toBe(pgDeployment.spec.replicas)
    expect(`${ann('proxy-next-upstream-tries')}`).toBe(ingressDirective('proxy_next_upstream_tries')[0])
    // the proxy never cuts a request the gateway is still completing
    const config = deploymentConfig({}, pgPod, pgObjects)
    expect(Number(ann('proxy-read-timeout')) * 1000).toBeGreaterThan(longestRequestMs(config.upstream))
    expect(`${ann('proxy-read-timeout')}s`).toBe(ingressDirective('proxy_read_timeout')[0])
    expect(`${ann('proxy-connect-timeout')}s`).toBe(ingressDirective('proxy_connect_timeout')[0])
    expect(ann('proxy-body-size')).toBe(ingressDirective('client_max_body_size')[0])
    expect(ann('limit-connections')).toBe(ingressDirective('limit_conn')[0]!.split(/\s+/)[1])
  })
})
