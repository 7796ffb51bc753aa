// nginx as a plain proxy_pass in front of the bench upstream: the floor of what any proxy hop
// costs. Run as a child of the bench on a loopback port with a temporary configuration (one
// worker, as the gateway is one event loop; keep-alive to the upstream; no access log), bounded
// by the bench's own lifetime. Skipped with a hint when `nginx` is not installed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const NGINX_HINT = 'nginx is not installed: `apt-get install -y nginx` (Debian) adds the nginx row'

export interface Nginx { url: string; pid: number; close: () => Promise<void> }

export function nginxAvailable (): boolean {
  return spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0
}

async function freePort (): Promise<number> {
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

export async function startNginx (upstream: string): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-bench-nginx-'))
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, `
worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 100000;
  upstream bench { server ${upstream.replace(/^http:\/\//, '')}; keepalive 16; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://bench;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`)
  const proc: ChildProcess = spawn('nginx', ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => { resolve() }))
  // nginx is no IPC child: it must not outlive a bench that crashes or is interrupted
  const orphanGuard = (): void => { proc.kill('SIGKILL') }
  process.once('exit', orphanGuard)
  const url = `http://127.0.0.1:${port}`
  // ready when the port answers
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited (${proc.exitCode}); see ${dir}/error.log`)
    const up = await fetch(`${url}/`).then(() => true, () => false)
    if (up) break
    if (i > 100) throw new Error('nginx did not start within 5 s')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    url,
    pid: proc.pid ?? 0,
    close: async () => {
      process.off('exit', orphanGuard)
      proc.kill('SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())])
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** nginx's worker's CPU time (µs) and RSS, read from /proc (the master only forwards) */
export function nginxWorkerStats (masterPid: number): { cpuUs: number; rss: number } | undefined {
  const r = spawnSync('sh', ['-c', `for p in $(pgrep -P ${masterPid}); do cat /proc/$p/stat; done`], { encoding: 'utf8' })
  if (r.status !== 0 || r.stdout.trim() === '') return undefined
  let cpuUs = 0
  let rss = 0
  const tick = 1e6 / 100
  for (const line of r.stdout.trim().split('\n')) {
    const f = line.slice(line.lastIndexOf(')') + 2).split(' ')
    cpuUs += (Number(f[11]) + Number(f[12])) * tick
    rss += Number(f[21]) * 4096
  }
  return { cpuUs, rss }
}
