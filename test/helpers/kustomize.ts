// Renders a kustomize directory the way docs/operating.md#kubernetes tells an operator to:
// `kubectl kustomize DIR`, or the standalone `kustomize build DIR`. The overlays use replacements
// and components, so kustomize v5 at least (kubectl 1.27 and later) is needed; Debian bookworm's
// kubernetes-client is 1.20 (kustomize v2) and the npm registry ships no binary of either, so a
// machine may have none: `kustomize()` then says why, and the tests that render skip, saying so.
import { spawnSync } from 'node:child_process'

export type Kustomize = { render: (dir: string) => string, tool: string } | { skip: string }

const MIN_MAJOR = 5

function major (version: string | undefined): number | undefined {
  const m = /^v?(\d+)\./.exec(version ?? '')
  return m === null ? undefined : Number(m[1])
}

function run (cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  if (r.error !== undefined) throw r.error
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${String(r.status)}: ${r.stderr.trim()}`)
  return r.stdout
}

export function kustomize (): Kustomize {
  const seen: string[] = []
  const kubectl = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })
  if (kubectl.error === undefined && kubectl.status === 0) {
    const version = (JSON.parse(kubectl.stdout) as { kustomizeVersion?: string }).kustomizeVersion
    if ((major(version) ?? 0) >= MIN_MAJOR) return { tool: `kubectl kustomize (kustomize ${version!})`, render: (dir) => run('kubectl', ['kustomize', dir]) }
    seen.push(`kubectl's kustomize is ${version ?? 'unknown'}`)
  } else seen.push('kubectl is not installed')
  const standalone = spawnSync('kustomize', ['version'], { encoding: 'utf8' })
  if (standalone.error === undefined && standalone.status === 0) {
    const version = standalone.stdout.trim()
    if ((major(version) ?? 0) >= MIN_MAJOR) return { tool: `kustomize build (${version})`, render: (dir) => run('kustomize', ['build', dir]) }
    seen.push(`kustomize is ${version}`)
  } else seen.push('kustomize is not installed')
  return { skip: `${seen.join('; ')}: rendering the overlays needs kustomize v${MIN_MAJOR} or later (kubectl 1.27+, or the standalone kustomize)` }
}
