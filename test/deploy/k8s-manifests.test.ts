// The Kubernetes manifests of docker/k8s/ (README "Deploying"): each object validated against
// the Kubernetes API schemas with kubernetes-models, the YAML checked with yamllint (skipped,
// with the reason printed, where it is not installed), and the values checked against what the
// gateway really serves and reads: probe paths answered by a running gateway, ports, metrics
// annotations, env names the code reads, *_FILE paths that land on mounted Secret items, the
// ledger on the volume, a termination grace longer than the drain, and a qualify Job whose
// configuration loads. No cluster runs here: this is what can be verified without one.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { loadConfig } from '../../src/config.js'
import { loadQualifyConfig } from '../../src/qualify/config.js'
import { CHECKS } from '../../src/qualify/run.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const dir = join(root, 'docker/k8s')
/** close-with-grace gives the close this long after the grace (src/cli/index.ts, docs/design.md#shutdown) */
const CLOSE_AFTER_GRACE_MS = 5000

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are free-form YAML, validated below
type Obj = any
interface EnvVar { name: string; value?: string; valueFrom?: { configMapKeyRef?: { name: string; key: string } } }

const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'))
// kubectl's YAML reader follows YAML 1.1 (0440 is octal there), so parse the same way
const objects: Array<{ file: string; obj: Obj }> = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(dir, file), 'utf8'), { version: '1.1' }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`)
    return { file, obj: doc.toJS() as Obj }
  }))
const one = (kind: string, name?: string): Obj => {
  const found = objects.filter((o) => o.obj.kind === kind && (name === undefined || o.obj.metadata.name === name))
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1)
  return found[0]!.obj
}

const MODELS: Record<string, new (data: Obj) => { validate: () => void }> = {
  'apps/v1 Deployment': Deployment,
  'batch/v1 Job': Job,
  'v1 Service': Service,
  'v1 Secret': Secret,
  'v1 ConfigMap': ConfigMap,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim
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

/** the container's environment as the kubelet would build it (ConfigMap references resolved) */
function envOf (c: Obj, overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const v of c.env as EnvVar[]) {
    const ref = v.valueFrom?.configMapKeyRef
    if (ref !== undefined) {
      expect(ref.name).toBe(configMap.metadata.name)
      expect(Object.keys(configMap.data)).toContain(ref.key)
      env[v.name] = configMap.data[ref.key]
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

/** the Deployment's configuration as the gateway loads it, the Secret's files holding sample values */
function deploymentConfig (overrides: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  const files = mountedSecretFiles(pod, container)
  const read = (path: string): string => {
    const key = files.get(path)
    if (key === undefined) throw new Error(`${path} is not a mounted Secret item`)
    expect(Object.keys(secret.stringData)).toContain(key)
    return SAMPLE_SECRETS[key]!
  }
  return loadConfig(envOf(container, { OPENOPERATOR_URL: 'https://openoperator.example', ...overrides }), { readFile: read })
}

describe('docker/k8s manifests', () => {
  it('every object validates against the Kubernetes API schemas (kubernetes-models)', () => {
    expect(files.sort()).toEqual(['configmap.yaml', 'deployment.yaml', 'pvc.yaml', 'qualify-job.yaml', 'secret.example.yaml', 'service.yaml'])
    for (const { file, obj } of objects) {
      const Model = MODELS[`${obj.apiVersion} ${obj.kind}`]
      expect(Model, `${file}: ${obj.apiVersion} ${obj.kind} has no model here`).toBeDefined()
      expect(() => new Model!(obj).validate(), file).not.toThrow()
    }
    // the validator does catch a wrong type (it ignores unknown keys, as the API server's schema does)
    const broken = structuredClone(deployment)
    broken.spec.template.spec.containers[0].ports[0].containerPort = '8080'
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/)
  })

  it('yamllint (strict) accepts every file', (ctx) => {
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

  describe('against a running gateway', () => {
    let sim: Simulator
    beforeAll(async () => { sim = await startSimulator({ secret: 'k8s-test-secret' }) })
    afterAll(async () => { await sim.close() })

    it('the probe paths answer 200 on the API port, the scrape path on the metrics port', async () => {
      const gw = await startGateway({ simulator: sim })
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
        const res = await request(`${gw.url}${probe.httpGet.path}`)
        await res.body.text()
        expect(res.statusCode, probe.httpGet.path).toBe(200)
      }
      const scrape = await request(`${gw.metricsUrl}${deployment.spec.template.metadata.annotations['prometheus.io/path']}`)
      expect(scrape.statusCode).toBe(200)
      expect(await scrape.body.text()).toContain('gateway_http_requests_total')
    })
  })
})
