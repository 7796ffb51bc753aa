// The typed client's README (clients/typescript/README.md: its sections Build and install, and
// In your project) followed as written, with what npm installs the day the test runs — not the versions
// this repository pins: a newcomer's `npm install --save-dev typescript` brings TypeScript's
// latest (7 on 2026-12-07), whose `types` defaults to none. The README's own blocks are run: the
// build (`npm install`, `npm pack` in a copy of clients/typescript/ holding nothing of the
// gateway's), the project's installs from the registry, its tsconfig.json, and `npx tsc --noEmit
// -p .`; then the README's program, examples/campaign.ts, runs with the installed tsx against a
// real gateway. And the README's reason for `"types": ["node"]` holds: without it, that tsc fails
// with `Cannot find name 'node:crypto'`. Reaches the npm registry (skipped, saying so, when it
// does not answer); tens of seconds of installs, so tagged slow (npm test's alone).
import { execFile, spawn, spawnSync } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { CLIENT_DIR } from '../../scripts/generate-client.js'
import { it } from '../helpers/fixtures.js'

const run = promisify(execFile)
/** npm as a newcomer's shell runs it: none of the npm_* variables an `npm test` around this run exports */
const NPM_ENV: Record<string, string> = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !/^npm_/i.test(k) && v !== undefined)) as Record<string, string>,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false'
}

const registry = spawnSync('npm', ['ping'], { env: NPM_ENV, encoding: 'utf8', timeout: 30_000 })
const SKIP = registry.status === 0 ? undefined : `the npm registry does not answer (npm ping: ${(registry.stderr ?? String(registry.error)).trim().split('\n').pop() ?? ''})`
if (SKIP !== undefined) console.warn(`SKIP clients/typescript/README.md followed with the registry's packages: ${SKIP}`)

const readme = await readFile(join(CLIENT_DIR, 'README.md'), 'utf8')

/** the fenced blocks of the README's section under `heading`, in order */
function blocks (heading: string): Array<{ lang: string, text: string }> {
  const start = readme.indexOf(`\n${heading}\n`)
  expect(start, heading).toBeGreaterThanOrEqual(0)
  const level = /^#+/.exec(heading)![0]
  const rest = readme.slice(start + heading.length + 2)
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `))
  const section = end < 0 ? rest : rest.slice(0, end)
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }))
}

/** a README block run by bash, as a reader pastes it; its output for the failure message */
async function sh (script: string, cwd: string): Promise<string> {
  try {
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: NPM_ENV, maxBuffer: 16 * 1024 * 1024 })
    return stdout + stderr
  } catch (err) {
    const e = err as { stdout?: string, stderr?: string, message: string }
    throw new Error(`${script}\nfailed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
}

let dir: string
/** the gateway's clone, as far as the README needs it: clients/typescript/ without node_modules, dist or a tarball */
let clone: string
/** the newcomer's project */
let project: string
let installed: { typescript: string, node: string, tsx: string }
let latest: string
/** the README's check, `npx tsc --noEmit -p .` */
let checkBlock = ''

describe.skipIf(SKIP !== undefined)('clients/typescript/README.md with the packages npm installs today', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-readme-'))
    clone = join(dir, 'openoperator-gateway')
    project = join(dir, 'project')
    await cp(CLIENT_DIR, join(clone, 'clients', 'typescript'), { recursive: true, filter: (src) => !/[/\\](node_modules|dist)$|\.tgz$/.test(src) })

    // Build and install: its own npm install and npm pack, from the clone's root
    const [build] = blocks('## Build and install').filter((b) => b.lang === 'sh')
    expect(build!.text).toMatch(/^cd clients\/typescript\nnpm install .*\nnpm pack /)
    await sh(build!.text, clone)

    // In your project: a new ES module project as the README says to make one, its installs, its tsconfig.json
    const [install, tsconfig, check] = blocks('### In your project')
    expect([install!.lang, tsconfig!.lang, check!.lang]).toEqual(['sh', 'json', 'sh'])
    const init = /a new one is `([^`]+)`/.exec(install!.text)?.[1]
    expect(init).toBe('npm init -y && npm pkg set type=module')
    await mkdir(project)
    await sh(init!, project)
    expect(install!.text).toContain('/your/project')
    expect(install!.text).toContain('/path/to/openoperator-gateway/')
    await sh(install!.text.replaceAll('/your/project', project).replaceAll('/path/to/openoperator-gateway/', `${clone}/`), project)
    await writeFile(join(project, 'tsconfig.json'), tsconfig!.text)
    await cp(join(CLIENT_DIR, 'examples', 'campaign.ts'), join(project, 'campaign.ts'))
    checkBlock = check!.text

    const version = async (name: string): Promise<string> => (JSON.parse(await readFile(join(project, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
    installed = { typescript: await version('typescript'), node: await version('@types/node'), tsx: await version('tsx') }
    latest = (await run('npm', ['view', 'typescript', 'dist-tags.latest'], { env: NPM_ENV })).stdout.trim()
    console.log(`typed-client README: installed typescript ${installed.typescript} (the registry's latest: ${latest}), @types/node ${installed.node}, tsx ${installed.tsx}`)
  }, 300_000)

  afterAll(async () => { if (dir !== undefined) await rm(dir, { recursive: true, force: true }) })

  it('installs the TypeScript the registry calls latest, and the README\'s tsc check passes with its tsconfig.json', { tags: ['slow'], timeout: 120_000 }, async () => {
    expect(installed.typescript).toBe(latest)
    const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { type?: string, dependencies: Record<string, string>, devDependencies: Record<string, string> }
    expect(pkg.type).toBe('module')
    expect(Object.keys(pkg.dependencies)).toEqual(['@openoperator-gateway/client'])
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'tsx', 'typescript'])
    expect(checkBlock).toMatch(/^npx tsc --noEmit -p \.\s/)
    await sh(checkBlock, project)
  })

  it('without "types": ["node"] that tsc fails as the README says: Cannot find name \'node:crypto\'', { tags: ['slow'], timeout: 120_000 }, async () => {
    const config = JSON.parse(await readFile(join(project, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> }
    expect(config.compilerOptions.types).toEqual(['node'])
    delete config.compilerOptions.types
    const bare = join(dir, 'without-types.json')
    await writeFile(bare, JSON.stringify({ ...config, include: [join(project, 'campaign.ts')] }))
    const r = spawnSync(join(project, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', bare], { cwd: project, env: NPM_ENV, encoding: 'utf8' })
    expect(r.status).not.toBe(0)
    expect(r.stdout).toContain('Cannot find name \'node:crypto\'')
    expect(r.stdout).toContain('Cannot find name \'process\'')
    expect(readme).toContain('Cannot find name \'node:crypto\'')
  })

  it('the program runs with the installed tsx against a real gateway: claim, submit, follow to completed, release', { tags: ['slow'], timeout: 60_000 }, async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { submissionStates: ['submitted', 'working', 'completed'] } } })
    const child = spawn('npx', ['tsx', 'campaign.ts'], {
      cwd: project,
      env: { ...NPM_ENV, GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: p.gw.tokens.controller, CAMPAIGN_ID: 'camp-readme-1', FOLLOW_SECONDS: '30' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect({ code, err }, out).toEqual({ code: 0, err: '' })
    expect(out).toMatch(/^claimed camp-readme-1: epoch 1, until /m)
    expect(out).toMatch(/^task \S+ ended completed; artifacts: none$/m)
    expect(out).toMatch(/^released camp-readme-1$/m)
    expect(p.calls('message/send')).toHaveLength(1)
  })
})
