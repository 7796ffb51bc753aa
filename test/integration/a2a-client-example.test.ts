// The A2A client example (clients/a2a-example/campaign.ts; docs/api.md#a2a-front-door) as a
// newcomer runs it: a process under tsx, its settings in the environment, against a
// controller-mode gateway in front of the campaign-control simulator. What it prints is its
// account of each step; what the simulator received is the proof: the Argus read under the id
// the gateway issued (not the one the program made), the claim, the submission under the
// program's message id, the polls, the cancel of that task and the release, each once. And
// docs/api.md's excerpt of it is the program's own text.
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const EXAMPLE = join(ROOT, 'clients', 'a2a-example', 'campaign.ts')

/** the example as a process, to its end; no output is thrown away */
async function example (env: Record<string, string>): Promise<{ code: number | null, out: string, err: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), EXAMPLE], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, out, err }
}

describe('the A2A client example (@a2a-js/sdk 1.3)', () => {
  it('reads, claims, submits, polls, cancels and releases through the front door; the remote sees each once', { timeout: 60_000 }, async ({ controlPair: p }) => {
    const campaignId = 'camp-a2a-example'
    const { code, out, err } = await example({ GATEWAY_URL: p.gw.url, GATEWAY_TOKEN: p.gw.tokens.controller, CAMPAIGN_ID: campaignId })
    expect({ code, err }, out).toEqual({ code: 0, err: '' })
    const lines = out.split('\n').filter((l) => l !== '')

    const read = /^supervisor\.health: ok true; the gateway read it as (\S+), not as (\S+)$/.exec(lines[1] ?? '')
    expect(read, out).not.toBeNull()
    const [, issued, mine] = read as unknown as [string, string, string]
    expect(issued).not.toBe(mine)
    const submitted = /^submitted (submit-\S+): task (\S+), TASK_STATE_SUBMITTED$/.exec(lines[3] ?? '')
    expect(submitted, out).not.toBeNull()
    const [, submitId, taskId] = submitted as unknown as [string, string, string]
    expect(lines).toEqual([
      'connected to openoperator-gateway 1.0.0 over A2A 1.0',
      `supervisor.health: ok true; the gateway read it as ${issued}, not as ${mine}`,
      expect.stringMatching(new RegExp(`^claimed ${campaignId}: epoch 1, until \\d{4}-\\d\\d-\\d\\dT`)),
      `submitted ${submitId}: task ${taskId}, TASK_STATE_SUBMITTED`,
      `task ${taskId}: TASK_STATE_WORKING`,
      `canceled task ${taskId}: TASK_STATE_CANCELED`,
      `released ${campaignId}`
    ])

    // the remote: the read under the gateway's id, the submission under the program's, each once
    const sends = p.calls('message/send').map((c) => c.params.message?.messageId)
    expect(sends).toEqual([issued, submitId])
    expect(sends).not.toContain(mine)
    expect(p.calls('campaign/claim_control').map((c) => c.params.campaign_id)).toEqual([campaignId])
    expect(p.calls('tasks/get').length).toBeGreaterThanOrEqual(1)
    expect(p.calls('tasks/get').every((c) => c.params.id === taskId)).toBe(true)
    expect(p.calls('tasks/cancel').map((c) => c.params.id)).toEqual([taskId])
    expect(p.calls('campaign/release_control').map((c) => c.params.campaign_id)).toEqual([campaignId])
    expect(p.sim.control.lease(campaignId) ?? null).toBeNull()
  })

  it('imports only @a2a-js/sdk and Node\'s built-ins; docs/api.md shows an excerpt of it, word for word, and links it', async () => {
    const source = await readFile(EXAMPLE, 'utf8')
    const imports = [...source.matchAll(/^import .* from '([^']+)'$/gm)].map((m) => m[1]!)
    expect(imports.length).toBeGreaterThan(0)
    expect(imports.filter((i) => !i.startsWith('node:') && i !== '@a2a-js/sdk' && !i.startsWith('@a2a-js/sdk/'))).toEqual([])

    const api = await readFile(join(ROOT, 'docs', 'api.md'), 'utf8')
    const section = api.slice(api.indexOf('<a id="a2a-front-door"></a>'), api.indexOf('<a id="metrics"></a>'))
    expect(section).toContain('(../clients/a2a-example/campaign.ts)')
    const excerpt = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    expect(excerpt, 'a ts block in the front-door section').toBeDefined()
    // the excerpt's lines, elisions (`// …`) aside, run in the program in this order
    let at = 0
    for (const line of excerpt!.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '// …')) {
      const found = source.indexOf(line, at)
      expect(found, `docs/api.md's excerpt line not in the program (in order): ${line}`).toBeGreaterThanOrEqual(0)
      at = found + line.length
    }
  })
})
