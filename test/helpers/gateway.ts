// startGateway(overrides): the real gateway, started the way the bin starts it
// (startGatewayServer), on 127.0.0.1 port 0 against a given upstream, with callers for each
// scope, a metrics listener on port 0, and every log line captured for inspection. It closes
// itself when the test finishes; an explicit close() before that is safe.
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import type pino from 'pino'
import { onTestFinished } from 'vitest'
import type { GatewayApp } from '../../src/app.js'
import { loadConfig, type Env } from '../../src/config/index.js'
import { createLogger } from '../../src/core/logger.js'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startGatewayServer } from '../../src/server.js'
import type { Simulator } from '../../src/simulator/index.js'

export interface TestGateway {
  app: GatewayApp
  url: string
  metricsUrl: string
  logs: string[]
  tokens: { reader: string; controller: string; admin: string; all: string; none: string }
  env: Env
  /** re-reads GATEWAY_CALLERS_FILE, as SIGHUP does in the bin */
  reloadCallers: () => Promise<boolean>
  close: () => Promise<void>
}

export interface GatewayOverrides {
  simulator?: Simulator
  /** OPENOPERATOR_URL when no simulator is given */
  upstreamUrl?: string
  env?: Env
  /** prefix of the caller names (rate-limit keys), and tokens to reuse: replicas of one deployment */
  callerPrefix?: string
  tokens?: TestGateway['tokens']
  /** the control plane's clock (default Date.now) */
  clock?: () => number
  /** the ledger's clock (docs/design.md#one-clock): SQLite's own, PostgreSQL's server clock shifted onto it; default `clock` for SQLite, the server's unshifted */
  ledgerClock?: () => number
  /** this process's monotonic clock (docs/design.md#one-clock): default one that moves with `clock`; a test of wall-clock steps gives its own */
  monotonic?: () => number
}

const token = (): string => `tok-${randomBytes(18).toString('base64url')}`

export async function startGateway (o: GatewayOverrides = {}): Promise<TestGateway> {
  const tokens = o.tokens ?? { reader: token(), controller: token(), admin: token(), all: token(), none: token() }
  const p = o.callerPrefix ?? ''
  const callers = [
    { name: `${p}reader`, tokenSha256: sha256Hex(tokens.reader), scopes: ['read'] },
    { name: `${p}controller`, tokenSha256: sha256Hex(tokens.controller), scopes: ['read', 'control'], controllerId: 'ctl-1' },
    { name: `${p}admin`, tokenSha256: sha256Hex(tokens.admin), scopes: ['read', 'admin'] },
    { name: `${p}all`, tokenSha256: sha256Hex(tokens.all), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-all' },
    { name: `${p}nobody`, tokenSha256: sha256Hex(tokens.none), scopes: ['admin'] }
  ]
  const env: Env = {
    OPENOPERATOR_URL: o.simulator?.url ?? o.upstreamUrl,
    SPYNEL_AGENT_ZERO_API_KEY: o.simulator?.secret,
    GATEWAY_CALLERS: JSON.stringify(callers),
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    // each test gateway owns a ledger of its own; crash tests pass a file
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    LOG_LEVEL: 'trace',
    UPSTREAM_READ_TIMEOUT_MS: '4000',
    UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
    ...o.env
  }
  const logs: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  // no secrets handed to the scrubber: a leak must be absent at the source, and visible here if not
  const logger = createLogger({ level: 'trace', secrets: new Set(), destination: sink as unknown as pino.DestinationStream })
  const gw = await startGatewayServer(loadConfig(env), { logger, clock: o.clock, ledgerClock: o.ledgerClock, monotonic: o.monotonic })
  try {
    onTestFinished(async () => { await gw.close() })
  } catch (err) {
    // outside a test (a beforeAll) vitest refuses the hook: close now rather than leak
    await gw.close()
    throw err
  }
  return { app: gw.app, url: gw.url, metricsUrl: gw.metricsUrl, logs, tokens, env, reloadCallers: gw.reloadCallers, close: gw.close }
}
