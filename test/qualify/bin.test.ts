// The real bin in a child process: `openoperator-gateway qualify` against a simulator exits by
// itself with the run's code, prints the lines on stdout and the summary on stderr; and the
// wrapper script (which builds first) does the same. Spawned processes: one at a time.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_SOURCE_SHA, startSimulator, type Simulator } from '../../src/simulator/index.js'
import { waitFor } from '../helpers/child.js'
import { expectOnlyReads } from './helpers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const SECRET = 'bin-secret-4c2e'
let sim: Simulator | undefined
afterEach(async () => { await sim?.close(); sim = undefined })

async function run (command: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(command[0]!, command.slice(1), { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
  clearTimeout(timer)
  return { code, out, err }
}

const envOf = (s: Simulator, sha = DEFAULT_SOURCE_SHA): Record<string, string> => ({ OPENOPERATOR_URL: s.url, SPYNEL_AGENT_ZERO_API_KEY: SECRET, EXPECTED_SOURCE_SHA: sha, UPSTREAM_READ_TIMEOUT_MS: '4000' })

describe('the qualify subcommand of the bin', () => {
  it('exits 0 by itself against the openoperator simulator, one line per assertion, no secret', async () => {
    sim = await startSimulator({ secret: SECRET })
    const r = await run([process.execPath, '--import', 'tsx', 'src/cli/index.ts', 'qualify', '--observer-task', 'task-demo-1'], envOf(sim), 15_000)
    expect(r.code, r.err).toBe(0)
    const lines = r.out.trim().split('\n')
    expect(lines).toHaveLength(28)
    for (const line of lines) expect(line).toMatch(/^(PASS [a-z0-9_]+(: .+)?|SKIP [a-z0-9_]+: .+)$/)
    expect(lines).toContain('PASS source_sha')
    expect(r.err).toMatch(/qualify: 26 PASS, 0 FAIL, 2 SKIP against http:\/\/127\.0\.0\.1:\d+/)
    expect(`${r.out}${r.err}`).not.toContain(SECRET)
    expectOnlyReads(sim)
  })

  it('exits 1 with --json on a wrong SHA; the document says which assertion failed', async () => {
    sim = await startSimulator({ secret: SECRET })
    const r = await run([process.execPath, '--import', 'tsx', 'src/cli/index.ts', 'qualify', '--json'], envOf(sim, 'f'.repeat(40)), 15_000)
    expect(r.code).toBe(1)
    const doc = JSON.parse(r.out)
    expect(doc.ok).toBe(false)
    expect(doc.results.filter((x: { status: string }) => x.status === 'FAIL').map((x: { name: string }) => x.name)).toEqual(['source_sha'])
  })

  it('exits 2 on a configuration error, printing no secret', async () => {
    const r = await run([process.execPath, '--import', 'tsx', 'src/cli/index.ts', 'qualify'], { SPYNEL_AGENT_ZERO_API_KEY: SECRET }, 15_000)
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/OPENOPERATOR_URL: required/)
    expect(`${r.out}${r.err}`).not.toContain(SECRET)
  })

  it('scripts/qualify_openoperator_a2a.sh builds, then runs the same smoke (stdout: the lines only)', async () => {
    sim = await startSimulator({ secret: SECRET, profile: 'campaign-control' })
    const r = await run(['bash', 'scripts/qualify_openoperator_a2a.sh'], envOf(sim), 60_000)
    expect(r.code, r.err).toBe(0)
    expect(r.out.trim().split('\n')).toHaveLength(28)
    expect(r.out).toMatch(/^SKIP campaign_control: .*the card advertises urn:openoperator:campaign-control:v1/m)
  }, 60_000)

  // docs/operating.md#simulator: nobody has to find the simulator's commit
  it('`simulator` prints the qualify line, its SHA included, and that line passes; without a secret it says one is needed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'simulator'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SIMULATOR_SECRET: SECRET, SIMULATOR_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    try {
      let out = ''
      child.stdout.on('data', (d: Buffer) => { out += d.toString() })
      const line = await waitFor(() => /^qualify it: (.+) npm run qualify$/m.exec(out)?.[1], 15_000, 'the qualify line')
      expect(out).not.toContain(SECRET)
      const env = Object.fromEntries(line.split(' ').map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]))
      expect(env).toEqual({ OPENOPERATOR_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), SPYNEL_AGENT_ZERO_API_KEY: '<SIMULATOR_SECRET>', EXPECTED_SOURCE_SHA: DEFAULT_SOURCE_SHA })
      const r = await run([process.execPath, '--import', 'tsx', 'src/cli/index.ts', 'qualify'], { ...env, SPYNEL_AGENT_ZERO_API_KEY: SECRET }, 15_000)
      expect(r.code, r.err).toBe(0)
      expect(r.out).toContain('PASS source_sha')
    } finally {
      child.kill('SIGKILL')
    }
    const open = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'simulator'], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, SIMULATOR_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      let out = ''
      open.stdout.on('data', (d: Buffer) => { out += d.toString() })
      await waitFor(() => out.includes('to qualify it, start it with SIMULATOR_SECRET set') ? true : undefined, 15_000, 'the no-secret line')
      expect(out).not.toMatch(/EXPECTED_SOURCE_SHA/)
    } finally {
      open.kill('SIGKILL')
    }
  }, 60_000)
})
