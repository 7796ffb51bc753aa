// The typed client as its README tells a newcomer to use it, from outside the gateway: the
// package built and packed by its own scripts (`npm pack`, which runs `tsc`) from a copy of
// clients/typescript/ holding nothing of the gateway's, the tarball unpacked into a project of
// its own, and examples/campaign.ts — the README's complete program — type-checked against the
// packed types and run as a process against a real gateway over a real socket. The remote drops
// the submission's connection after applying it, so the program meets 504 ambiguous_write and
// must reconcile it rather than submit again. Its dependencies are linked from this repository's
// node_modules (the tests reach no registry); the package's own devDependencies and lock are
// held to the versions the gateway builds with.
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { CLIENT_DIR } from '../../scripts/generate-client.js'
import { it } from '../helpers/fixtures.js'

const run = promisify(execFile)
const ROOT = join(CLIENT_DIR, '..', '..')
const MODULES = join(ROOT, 'node_modules')
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_offline: 'true' }

let dir: string
/** the newcomer's project: the packed client installed, the example copied in */
let app: string
let tarball: string[]

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-example-'))
  // a copy of the package as a clone has it: no dist, no tarball; its dependencies linked
  const pkg = join(dir, 'client')
  await cp(CLIENT_DIR, pkg, { recursive: true, filter: (src) => !/[/\\](node_modules|dist)$|\.tgz$/.test(src) })
  await symlink(MODULES, join(pkg, 'node_modules'), 'dir')
  await run('npm', ['pack', '--pack-destination', dir], { cwd: pkg, env: NPM_ENV })
  const [tgz] = (await readdir(dir)).filter((f) => f.endsWith('.tgz'))
  tarball = (await run('tar', ['-tzf', join(dir, tgz!)])).stdout.trim().split('\n').sort()

  app = join(dir, 'app')
  const installed = join(app, 'node_modules', '@openoperator-gateway', 'client')
  await mkdir(installed, { recursive: true })
  await run('tar', ['-xzf', join(dir, tgz!), '-C', installed, '--strip-components=1'])
  await mkdir(join(app, 'node_modules', '@types'), { recursive: true })
  await symlink(join(MODULES, 'openapi-fetch'), join(app, 'node_modules', 'openapi-fetch'), 'dir')
  await symlink(join(MODULES, '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir')
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'newcomer', private: true, type: 'module' }))
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
    include: ['campaign.ts']
  }))
  await cp(join(CLIENT_DIR, 'examples', 'campaign.ts'), join(app, 'campaign.ts'))
}, 120_000)

afterAll(async () => { if (dir !== undefined) await rm(dir, { recursive: true, force: true }) })

/** the example as a process, to its end; no output is thrown away */
async function campaign (env: Record<string, string>): Promise<{ code: number | null, out: string, err: string }> {
  const child = spawn(process.execPath, [join(MODULES, 'tsx', 'dist', 'cli.mjs'), 'campaign.ts'], { cwd: app, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, out, err }
}

describe('the typed client from a fresh clone, as its README says', () => {
  it('builds and packs with its own scripts and dependencies, at the versions the gateway builds with', async () => {
    expect(tarball).toEqual(['package/README.md', 'package/dist/index.d.ts', 'package/dist/index.js', 'package/dist/schema.d.ts', 'package/openapi.json', 'package/package.json'])
    const own = JSON.parse(await readFile(join(CLIENT_DIR, 'package.json'), 'utf8'))
    const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
    // what the build needs, declared by the package itself: a clone without the gateway installed has nothing else
    expect(own.dependencies).toEqual({ 'openapi-fetch': root.devDependencies['openapi-fetch'] })
    for (const name of ['typescript', '@types/node']) expect(own.devDependencies[name], name).toBe(root.devDependencies[name])
    // its lock pins what the gateway's lock pins
    const ownLock = JSON.parse(await readFile(join(CLIENT_DIR, 'package-lock.json'), 'utf8'))
    const rootLock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8'))
    for (const name of ['openapi-fetch', 'typescript', '@types/node']) {
      expect(ownLock.packages[`node_modules/${name}`]?.version, name).toBe(rootLock.packages[`node_modules/${name}`].version)
    }
    // the README's program is the example file, word for word
    const readme = await readFile(join(CLIENT_DIR, 'README.md'), 'utf8')
    const example = await readFile(join(CLIENT_DIR, 'examples', 'campaign.ts'), 'utf8')
    expect(readme).toContain('```sh\ncd clients/typescript\nnpm install')
    expect(readme.includes(`\`\`\`ts\n${example}\`\`\``), 'README.md shows examples/campaign.ts in full').toBe(true)
  })

  it('the example type-checks against the packed types', async () => {
    await run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', join(app, 'tsconfig.json')])
  }, 60_000)

  it('claim → submit (applied, connection lost: 504, reconciled) → poll to completed → release', { timeout: 60_000 }, async ({ startControlPair }) => {
    const p = await startControlPair({ sim: { campaignControl: { submissionStates: ['submitted', 'working', 'completed'] } } })
    const campaignId = 'camp-example-1'
    // the remote applies the submission, then the connection drops before its answer
    p.sim.inject({ rpcMethod: 'message/send' }, { kind: 'drop' }, 1)
    const { code, out, err } = await campaign({ GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: p.gw.tokens.controller, CAMPAIGN_ID: campaignId, FOLLOW_SECONDS: '30' })
    expect({ code, err }, out).toEqual({ code: 0, err: '' })

    const submitId = /^(submit-[0-9a-f-]+): 504 ambiguous_write; reconciling$/m.exec(out)?.[1]
    expect(submitId, out).toBeDefined()
    const taskId = new RegExp(`^submitted ${submitId}: task (\\S+)$`, 'm').exec(out)?.[1]
    expect(taskId, out).toBeDefined()
    expect(out.split('\n').filter((l) => l !== '')).toEqual([
      expect.stringMatching(new RegExp(`^claimed ${campaignId}: epoch 1, until `)),
      `${submitId}: 504 ambiguous_write; reconciling`,
      `${submitId}: reconciled, applied`,
      `submitted ${submitId}: task ${taskId}`,
      `task ${taskId}: working`,
      `task ${taskId}: completed`,
      `task ${taskId} ended completed; artifacts: none`,
      `released ${campaignId}`
    ])

    // the remote saw the submission once (never sent again), one request_status, one claim, one release
    expect(p.calls('message/send').map((c) => c.params.message?.messageId)).toEqual([submitId])
    expect(p.calls('campaign/request_status').map((c) => c.params.request_id)).toEqual([submitId])
    expect(p.calls('campaign/claim_control')).toHaveLength(1)
    expect(p.calls('campaign/release_control')).toHaveLength(1)
    expect(p.sim.control.lease(campaignId) ?? null).toBeNull()
    // and the ledger agrees: every record applied, the submission by reconcile
    const records = await p.get(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/requests`)
    expect(records.body.requests.map((r: { operation: string, state: string }) => [r.operation, r.state])).toEqual([['release', 'applied'], ['submit', 'applied'], ['claim', 'applied']])
    expect(records.body.requests[1]).toMatchObject({ requestId: submitId, taskId, resolution: { kind: 'reconcile' } })
  })
})
