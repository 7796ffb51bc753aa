// The Kubernetes manifests of docker/k8s/ (docs/operating.md#kubernetes): a kustomize base, two
// overlays (overlays/sqlite: one replica on the SQLite ledger; overlays/postgres: two or more on
// PostgreSQL) and the components that join them, every site value in the overlay's one
// settings.yaml. Both overlays are rendered with `kubectl kustomize` as an operator would (skipped,
// with the reason printed, without kustomize v5: test/helpers/kustomize.ts), and what is rendered
// is checked: each object against the Kubernetes API schemas (kubernetes-models), the settings'
// values where they belong and no placeholder of the base left, every value only a site knows a
// REPLACE-… placeholder that the deploy checklist's `grep -n REPLACE` finds in what each overlay
// renders (and nothing once they are filled in), a change of settings.yaml alone changing what
// is rendered, the Job names following the image, the Service and NetworkPolicy selecting the
// serving pods only, the metrics port open to Prometheus alone; and the values against what the
// gateway really serves and reads: probe paths answered by a running gateway, ports, metrics
// annotations, env names the code reads, *_FILE paths that land on mounted Secret items, the
// ledger on the volume, a termination grace longer than the drain, a qualify Job whose
// configuration loads, the migrate Job on the Deployment's ledger URL, and an Ingress that retries
// as the reference docker/nginx/gateway.conf does. The YAML sources are checked with yamllint and,
// where they are whole objects, with kubernetes-models without kustomize. No cluster runs here.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, parseAllDocuments, parseDocument } from 'yaml'
import { z } from 'zod'
import { loadConfig, longestRequestMs } from '../../src/config/index.js'
import { loadQualifyConfig } from '../../src/qualify/config.js'
import { CHECKS } from '../../src/qualify/run.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'
import { ingressDirective } from '../helpers/ingress.js'
import { kustomize } from '../helpers/kustomize.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const k8s = join(root, 'docker/k8s')
/** close-with-grace gives the close this long after the grace (src/cli/index.ts, docs/design.md#shutdown) */
const CLOSE_AFTER_GRACE_MS = 5000
const NAME = 'openoperator-gateway'
const SERVER = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/component': 'server' }

const K = kustomize()
if ('skip' in K) console.warn(`SKIP rendering docker/k8s/overlays (the checks of what they render): ${K.skip}`)
else console.log(`docker/k8s/overlays rendered with ${K.tool}`)
const render = (dir: string): string => { if ('skip' in K) throw new Error(K.skip); return K.render(dir) }

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are free-form YAML, validated below
type Obj = any
interface KeyRef { name: string; key: string }
interface EnvVar { name: string; value?: string; valueFrom?: { configMapKeyRef?: KeyRef; secretKeyRef?: KeyRef } }
type Loaded = Array<{ file: string; obj: Obj }>

