// What a gateway loads is what it runs (docs/design.md#tracing, docs/operating.md#docker): the start is
// a child process whose every resolved module is recorded (test/helpers/module-log.mjs). With
// tracing off, on a terminal, in production, it loads no OpenTelemetry SDK, no @fastify/otel and
// no pino-pretty — so the image may carry OpenTelemetry for whoever turns tracing on, and needs
// no pino-pretty at all. `@opentelemetry/api` alone is allowed: prom-client requires the no-op
// API itself. The same probe, outside production with tracing on, sees all three load: it would
// see them if the production start loaded them.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { waitFor } from '../helpers/child.js'
import { call } from '../helpers/http.js'
import { TRUSTED_CA_FILE, trustedServer } from '../helpers/tls.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const SECRET = `modules-secret-${randomBytes(8).toString('hex')}`
const token = `tok-${randomBytes(18).toString('base64url')}`

/** modules the gateway must not load unless tracing is on, or outside production on a terminal */
const OTEL_SDK = /\/node_modules\/@opentelemetry\/(?!api\/)/
const FASTIFY_OTEL = /\/node_modules\/@fastify\/otel\//
const PINO_PRETTY = /\/node_modules\/pino-pretty\//

let dir: string | undefined
let child: ChildProcess | undefined
let sim: Simulator | undefined
afterEach(async () => {
  child?.kill('SIGKILL')
  child = undefined
  await sim?.close()
  sim = undefined
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** `start` as the bin runs it, with every resolved module written to a file, stdout said to be a terminal */
function startRecorded (env: Record<string, string>): { out: () => string; modules: () => string[] } {
  dir = mkdtempSync(join(tmpdir(), 'gw-modules-'))
  const log = join(dir, 'modules.log')
  child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/helpers/module-log.mjs', 'src/cli/index.ts', 'start'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, MODULE_LOG: log, MODULE_LOG_TTY: '1', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { out += d.toString() })
  const modules = (): string[] => { try { return readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') } catch { return [] } }
  return { out: () => out, modules }
}

// two whole gateways started under tsx with every module logged: tagged slow, npm test's
describe('modules loaded at start', { tags: ['slow'] }, () => {
  it('production with tracing off, on a terminal: no OpenTelemetry SDK, no @fastify/otel, no pino-pretty — after serving a read', async () => {
    sim = await startSimulator({ secret: SECRET, tls: trustedServer })
    const p = startRecorded({
      NODE_ENV: 'production',
      OPENOPERATOR_URL: sim.url,
      SPYNEL_AGENT_ZERO_API_KEY: SECRET,
      UPSTREAM_CA_FILE: TRUSTED_CA_FILE,
      GATEWAY_CALLERS: JSON.stringify([{ name: 'reader', tokenSha256: sha256Hex(token), scopes: ['read'] }]),
      GATEWAY_LEDGER_URL: 'sqlite::memory:',
      // the modules are the subject, not the load: on a busy machine (test files in parallel) the
      // start's own work can pass the event-loop bound and shed the read as 503 overloaded.
      // The plugin is imported either way; only its sampler stays off
      GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0'
    })
    const url = await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(p.out())?.[1], 20_000, 'the gateway to listen')
    const read = await call(`${url}/v1/supervisor/health`, { token })
    expect(read.status, read.text).toBe(200)
    // JSON lines, not pino-pretty's layout, though stdout says it is a terminal
    expect(p.out()).toMatch(/^\{"level":/m)
    const modules = p.modules()
    // the probe saw the start: Fastify and the ledger's driver were recorded
    expect(modules.some((m) => m.includes('/node_modules/fastify/'))).toBe(true)
    expect(modules.some((m) => m.includes('/node_modules/better-sqlite3/'))).toBe(true)
    expect(modules.filter((m) => OTEL_SDK.test(m) || FASTIFY_OTEL.test(m) || PINO_PRETTY.test(m))).toEqual([])
  })

  it('the probe sees them when they load: outside production on a terminal with tracing on', async () => {
    const p = startRecorded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '60000' })
    const loaded = (re: RegExp): boolean => p.modules().some((m) => re.test(m))
    await waitFor(() => loaded(OTEL_SDK) && loaded(FASTIFY_OTEL) && loaded(PINO_PRETTY) ? true : undefined, 20_000, 'the SDK, @fastify/otel and pino-pretty to load')
    expect(p.modules().some((m) => m.includes('/node_modules/@opentelemetry/sdk-node/'))).toBe(true)
  })
})
