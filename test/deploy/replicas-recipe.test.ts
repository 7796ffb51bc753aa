// The nginx step of docs/operating.md#two-replicas-without-kubernetes, run as written but into a
// private prefix instead of /etc/nginx: its `sed` makes the file nginx loads from its conf.d/, which
// must listen on loopback only, as the two replicas do (GATEWAY_TRUST_PROXY=1 requires that only
// this nginx reach them), and its start line without systemd must start an nginx that is not
// running and reload one that is. Skipped, saying so, without nginx.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { NGINX_SKIP, freePort, nginxAvailable, nginxMainConf } from '../helpers/nginx.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const operating = readFileSync(join(root, 'docs/operating.md'), 'utf8')
const section = operating.slice(operating.indexOf('<a id="two-replicas-without-kubernetes"></a>'), operating.indexOf('<a id="qualification"></a>'))
const recipe = /```sh\n([\s\S]*?)```/.exec(section)![1]!
const CONF = '/etc/nginx/conf.d/openoperator-gateway.conf'

/** the recipe's command that writes CONF: `sed …` over its continuation lines, up to `> CONF` */
const sedCommand = ((): string => {
  const m = new RegExp(`^(sed [^\\n]*(?:\\\\\\n[^\\n]*)*) > ${CONF.replaceAll('.', '\\.')}$`, 'm').exec(recipe)
  expect(m, `the recipe writes ${CONF} with sed`).not.toBeNull()
  return m![1]!
})()
/** the recipe's start-or-reload line for a host without systemd */
const withoutSystemd = /^# without systemd: (nginx -s reload 2>\/dev\/null \|\| nginx) /m.exec(recipe)?.[1]

const AVAILABLE = nginxAvailable()
if (!AVAILABLE) console.warn(`SKIP the replicas recipe's nginx: ${NGINX_SKIP}`)

let dir: string | undefined
afterEach(() => {
  if (dir === undefined) return
  // an nginx this test started (its own pid file) is stopped, whatever failed
  const pidFile = join(dir, 'nginx.pid')
  if (existsSync(pidFile)) try { process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM') } catch { /* gone already */ }
  rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** the file the recipe's sed writes, from the repository's docker/nginx/gateway.conf */
function recipeConf (): string {
  return execFileSync('bash', ['-euo', 'pipefail', '-c', sedCommand], { cwd: root, encoding: 'utf8' })
}

/** an nginx main configuration in a private prefix, including conf.d/*.conf in its http block as Debian's does */
function prefix (conf: string): { dir: string, nginx: string[] } {
  dir = mkdtempSync(join(tmpdir(), 'oo-gw-recipe-nginx-'))
  mkdirSync(join(dir, 'conf.d'))
  writeFileSync(join(dir, 'conf.d', 'openoperator-gateway.conf'), conf)
  writeFileSync(join(dir, 'nginx.conf'), nginxMainConf(dir, `  include ${dir}/conf.d/*.conf;`, { daemon: true, workerConnections: 64 }))
  return { dir, nginx: ['nginx', '-p', dir, '-c', join(dir, 'nginx.conf')] }
}

const accepts = async (port: number, host = '127.0.0.1'): Promise<boolean> => await new Promise((resolve) => {
  const s = connect(port, host)
  s.once('connect', () => { s.destroy(); resolve(true) })
  s.once('error', () => { resolve(false) })
})

describe('docs/operating.md#two-replicas-without-kubernetes: the nginx step', () => {
  it('its sed binds the reference file to 127.0.0.1:8080 and names the two loopback replicas, nothing else changed', () => {
    const conf = recipeConf()
    expect([...conf.matchAll(/^\s*listen\s+([^;]+);/gm)].map((m) => m[1])).toEqual(['127.0.0.1:8080'])
    expect([...conf.matchAll(/^\s*server\s+([^\s{;]+)[^;\n]*;/gm)].map((m) => m[1])).toEqual(['127.0.0.1:8081', '127.0.0.1:8082'])
    const shipped = readFileSync(join(root, 'docker/nginx/gateway.conf'), 'utf8').split('\n')
    const changed = conf.split('\n').filter((line, i) => line !== shipped[i])
    expect(changed).toHaveLength(3)
    // the replicas the recipe starts are the ones it names: PORT=8081 and PORT=8082, HOST=127.0.0.1
    expect(recipe).toMatch(/^HOST=127\.0\.0\.1$/m)
    for (const port of ['8081', '8082']) expect(recipe).toContain(`PORT=${port} `)
    expect(recipe).toContain('nginx -t\n')
    expect(recipe).toContain('systemctl reload-or-restart nginx')
  })

  it.skipIf(!AVAILABLE)('nginx -t accepts the file in an http block; the start line without systemd starts a stopped nginx, then reloads the running one', async () => {
    const port = await freePort()
    // the recipe's file on a free port instead of 8080: nothing else of it changes
    const conf = recipeConf()
    expect(conf).toContain('listen 127.0.0.1:8080;')
    const p = prefix(conf.replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`))
    const test = spawnSync(p.nginx[0]!, [...p.nginx.slice(1), '-t'], { encoding: 'utf8' })
    expect(test.status, test.stderr).toBe(0)

    expect(withoutSystemd, 'the recipe says how to start nginx without systemd').toBeDefined()
    const line = withoutSystemd!.replaceAll('nginx', p.nginx.join(' '))
    const start = spawnSync('bash', ['-c', line], { encoding: 'utf8' })
    expect(start.status, start.stderr).toBe(0)
    const pid = Number(readFileSync(join(p.dir, 'nginx.pid'), 'utf8'))
    expect(await accepts(port)).toBe(true)
    // bound to 127.0.0.1 alone: another loopback address (all of 127/8 is this host) is refused,
    // where a listener on every address would accept it
    expect(await accepts(port, '127.0.0.2')).toBe(false)

    // run again while it runs: the same master reloads (nothing is started beside it)
    const again = spawnSync('bash', ['-c', line], { encoding: 'utf8' })
    expect(again.status, again.stderr).toBe(0)
    expect(Number(readFileSync(join(p.dir, 'nginx.pid'), 'utf8'))).toBe(pid)
    expect(await accepts(port)).toBe(true)
    const quit = spawnSync(p.nginx[0]!, [...p.nginx.slice(1), '-s', 'quit'], { encoding: 'utf8' })
    expect(quit.status, quit.stderr).toBe(0)
  })
})