// kubectl's YAML reader follows YAML 1.1 (0440 is octal there), so parse the same way
const parseYaml = (text: string, file: string): Loaded => parseAllDocuments(text, { version: '1.1' }).map((doc) => {
  if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`)
  return { file, obj: doc.toJS() as Obj }
}).filter((o) => o.obj !== null)
const load = (file: string): Loaded => parseYaml(readFileSync(join(k8s, file), 'utf8'), file)
const oneOf = (from: Loaded, kind: string, name?: string): Obj => {
  const found = from.filter((o) => o.obj.kind === kind && (name === undefined || o.obj.metadata.name === name))
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1)
  return found[0]!.obj
}
/** every .yaml file under docker/k8s, relative to it */
const sources = (readdirSync(k8s, { recursive: true }) as string[]).filter((f) => f.endsWith('.yaml')).map((f) => f.split('\\').join('/')).sort()

/**
 * monitoring.coreos.com/v1 ServiceMonitor, the fields this repository uses, by hand: kubernetes-models
 * types only the core API. Strict, so a misspelt key (`endpoint`, `podTargetLabel`) fails here
 * rather than being ignored by the operator.
 */
const LabelSelectorSchema = z.strictObject({ matchLabels: z.record(z.string(), z.string()) })
const ServiceMonitorSchema = z.strictObject({
  apiVersion: z.literal('monitoring.coreos.com/v1'),
  kind: z.literal('ServiceMonitor'),
  metadata: z.strictObject({ name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/), namespace: z.string().optional(), labels: z.record(z.string(), z.string()).optional() }),
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
const validateAll = (objects: Loaded): void => {
  for (const { file, obj } of objects) {
    const Model = MODELS[`${obj.apiVersion as string} ${obj.kind as string}`]
    expect(Model, `${file}: ${obj.apiVersion as string} ${obj.kind as string} has no model here`).toBeDefined()
    expect(() => new Model!(obj).validate(), `${file}: ${obj.kind as string} ${obj.metadata?.name as string}`).not.toThrow()
  }
}

/** the Secrets, as their templates give them (the real ones are made outside the repository) */
const secretTemplates = [...load('base/secret.example.yaml'), ...load('components/postgres/stores-secret.example.yaml')]
const gatewaySecret = oneOf(secretTemplates, 'Secret', NAME)
const SAMPLE_SECRETS: Record<string, string> = {
  'upstream-key': 'sample-upstream-key\n',
  'callers.json': JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read', 'admin'] }])
}

/** the container's environment as the kubelet would build it (ConfigMap references resolved in `from`, Secrets from their templates) */
function envOf (c: Obj, from: Loaded, overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const v of c.env as EnvVar[]) {
    const ref = v.valueFrom?.configMapKeyRef
    const secretRef = v.valueFrom?.secretKeyRef
    if (ref !== undefined) {
      const data = oneOf(from, 'ConfigMap', ref.name).data as Record<string, string>
      expect(Object.keys(data), `${v.name}: ${ref.name}`).toContain(ref.key)
      env[v.name] = data[ref.key]!
    } else if (secretRef !== undefined) {
      const stringData = oneOf(secretTemplates, 'Secret', secretRef.name).stringData
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
    expect(volume.secret.secretName).toBe(gatewaySecret.metadata.name)
    expect(m.readOnly).toBe(true)
    for (const item of volume.secret.items) out.set(posix.join(m.mountPath, item.path), item.key)
  }
  return out
}

/** a Deployment's configuration as the gateway loads it, the Secret's files holding sample values */
function deploymentConfig (podSpec: Obj, from: Loaded, overrides: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  const c = podSpec.containers[0]
  const files = mountedSecretFiles(podSpec, c)
  const read = (path: string): string => {
    const key = files.get(path)
    if (key === undefined) throw new Error(`${path} is not a mounted Secret item`)
    expect(Object.keys(gatewaySecret.stringData)).toContain(key)
    return SAMPLE_SECRETS[key]!
  }
  return loadConfig(envOf(c, from, { OPENOPERATOR_URL: 'https://openoperator.example', ...overrides }), { readFile: read })
}

/** whether a label selector's matchLabels all hold for these labels */
const selects = (selector: Obj, labels: Record<string, string>): boolean =>
  Object.entries(selector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v)

const settingsOf = (overlay: string): Obj => oneOf(load(`overlays/${overlay}/settings.yaml`), 'GatewaySettings', 'settings').spec

/**
 * settings.yaml's values that only the site knows (docs/operating.md#deploy-checklist): each is a
 * REPLACE-… placeholder in the repository, so the checklist's `grep -n REPLACE` finds it in the
 * render until it is filled in. A field under a name here covers every value beneath it (the
 * NetworkPolicy peers' labels).
 */
const SITE_FIELDS = ['image', 'openoperatorUrl', 'expectedSourceSha', 'storageClassName', 'ingress.className', 'ingress.host', 'networkPolicy.ingressController', 'networkPolicy.prometheus']
/** the working defaults the settings files' header names: no placeholder */
const DEFAULT_FIELDS = ['namespace', 'upstreamAuthScheme', 'controlEnabled', 'replicas', 'ingress.tlsSecretName']

/** every scalar of a settings spec with its dotted path (list items by index) */
function leaves (value: unknown, path = ''): Array<[string, string | number | boolean]> {
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, path === '' ? k : `${path}.${k}`))
  return [[path, value as string | number | boolean]]
}
const fieldOf = (path: string, fields: string[]): string | undefined => fields.find((f) => path === f || path.startsWith(`${f}.`))

/** docs/operating.md's placeholder check (deploy checklist, step 4), as written there */
const PLACEHOLDER_CHECK = (() => {
  const found = [...readFileSync(join(root, 'docs/operating.md'), 'utf8').matchAll(/^ +(grep -n REPLACE gateway\.yaml) +#/gm)].map((m) => m[1]!)
  expect(found).toEqual(['grep -n REPLACE gateway.yaml'])
  return found[0]!
})()
/** the lines the check prints for a render saved as gateway.yaml, as an operator runs it; none when grep finds nothing */
function placeholderCheck (rendered: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-check-'))
  try {
    writeFileSync(join(dir, 'gateway.yaml'), rendered)
    const r = spawnSync('bash', ['-c', PLACEHOLDER_CHECK], { cwd: dir, encoding: 'utf8' })
    // grep: 0 found, 1 nothing found, 2 an error
    expect(r.status, r.stderr).not.toBe(2)
    expect(r.status === 0).toBe(r.stdout !== '')
    return r.stdout.split('\n').filter((l) => l !== '')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A copy of docker/k8s in a temporary directory with the overlay's settings.yaml edited (`edit`
 * sets values at paths under `spec`, comments kept), rendered; nothing else of the copy changes.
 */
function renderEdited (overlay: string, edit: Array<[string[], unknown]>): { text: string; objects: Loaded } {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-k8s-'))
  try {
    cpSync(k8s, dir, { recursive: true })
    const file = join(dir, 'overlays', overlay, 'settings.yaml')
    const doc = parseDocument(readFileSync(file, 'utf8'))
    for (const [path, value] of edit) {
      if (value === undefined) doc.deleteIn(['spec', ...path])
      else doc.setIn(['spec', ...path], value)
    }
    writeFileSync(file, doc.toString())
    // the copy differs from docker/k8s in that one file alone
    for (const f of sources) {
      const same = readFileSync(join(dir, f), 'utf8') === readFileSync(join(k8s, f), 'utf8')
      expect(same, f).toBe(f !== `overlays/${overlay}/settings.yaml`)
    }
    const text = render(join(dir, 'overlays', overlay))
    return { text, objects: parseYaml(text, `${overlay} (edited)`) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const yamllint = (ctx: { skip: () => void }): boolean => {
  const found = spawnSync('yamllint', ['--version'], { encoding: 'utf8' })
  if (found.error !== undefined || found.status !== 0) {
    console.log('yamllint is not installed (Debian: apt-get install yamllint); the YAML lint is skipped')
    ctx.skip()
    return false
  }
  return true
}

describe('docker/k8s sources (without kustomize)', () => {
  // whole objects; kustomization.yaml, name-references.yaml, the settings and the patches are kustomize's input
  const OBJECT_FILES = [
    'base/deployment.yaml', 'base/ingress.yaml', 'base/networkpolicy.yaml', 'base/qualify-job.yaml', 'base/secret.example.yaml',
    'base/service.yaml', 'base/servicemonitor.yaml', 'components/postgres/migrate-job.yaml', 'components/postgres/pdb.yaml',
    'components/postgres/stores-secret.example.yaml', 'components/sqlite/pvc.yaml'
  ]
  const INPUT_FILES = [
    'base/kustomization.yaml', 'base/name-references.yaml', 'components/postgres/deployment-patch.yaml', 'components/postgres/kustomization.yaml',
    'components/settings/kustomization.yaml', 'components/sqlite/deployment-patch.yaml', 'components/sqlite/kustomization.yaml',
    'overlays/postgres/kustomization.yaml', 'overlays/postgres/settings.yaml', 'overlays/sqlite/kustomization.yaml', 'overlays/sqlite/settings.yaml'
  ]

  it('every whole object validates against the Kubernetes API schemas (kubernetes-models), and the validators catch a wrong type', () => {
    expect(sources).toEqual([...OBJECT_FILES, ...INPUT_FILES].sort())
    const objects = OBJECT_FILES.flatMap(load)
    validateAll(objects)
    const broken = structuredClone(oneOf(objects, 'Deployment'))
    broken.spec.template.spec.containers[0].ports[0].containerPort = '8080'
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/)
    const pdb = structuredClone(oneOf(objects, 'PodDisruptionBudget'))
    pdb.spec.selector.matchLabels = 'app'
    expect(() => new PodDisruptionBudget(pdb).validate()).toThrow()
    // and so does the hand-written ServiceMonitor check, on a wrong type and on a misspelt key
    const monitor = oneOf(objects, 'ServiceMonitor')
    for (const bad of [{ ...monitor, spec: { ...monitor.spec, endpoints: 'metrics' } }, { ...monitor, spec: { ...monitor.spec, endpoint: monitor.spec.endpoints } }]) {
      expect(() => new ServiceMonitor(bad).validate()).toThrow()
    }
  })

  it('yamllint (strict) accepts every source file', (ctx) => {
    if (!yamllint(ctx)) return
    execFileSync('yamllint', ['-s', '-c', join(k8s, '.yamllint'), k8s], { encoding: 'utf8' })
  })

  it('the two settings files hold the same site values, each variant its own one more, typed as they land', () => {
    const sqlite = settingsOf('sqlite')
    const postgres = settingsOf('postgres')
    const { storageClassName, ...sqliteShared } = sqlite
    const { replicas, ...postgresShared } = postgres
    expect(Object.keys(sqliteShared).sort()).toEqual(Object.keys(postgresShared).sort())
    expect(Object.keys(sqliteShared).sort()).toEqual(['controlEnabled', 'expectedSourceSha', 'image', 'ingress', 'namespace', 'networkPolicy', 'openoperatorUrl', 'upstreamAuthScheme'])
    expect(typeof storageClassName).toBe('string')
    expect(replicas).toBeGreaterThanOrEqual(2)
    for (const s of [sqlite, postgres]) {
      // an env value is a string: a YAML `false` would not be one
      expect(s.controlEnabled).toBe('false')
      expect(s.expectedSourceSha).toMatch(/^REPLACE-/)
      expect(Object.keys(s.ingress).sort()).toEqual(['className', 'host', 'tlsSecretName'])
      expect(Object.keys(s.networkPolicy).sort()).toEqual(['ingressController', 'prometheus'])
      for (const peers of Object.values(s.networkPolicy) as Obj[][]) expect(peers.length).toBeGreaterThan(0)
    }
    // kustomize reads them and never applies them
    for (const o of ['sqlite', 'postgres']) expect(oneOf(load(`overlays/${o}/settings.yaml`), 'GatewaySettings').metadata.annotations['config.kubernetes.io/local-config']).toBe('true')
  })

  it('every value only a site knows is a REPLACE-… placeholder; the rest are the working defaults the header names', () => {
    for (const o of ['sqlite', 'postgres']) {
      const header = readFileSync(join(k8s, 'overlays', o, 'settings.yaml'), 'utf8').split('\napiVersion:')[0]!.replaceAll('\n# ', ' ')
      for (const [path, value] of leaves(settingsOf(o))) {
        const site = fieldOf(path, SITE_FIELDS)
        const fallback = fieldOf(path, DEFAULT_FIELDS)
        expect(site !== undefined || fallback !== undefined, `${o}: ${path} is neither a site value nor a default`).toBe(true)
        if (site !== undefined) expect(String(value), `${o}: ${path}`).toMatch(/^(https:\/\/)?REPLACE-[a-z0-9-]+/)
        else {
          expect(String(value), `${o}: ${path}`).not.toContain('REPLACE')
          expect(header, `${o}: the header names the default ${path}`).toContain(path)
        }
      }
    }
  })

  it('the Secret templates carry no real value', () => {
    expect(gatewaySecret.stringData['upstream-key']).toMatch(/^REPLACE-/)
    expect(JSON.parse(gatewaySecret.stringData['callers.json'])[0].tokenSha256).toMatch(/^REPLACE-/)
    const stores = oneOf(secretTemplates, 'Secret', `${NAME}-stores`)
    for (const s of [gatewaySecret, stores]) expect(s.data).toBeUndefined()
    for (const value of Object.values(stores.stringData as Record<string, string>)) expect(value).toMatch(/REPLACE-/)
    expect(stores.stringData['ledger-url']).toMatch(/^postgres:\/\//)
    expect(stores.stringData['redis-url']).toMatch(/^redis:\/\//)
  })

  describe('against a running gateway', () => {
    let sim: Simulator
    beforeAll(async () => { sim = await startSimulator({ secret: 'k8s-test-secret-0123' }) })
    afterAll(async () => { await sim.close() })

    it('the probe paths answer 200 on the API port, the scrape paths on the metrics port', async () => {
      const deployment = oneOf(load('base/deployment.yaml'), 'Deployment')
      const container = deployment.spec.template.spec.containers[0]
      const gw = await startGateway({ simulator: sim })
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
        const res = await request(`${gw.url}${probe.httpGet.path as string}`)
        await res.body.text()
        expect(res.statusCode, probe.httpGet.path).toBe(200)
      }
      for (const path of [deployment.spec.template.metadata.annotations['prometheus.io/path'], oneOf(load('base/servicemonitor.yaml'), 'ServiceMonitor').spec.endpoints[0].path]) {
        const scrape = await request(`${gw.metricsUrl}${path as string}`)
        expect(scrape.statusCode, path).toBe(200)
        expect(await scrape.body.text()).toContain('gateway_http_requests_total')
      }
    })
  })
})

describe.skipIf('skip' in K)('docker/k8s/overlays, rendered', () => {
  // rendered before the tests (not while they are collected): a render that fails fails each test, by name
  const texts: Record<string, string> = {}
  let sq: Loaded = []
  let pg: Loaded = []
  let both: ReadonlyArray<readonly ['sqlite' | 'postgres', Loaded]> = []
  beforeAll(() => {
    for (const o of ['sqlite', 'postgres']) texts[o] = render(join(k8s, 'overlays', o))
    sq = parseYaml(texts.sqlite!, 'overlays/sqlite')
    pg = parseYaml(texts.postgres!, 'overlays/postgres')
    both = [['sqlite', sq], ['postgres', pg]]
  })
  const deploymentOf = (from: Loaded): Obj => oneOf(from, 'Deployment', NAME)
  const jobOf = (from: Loaded, component: string): Obj => {
    const found = from.filter((o) => o.obj.kind === 'Job' && o.obj.metadata.labels['app.kubernetes.io/component'] === component)
    expect(found, `the ${component} Job`).toHaveLength(1)
    return found[0]!.obj
  }
  const qualifyJobOf = (from: Loaded): Obj => jobOf(from, 'qualify')
  const migrateJobOf = (from: Loaded): Obj => jobOf(from, 'migrate')
  const jobsOf = (from: Loaded): Obj[] => from.filter((o) => o.obj.kind === 'Job').map((o) => o.obj)
  const containerOf = (workload: Obj): Obj => workload.spec.template.spec.containers[0]
  const envVar = (c: Obj, name: string): EnvVar => (c.env as EnvVar[]).find((v) => v.name === name)!

  describe('both overlays', () => {
    it('render the expected objects, each valid against the Kubernetes API schemas (kubernetes-models)', () => {
      const kinds = (from: Loaded): string[] => from.map((o) => o.obj.kind as string).sort()
      // no ServiceMonitor: applied on its own where the prometheus-operator runs (base/kustomization.yaml)
      expect(kinds(sq)).toEqual(['ConfigMap', 'ConfigMap', 'Deployment', 'Ingress', 'Job', 'NetworkPolicy', 'PersistentVolumeClaim', 'Service'])
      expect(kinds(pg)).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap', 'Deployment', 'Ingress', 'Job', 'Job', 'NetworkPolicy', 'PodDisruptionBudget', 'Service'])
      validateAll(sq)
      validateAll(pg)
    })

    it('yamllint accepts what they render (kustomize\'s own list indentation allowed)', (ctx) => {
      if (!yamllint(ctx)) return
      const config = readFileSync(join(k8s, '.yamllint'), 'utf8').replace('rules:\n', 'rules:\n  indentation:\n    indent-sequences: whatever\n')
      expect(config).toContain('indent-sequences: whatever')
      for (const [o] of both) execFileSync('yamllint', ['-s', '-d', config, '-'], { input: texts[o], encoding: 'utf8' })
    })

    it('every value of settings.yaml lands where it belongs, and no placeholder of the base is left', () => {
      for (const [o, from] of both) {
        const s = settingsOf(o)
        for (const { obj } of from) expect(obj.metadata.namespace, `${o}: ${obj.kind as string} ${obj.metadata.name as string}`).toBe(s.namespace)
        for (const w of [deploymentOf(from), ...jobsOf(from)]) for (const c of w.spec.template.spec.containers) expect(c.image, `${o}: ${w.metadata.name as string}`).toBe(s.image)
        expect(texts[o]).not.toContain('openoperator-gateway:local')
        const gatewayEnv = envOf(containerOf(deploymentOf(from)), from)
        expect(gatewayEnv.OPENOPERATOR_URL).toBe(s.openoperatorUrl)
        expect(gatewayEnv.UPSTREAM_AUTH_SCHEME).toBe(s.upstreamAuthScheme)
        expect(gatewayEnv.GATEWAY_CONTROL_ENABLED).toBe(s.controlEnabled)
        const qualifyEnv = envOf(containerOf(qualifyJobOf(from)), from)
        expect([qualifyEnv.OPENOPERATOR_URL, qualifyEnv.UPSTREAM_AUTH_SCHEME, qualifyEnv.EXPECTED_SOURCE_SHA]).toEqual([s.openoperatorUrl, s.upstreamAuthScheme, s.expectedSourceSha])
        const ingress = oneOf(from, 'Ingress')
        expect(ingress.spec.ingressClassName).toBe(s.ingress.className)
        expect(ingress.spec.rules.map((r: Obj) => r.host)).toEqual([s.ingress.host])
        expect(ingress.spec.tls).toEqual([{ hosts: [s.ingress.host], secretName: s.ingress.tlsSecretName }])
        const policy = oneOf(from, 'NetworkPolicy')
        expect(policy.spec.ingress).toEqual([
          { from: s.networkPolicy.ingressController, ports: [{ port: 'http' }] },
          { from: s.networkPolicy.prometheus, ports: [{ port: 'metrics' }] }
        ])
      }
      expect(oneOf(sq, 'PersistentVolumeClaim').spec.storageClassName).toBe(settingsOf('sqlite').storageClassName)
      expect(deploymentOf(pg).spec.replicas).toBe(settingsOf('postgres').replicas)
    })

    it('the deploy checklist\'s placeholder check lists every site value in what each overlay renders, and no other line', () => {
      for (const [o] of both) {
        const site = leaves(settingsOf(o)).filter(([path]) => fieldOf(path, SITE_FIELDS) !== undefined)
        const listed = placeholderCheck(texts[o]!)
        for (const [path, value] of site) expect(listed.some((l) => l.includes(String(value))), `${o}: ${path} (${String(value)})`).toBe(true)
        // each line listed is a site value's, with grep's line number: the render holds no other REPLACE
        for (const line of listed) {
          expect(line, o).toMatch(/^\d+:/)
          expect(site.some(([, value]) => line.includes(String(value))), `${o}: ${line}`).toBe(true)
        }
        console.log(`docker/k8s/overlays/${o}: the placeholder check lists ${listed.length} lines for ${site.length} site values`)
      }
    })

    // the next three render an edited copy per case, fourteen kubectl runs in all: tagged slow, npm test's
    it('a change of settings.yaml alone changes every site value rendered, and leaves none of the old ones', { tags: ['slow'] }, () => {
      const next = {
        image: 'registry.site.test:5000/team/gateway@sha256:' + 'b'.repeat(64),
        namespace: 'gw-site',
        openoperatorUrl: 'https://operator.site.test/prefix',
        upstreamAuthScheme: 'x-api-key',
        expectedSourceSha: 'c'.repeat(40),
        controlEnabled: 'true',
        ingress: { className: 'site-nginx', host: 'gateway.site.test', tlsSecretName: 'gateway-site-tls' },
        networkPolicy: {
          ingressController: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'edge' } }, podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'edge-controller' } } }],
          prometheus: [{ namespaceSelector: { matchLabels: { team: 'observability' } }, podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'k8s' } } }, { ipBlock: { cidr: '10.99.0.0/24' } }]
        }
      }
      for (const [o, before] of both) {
        const extra: Record<string, unknown> = o === 'sqlite' ? { storageClassName: 'site-ssd' } : { replicas: 3 }
        const edits = Object.entries({ ...next, ...extra }).map(([k, v]) => [[k], v] as [string[], unknown])
        const { text, objects } = renderEdited(o, edits)
        const old = settingsOf(o)
        // the old values are gone from the output, whichever field they were in
        const oldSiteValues = leaves(old).filter(([path]) => fieldOf(path, SITE_FIELDS) !== undefined).map(([, value]) => String(value))
        for (const value of [...oldSiteValues, old.ingress.tlsSecretName, `namespace: ${old.namespace as string}`]) {
          expect(text, `${o}: ${String(value)}`).not.toContain(value)
        }
        // every site value filled in: the checklist's placeholder check prints nothing
        expect(placeholderCheck(text), o).toEqual([])
        for (const { obj } of objects) expect(obj.metadata.namespace).toBe(next.namespace)
        for (const w of [deploymentOf(objects), ...jobsOf(objects)]) for (const c of w.spec.template.spec.containers) expect(c.image).toBe(next.image)
        const env = envOf(containerOf(deploymentOf(objects)), objects)
        expect([env.OPENOPERATOR_URL, env.UPSTREAM_AUTH_SCHEME, env.GATEWAY_CONTROL_ENABLED]).toEqual([next.openoperatorUrl, next.upstreamAuthScheme, 'true'])
        expect(envOf(containerOf(qualifyJobOf(objects)), objects).EXPECTED_SOURCE_SHA).toBe(next.expectedSourceSha)
        const ingress = oneOf(objects, 'Ingress')
        expect([ingress.spec.ingressClassName, ingress.spec.rules[0].host, ingress.spec.tls]).toEqual([next.ingress.className, next.ingress.host, [{ hosts: [next.ingress.host], secretName: next.ingress.tlsSecretName }]])
        expect(oneOf(objects, 'NetworkPolicy').spec.ingress.map((r: Obj) => r.from)).toEqual([next.networkPolicy.ingressController, next.networkPolicy.prometheus])
        if (o === 'sqlite') expect(oneOf(objects, 'PersistentVolumeClaim').spec.storageClassName).toBe('site-ssd')
        else expect(deploymentOf(objects).spec.replicas).toBe(3)
        // the rest is what the shipped settings render: the same objects, the same kinds
        expect(objects.map((x) => `${x.obj.kind as string}`)).toEqual(before.map((x) => `${x.obj.kind as string}`))
        validateAll(objects)
      }
    })

    it('a setting left out stops the render, naming it: nothing is rendered half-set', { tags: ['slow'] }, () => {
      for (const [o, field] of [['sqlite', 'storageClassName'], ['postgres', 'replicas'], ['postgres', 'image'], ['sqlite', 'networkPolicy']] as const) {
        expect(() => renderEdited(o, [[[field], undefined]]), `${o}: ${field}`).toThrow(new RegExp(`fieldPath \`spec\\.${field}[^\`]*\` is missing`))
      }
    })

    it('each Job is named after the image and the settings it runs with: a new image, a new Job (no delete before a rollout); the same settings, the same Job', { tags: ['slow'] }, () => {
      for (const [o, from] of both) {
        const again = parseYaml(render(join(k8s, 'overlays', o)), o)
        expect(jobsOf(again).map((j) => j.metadata.name)).toEqual(jobsOf(from).map((j) => j.metadata.name))
        const { objects } = renderEdited(o, [[['image'], 'registry.example/openoperator-gateway:1.0.1']])
        const jobs = jobsOf(from)
        const newJobs = jobsOf(objects)
        expect(newJobs).toHaveLength(jobs.length)
        for (const [i, job] of jobs.entries()) {
          const renamed = newJobs[i]
          const base = job.metadata.labels['app.kubernetes.io/component'] === 'qualify' ? `${NAME}-qualify` : `${NAME}-ledger-migrate`
          expect(job.metadata.name).toMatch(new RegExp(`^${base}-[a-z0-9]{10}$`))
          expect(renamed.metadata.name).toMatch(new RegExp(`^${base}-[a-z0-9]{10}$`))
          expect(renamed.metadata.name, `${o}: ${base}`).not.toBe(job.metadata.name)
          // named as the ConfigMap that carries the image (name-references.yaml)
          expect(oneOf(objects, 'ConfigMap', renamed.metadata.name).data.GATEWAY_IMAGE).toBe('registry.example/openoperator-gateway:1.0.1')
        }
        // a setting the qualify Job runs with renames it too: its template changes with it
        const bySha = renderEdited(o, [[['expectedSourceSha'], 'd'.repeat(40)]]).objects
        expect(qualifyJobOf(bySha).metadata.name).not.toBe(qualifyJobOf(from).metadata.name)
        // the Deployment keeps its name; its pods roll through the ConfigMap's new hash when a setting it reads changes
        expect(deploymentOf(objects).metadata.name).toBe(NAME)
        const byUrl = renderEdited(o, [[['openoperatorUrl'], 'https://other.example']]).objects
        expect(envVar(containerOf(deploymentOf(byUrl)), 'OPENOPERATOR_URL').valueFrom!.configMapKeyRef!.name).not.toBe(envVar(containerOf(deploymentOf(from)), 'OPENOPERATOR_URL').valueFrom!.configMapKeyRef!.name)
        // a finished Job goes by itself
        for (const job of jobs) expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0)
      }
    })

    it('the Service, the NetworkPolicy and the Deployment select the serving pods only, never a Job\'s', () => {
      for (const [o, from] of both) {
        const deployment = deploymentOf(from)
        const podLabels = deployment.spec.template.metadata.labels as Record<string, string>
        expect(podLabels).toEqual(SERVER)
        const jobPodLabels = jobsOf(from).map((j) => j.spec.template.metadata.labels as Record<string, string>)
        expect(jobPodLabels.length).toBeGreaterThan(0)
        const service = oneOf(from, 'Service')
        const selectors = [{ matchLabels: service.spec.selector }, oneOf(from, 'NetworkPolicy').spec.podSelector, deployment.spec.selector]
        if (o === 'postgres') selectors.push(oneOf(from, 'PodDisruptionBudget').spec.selector, deployment.spec.template.spec.topologySpreadConstraints[0].labelSelector)
        for (const selector of selectors) {
          expect(selects(selector, podLabels), `${o}: ${JSON.stringify(selector)}`).toBe(true)
          for (const labels of jobPodLabels) expect(selects(selector, labels), `${o}: ${JSON.stringify(selector)} selects ${JSON.stringify(labels)}`).toBe(false)
        }
      }
    })

    it('the NetworkPolicy: the API port from the ingress controller alone, the metrics port from Prometheus alone, nothing else', () => {
      for (const [o, from] of both) {
        const policy = oneOf(from, 'NetworkPolicy')
        const container = containerOf(deploymentOf(from))
        expect(policy.spec.policyTypes).toEqual(['Ingress'])
        const s = settingsOf(o)
        const ports = container.ports.map((p: Obj) => p.name)
        expect(ports.sort()).toEqual(['http', 'metrics'])
        for (const rule of policy.spec.ingress) {
          // a rule without `from` lets every source in; without `ports`, every port
          expect(rule.from?.length, `${o}: a rule with no source`).toBeGreaterThan(0)
          expect(rule.ports).toHaveLength(1)
          expect(ports).toContain(rule.ports[0].port)
        }
        const sourcesOf = (port: string): Obj[] => policy.spec.ingress.filter((r: Obj) => r.ports.some((p: Obj) => p.port === port)).flatMap((r: Obj) => r.from)
        expect(sourcesOf('http')).toEqual(s.networkPolicy.ingressController)
        expect(sourcesOf('metrics')).toEqual(s.networkPolicy.prometheus)
        // each peer is a namespace and pods in it (a podSelector alone means the policy's own namespace)
        for (const peer of [...sourcesOf('http'), ...sourcesOf('metrics')]) {
          expect(Object.keys(peer.namespaceSelector.matchLabels).length).toBeGreaterThan(0)
          expect(Object.keys(peer.podSelector.matchLabels).length).toBeGreaterThan(0)
        }
      }
    })

    it('every env name is one the gateway reads, the environment loads as production, the *_FILE paths land on mounted Secret items', () => {
      // every file of the configuration (src/config/): the names it reads are spread over them
      const configDir = join(root, 'src/config')
      const source = readdirSync(configDir).filter((f) => f.endsWith('.ts')).sort().map((f) => readFileSync(join(configDir, f), 'utf8')).join('\n')
      for (const [, from] of both) {
        const pod = deploymentOf(from).spec.template.spec
        const container = pod.containers[0]
        for (const v of container.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`\\b${v.name}\\b['":]`))
        const config = deploymentConfig(pod, from)
        expect(config.production).toBe(true)
        expect(config.upstream.secret).toBe('sample-upstream-key')
        expect(config.callers?.map((c) => c.name)).toEqual(['ops'])
        expect(config.controlEnabled).toBe(false) // enabled only after the remote's control support is qualified
        // one hop: the address ingress-nginx saw (it sets or appends it); never `true`
        expect(config.trustProxy).toBe(1)
        // behind a trusted proxy the gateway bounds no address itself: the ingress does (limit-connections)
        expect(config.http.maxConnectionsPerAddress).toBe(0)
        const files = mountedSecretFiles(pod, container)
        const env = envOf(container, from)
        for (const name of ['SPYNEL_AGENT_ZERO_API_KEY_FILE', 'GATEWAY_CALLERS_FILE']) expect(files.has(env[name]!), name).toBe(true)
        const volume = pod.volumes.find((v: Obj) => v.secret !== undefined)
        expect(volume.secret.defaultMode).toBe(0o440) // group-readable: fsGroup is the container's group
        expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup)
      }
    })

    it('ports: the API and metrics ports are what the gateway listens on, annotated for Prometheus, targeted by the Service; probes on the API port', () => {
      for (const [, from] of both) {
        const deployment = deploymentOf(from)
        const container = containerOf(deployment)
        const portOf = (name: string): number => container.ports.find((p: Obj) => p.name === name).containerPort
        const config = deploymentConfig(deployment.spec.template.spec, from)
        expect([portOf('http'), portOf('metrics')]).toEqual([config.port, config.metricsPort])
        // the defaults agree too: a Deployment without PORT/METRICS_PORT would listen there
        const defaults = loadConfig({})
        expect([defaults.port, defaults.metricsPort]).toEqual([portOf('http'), portOf('metrics')])
        const annotations = deployment.spec.template.metadata.annotations
        expect(annotations['prometheus.io/scrape']).toBe('true')
        expect(Number(annotations['prometheus.io/port'])).toBe(portOf('metrics'))
        const service = oneOf(from, 'Service')
        for (const p of service.spec.ports) expect(container.ports.map((c: Obj) => c.name)).toContain(p.targetPort)
        for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) expect(probe.httpGet.port).toBe('http')
        expect(container.readinessProbe.httpGet.path).toBe('/readyz')
        expect(container.livenessProbe.httpGet.path).toBe('/healthz')
      }
    })

    it('terminationGracePeriodSeconds outlasts preStop + the drain grace + the close', () => {
      for (const [, from] of both) {
        const pod = deploymentOf(from).spec.template.spec
        const config = deploymentConfig(pod, from)
        const preStopMs = Number(pod.containers[0].lifecycle.preStop.exec.command[1]) * 1000
        expect(config.shutdownGraceMs).toBe(43_000) // the derived default (docs/design.md#shutdown)
        expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS)
      }
    })

    it('the qualify Job runs the bin\'s qualify, once, bounded, with the upstream key only; its configuration loads', () => {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
      for (const [, from] of both) {
        const job = qualifyJobOf(from)
        const jobPod = job.spec.template.spec
        const jobContainer = jobPod.containers[0]
        expect(jobContainer.command).toEqual(['node', pkg.bin['openoperator-gateway'], 'qualify'])
        expect(jobContainer.image).toBe(containerOf(deploymentOf(from)).image)
        expect(jobPod.restartPolicy).toBe('Never')
        expect(job.spec.backoffLimit).toBe(0)
        const files = mountedSecretFiles(jobPod, jobContainer)
        expect([...files.values()]).toEqual(['upstream-key'])
        const source = readFileSync(join(root, 'src/qualify/config.ts'), 'utf8')
        for (const v of jobContainer.env as EnvVar[]) expect(source, v.name).toMatch(new RegExp(`\\b${v.name}\\b`))
        const env = envOf(jobContainer, from, { EXPECTED_SOURCE_SHA: 'f'.repeat(40) })
        const config = loadQualifyConfig(env, { readFile: (p) => { expect(files.has(p)).toBe(true); return 'sample-upstream-key\n' } })
        expect(config.secret).toBe('sample-upstream-key')
        // every assertion is bounded: the Job's deadline covers them all
        expect(job.spec.activeDeadlineSeconds * 1000).toBeGreaterThan(CHECKS.length * config.assertionTimeoutMs)
        // the shipped settings' placeholder SHA makes qualify refuse to run rather than pass by accident
        expect(() => loadQualifyConfig(envOf(jobContainer, from), { readFile: () => 'k' })).toThrow(/EXPECTED_SOURCE_SHA/)
      }
    })

    it('the ServiceMonitor (applied into the overlay\'s namespace) scrapes the Service\'s metrics port at the annotated path, under a job and a label the alert rules select', () => {
      const rules = parse(readFileSync(join(root, 'docker/prometheus/rules.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }
      const down = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'GatewayDown')!.expr
      const jobRegex = /up\{job=~"([^"]+)"\}/.exec(down)?.[1]
      expect(jobRegex).toBeDefined()
      for (const [, from] of both) {
        const podTemplate = deploymentOf(from).spec.template
        const monitor = oneOf(load('base/servicemonitor.yaml'), 'ServiceMonitor')
        const service = oneOf(from, 'Service')
        // a ServiceMonitor selects Services by their labels, in its own namespace (kubectl -n <the overlay's>)
        expect(selects(monitor.spec.selector, service.metadata.labels)).toBe(true)
        expect(monitor.metadata.namespace).toBeUndefined()
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

    it('the Ingress routes the API port only, with the reference nginx file\'s retries, timeouts and connection bound', () => {
      for (const [o, from] of both) {
        const ingress = oneOf(from, 'Ingress')
        const service = oneOf(from, 'Service')
        const deployment = deploymentOf(from)
        for (const p of ingress.spec.rules.flatMap((r: Obj) => r.http.paths)) {
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
        // the first replica and one other (the reference file's count, for its two); one with one replica
        expect(Number(ann('proxy-next-upstream-tries')), o).toBe(Math.min(deployment.spec.replicas, Number(ingressDirective('proxy_next_upstream_tries')[0])))
        // the proxy never cuts a request the gateway is still completing
        const config = deploymentConfig(deployment.spec.template.spec, from)
        expect(Number(ann('proxy-read-timeout')) * 1000).toBeGreaterThan(longestRequestMs(config.upstream))
        expect(`${ann('proxy-read-timeout')}s`).toBe(ingressDirective('proxy_read_timeout')[0])
        expect(`${ann('proxy-connect-timeout')}s`).toBe(ingressDirective('proxy_connect_timeout')[0])
        expect(ann('proxy-body-size')).toBe(ingressDirective('client_max_body_size')[0])
        expect(ann('limit-connections')).toBe(ingressDirective('limit_conn')[0]!.split(/\s+/)[1])
      }
    })

    it('the two Deployments differ in the ledger, the count and the strategy alone: switching overlays keeps the name and the selector', () => {
      const strip = (d: Obj): Obj => {
        const c = structuredClone(d)
        delete c.spec.replicas
        delete c.spec.strategy
        delete c.spec.minReadySeconds
        delete c.spec.template.spec.topologySpreadConstraints
        const container = c.spec.template.spec.containers[0]
        container.env = container.env.filter((v: EnvVar) => !['GATEWAY_LEDGER_URL', 'GATEWAY_REDIS_URL'].includes(v.name))
        container.volumeMounts = container.volumeMounts.filter((m: Obj) => m.name !== 'ledger')
        c.spec.template.spec.volumes = c.spec.template.spec.volumes.filter((v: Obj) => v.name !== 'ledger')
        return c
      }
      expect(strip(deploymentOf(pg))).toEqual(strip(deploymentOf(sq)))
    })
  })

  describe('overlays/sqlite: one replica on the SQLite ledger', () => {
    it('one replica, replaced with Recreate, the ledger file on the PersistentVolumeClaim at /app/data (the image\'s VOLUME)', () => {
      const deployment = deploymentOf(sq)
      const container = containerOf(deployment)
      const pod = deployment.spec.template.spec
      expect(deployment.spec.replicas).toBe(1)
      expect(deployment.spec.strategy).toEqual({ type: 'Recreate' })
      const env = envOf(container, sq)
      expect(env.GATEWAY_LEDGER_URL).toBe('sqlite:/app/data/ledger.db')
      expect(env.GATEWAY_REDIS_URL).toBeUndefined()
      const ledgerDir = posix.dirname(env.GATEWAY_LEDGER_URL!.slice('sqlite:'.length))
      const mount = container.volumeMounts.find((m: Obj) => m.mountPath === ledgerDir)
      const volume = pod.volumes.find((v: Obj) => v.name === mount.name)
      const claim = oneOf(sq, 'PersistentVolumeClaim')
      expect(volume.persistentVolumeClaim.claimName).toBe(claim.metadata.name)
      expect(claim.spec.accessModes).toEqual(['ReadWriteOnce'])
      expect(readFileSync(join(root, 'docker/Dockerfile'), 'utf8')).toContain(`VOLUME ["${ledgerDir}"]`)
      expect(deploymentConfig(pod, sq).ledgerUrl).toBe('sqlite:/app/data/ledger.db')
    })
  })

  describe('overlays/postgres: two or more replicas on the PostgreSQL ledger', () => {
    it('rolled one at a time (maxUnavailable 0, maxSurge 1), no ledger volume: GATEWAY_LEDGER_URL and GATEWAY_REDIS_URL come from a Secret', () => {
      const deployment = deploymentOf(pg)
      const container = containerOf(deployment)
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2)
      expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } })
      expect(deployment.spec.template.spec.volumes.some((v: Obj) => v.persistentVolumeClaim !== undefined)).toBe(false)
      const stores = oneOf(secretTemplates, 'Secret', `${NAME}-stores`)
      for (const name of ['GATEWAY_LEDGER_URL', 'GATEWAY_REDIS_URL']) {
        const v = envVar(container, name)
        expect(v.value, name).toBeUndefined()
        expect(v.valueFrom?.secretKeyRef?.name, name).toBe(stores.metadata.name)
      }
      const config = deploymentConfig(deployment.spec.template.spec, pg)
      expect(config.ledgerUrl).toBe(stores.stringData['ledger-url'])
      expect(config.redisUrl).toBe(stores.stringData['redis-url'])
    })

    it('the PodDisruptionBudget keeps one of the serving pods', () => {
      const pdb = oneOf(pg, 'PodDisruptionBudget')
      expect(pdb.spec.minAvailable).toBe(1)
      expect(pdb.spec.minAvailable).toBeLessThan(deploymentOf(pg).spec.replicas)
    })

    it('the migrate Job runs the bin\'s `ledger migrate` once to completion, on the Deployment\'s ledger URL', () => {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
      const migrateJob = migrateJobOf(pg)
      const migrateContainer = containerOf(migrateJob)
      const pgContainer = containerOf(deploymentOf(pg))
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
  })
})

// the files this test names are where it says they are (a moved file fails here, not silently)
describe('docker/k8s layout', () => {
  it('the overlays are the two the docs name, each a kustomization and its one settings file', () => {
    for (const o of ['sqlite', 'postgres']) {
      expect(readdirSync(join(k8s, 'overlays', o)).sort()).toEqual(['kustomization.yaml', 'settings.yaml'])
      const kustomization = parse(readFileSync(join(k8s, 'overlays', o, 'kustomization.yaml'), 'utf8')) as Obj
      expect(kustomization.resources).toEqual(['../../base', 'settings.yaml'])
      // the settings component last: it writes over every object, the variant's included
      expect(kustomization.components).toEqual([`../../components/${o}`, '../../components/settings'])
    }
  })
})
