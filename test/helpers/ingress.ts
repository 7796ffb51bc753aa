// The shipped ingress, docker/nginx/gateway.conf, run by a real nginx in front of test replicas:
// the very file, with only its replica addresses (`server gateway-N:8080`) and its `listen`
// rewritten to loopback ports, included from a minimal main configuration (a temporary prefix
// directory, one worker, no daemon), as test/helpers/nginx.ts starts nginx. A rewrite that
// finds nothing to rewrite throws, so the file and the tests cannot drift apart silently.
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, runNginx, type RunningNginx } from './nginx.js'

export const INGRESS_CONF = fileURLToPath(new URL('../../docker/nginx/gateway.conf', import.meta.url))

/** the replica names and API port the shipped file names (docker/compose.yaml's services) */
export const SHIPPED_REPLICA = /^(\s*server\s+)(gateway-\d+):(\d+)(\b[^;]*;)/gm

export type Ingress = RunningNginx

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
  const port = o.port ?? await freePort()
  return await runNginx((dir) => {
    writeFileSync(join(dir, 'gateway.conf'), renderIngressConf(replicas, `127.0.0.1:${port}`, o.replace))
    return `  include ${dir}/gateway.conf;`
  }, { port, prefix: 'oo-gw-test-ingress-' })
}

/** every value of a directive in the shipped file (`name value;`), in order */
export function ingressDirective (name: string): string[] {
  const text = readFileSync(INGRESS_CONF, 'utf8').split('\n').filter((l) => !l.trim().startsWith('#')).join('\n')
  return [...text.matchAll(new RegExp(`^\\s*${name}\\s+([^;]+);`, 'gm'))].map((m) => m[1]!.trim())
}
