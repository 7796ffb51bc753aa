// A real nginx in front of test gateways, as an ingress: started the way bench/nginx.ts starts
// it (a temporary prefix directory, one worker, no daemon, a free loopback port) — `runNginx`,
// which the shipped ingress (test/helpers/ingress.ts) uses too — with the gateway as its only
// upstream and the forwarding headers a test asks for (`startNginx`). `nginxAvailable()`
// lets a test skip, saying why, where nginx is not installed (.ci/run installs nginx-light).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const NGINX_SKIP = 'nginx is not installed (Debian: apt-get install nginx-light)'

export interface Nginx { url: string; close: () => Promise<void> }

export function nginxAvailable (): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      const port = typeof a === 'object' && a !== null ? a.port : 0
      s.close(() => { resolve(port) })
    })
  })
}

/**
 * an nginx main configuration whose files all live in the prefix `dir` (pid, error log, temp
 * paths), one worker, `httpBlock` as the body of its http block; as root, its worker runs as root
 * so it can read the prefix. `daemon: false` keeps the master in the foreground, for a test that
 * owns the process; otherwise it daemonises, as a host's nginx does
 */
export function nginxMainConf (dir: string, httpBlock: string, o: { daemon: boolean; workerConnections: number }): string {
  return `
worker_processes 1;
${o.daemon ? '' : 'daemon off;\nmaster_process on;'}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections ${o.workerConnections}; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${httpBlock}
}
`
}

export interface RunningNginx extends Nginx { port: number; dir: string; errorLog: () => string }

/**
 * nginx on 127.0.0.1:`port` (a free one unless given) in a temporary prefix directory, with
 * `http(dir, port)` as the body of its http block; ready once its port accepts. Closed by the
 * caller, or killed when the test process exits.
 */
export async function runNginx (http: (dir: string, port: number) => string, o: { port?: number; prefix?: string } = {}): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), o.prefix ?? 'oo-gw-test-nginx-'))
  const port = o.port ?? await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxMainConf(dir, http(dir, port), { daemon: false, workerConnections: 1024 }))
  const proc: ChildProcess = spawn('nginx', ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  proc.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => { resolve() }))
  // nginx is no IPC child: it must not outlive a test run that crashes or is interrupted
  const orphanGuard = (): void => { proc.kill('SIGKILL') }
  process.once('exit', orphanGuard)
  const errorLog = (): string => { try { return readFileSync(join(dir, 'error.log'), 'utf8') } catch { return '' } }
  const close = async (): Promise<void> => {
    process.off('exit', orphanGuard)
    proc.kill('SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())])
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  // ready when the port accepts (the upstreams need not be up yet)
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) {
      const log = errorLog()
      await close()
      throw new Error(`nginx exited (${proc.exitCode}): ${stderr}${log}`)
    }
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1')
      s.once('connect', () => { s.destroy(); resolve(true) })
      s.once('error', () => { resolve(false) })
    })
    if (up) break
    if (i > 100) { await close(); throw new Error('nginx did not start within 5 s') }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { url: `http://127.0.0.1:${port}`, port, dir, errorLog, close }
}

/** nginx on 127.0.0.1 proxying everything to `upstream` (http://host:port) with `directives` in its location */
export async function startNginx (upstream: string, directives: string): Promise<Nginx> {
  return await runNginx((_dir, port) => `
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      ${directives}
    }
  }`)
}
