// The shipped ingress, docker/nginx/gateway.conf, run by a real nginx in front of test replicas:
// the very file, with only its replica addresses (`server gateway-N:8080`) and its `listen`
// rewritten to loopback ports, included from a minimal main configuration (a temporary prefix
// directory, one worker, no daemon), as test/helpers/nginx.ts starts nginx. A rewrite that
// finds nothing to rewrite throws, so the file and the tests cannot drift apart silently.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const INGRESS_CONF = fileURLToPath(new URL('../../docker/nginx/gateway.conf', import.meta.url))

/** the replica names and API port the shipped file names (docker/compose.yaml's services) */
export const SHIPPED_REPLICA = /^(\s*server\s+)(gateway-\d+):(\d+)(\b[^;]*;)/gm

export interface Ingress { url: string; port: number; dir: string; errorLog: () => string; close: () => Promise<void> }

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
 * A free loopback port below Linux's ephemeral range (32768–60999), for a replica that must get
 * the same port back after its restart: no listener on port 0 or outgoing socket elsewhere in the
 * test run can take it meanwhile.
 */
export async function fixedPort (): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer()
      s.once('error', () => { resolve(false) })
      s.listen(port, '127.0.0.1', () => { s.close(() => { resolve(true) }) })
    })
    if (free) return port
  }
  throw new Error('no free port found in 20000–31999')
}

/**
 * The shipped file with its replicas replaced, in order, by `replicas` (host:port) — exactly as
 * many as it names — its `listen 8080;` by `listen <listen>;`, and any `replace` pairs applied
 * (each must match).
 */
export function renderIngressConf (replicas: string[], listen: string, replace: Array<[string, string]> = []): string {
  let text = readFileSync(INGRESS_CONF, 'utf8')
  const named = [...text.matchAll(SHIPPED_REPLICA)].length
  if (named !== replicas.length) throw new Error(`${INGRESS_CONF} names ${named} replicas, the test ${replicas.length}`)
  let i = 0
  text = text.replace(SHIPPED_REPLICA, (_m, head: string, _host: string, _port: string, tail: string) => `${head}${replicas[i++]!}${tail}`)
  for (const [from, to] of [['listen 8080;', `listen ${listen};`], ...replace] as Array<[string, string]>) {
    if (!text.includes(from)) throw new Error(`${INGRESS_CONF} no longer contains "${from}"`)
    text = text.replace(from, to)
  }
  return text
}

/** nginx on 127.0.0.1 (a free port unless given) with the shipped ingress in front of `replicas` */
export async function startIngress (replicas: string[], o: { port?: number; replace?: Array<[string, string]> } = {}): Promise<Ingress> {
  const dir = mkdtempSync(join(tmpdir(), 'oo-gw-test-ingress-'))
  const port = o.port ?? await freePort()
  writeFileSync(join(dir, 'gateway.conf'), renderIngressConf(replicas, `127.0.0.1:${port}`, o.replace))
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, `
worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/gateway.conf;
}
`)
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
  // ready when the port accepts (the replicas need not be up yet)
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

/** every value of a directive in the shipped file (`name value;`), in order */
export function ingressDirective (name: string): string[] {
  const text = readFileSync(INGRESS_CONF, 'utf8').split('\n').filter((l) => !l.trim().startsWith('#')).join('\n')
  return [...text.matchAll(new RegExp(`^\\s*${name}\\s+([^;]+);`, 'gm'))].map((m) => m[1]!.trim())
}
