// The real system a model-based history runs against (docs/design.md#campaign-control): the
// simulator in campaign-control mode behind a TCP forwarder (shut it and nothing can leave the
// gateway), and the gateway started as the bin starts it — one replica on an SQLite file, or two
// replicas on one PostgreSQL schema, requests spread over them in turn — restartable on the same
// ledger, with a control clock the history moves. Everything is over loopback sockets; the
// ledger is read in process only to cross-check what the REST side said.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type pino from 'pino'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { sha256Hex } from '../../src/caller-tokens.js'
import { startGatewayServer, type RunningGateway } from '../../src/server.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startForwarder, type Forwarder } from '../helpers/forwarder.js'
import type { Op } from './model.js'
import { call, type JsonResponse } from '../helpers/http.js'

export const CALLERS = ['c1', 'c2'] as const
export type CallerName = typeof CALLERS[number]
export const CONTROLLER_OF: Record<CallerName, string> = { c1: 'ctl-1', c2: 'ctl-2' }
export const CAMPAIGNS = ['camp-a', 'camp-b'] as const
export type Campaign = typeof CAMPAIGNS[number]

/** the gateway's timing in histories: short, so that a lost answer costs little real time */
export const TIMING = {
  connectMs: 500,
  mutationMs: 400,
  readMs: 2000,
  leaseSafetyMs: 2000,
  /** the owner's wait plus the grace, as docs/design.md#outcomes counts it */
  graceMs: 30_000
}

/** each operation's JSON-RPC method on the simulator's campaign-control remote */
export const METHOD: Record<Op, string> = {
  claim: 'campaign/claim_control',
  renew: 'campaign/renew_control',
  release: 'campaign/release_control',
  submit: 'message/send',
  intervene: 'campaign/intervene',
  cancel: 'tasks/cancel'
}

/** the same operations on an A2A v1.0 remote: the A2A methods renamed, the extension's as its card maps them */
const METHOD_V1: Record<Op, string> = { ...METHOD, submit: 'SendMessage', cancel: 'CancelTask' }
export const methodsOf = (protocol: 'v0.3' | 'v1.0'): Record<Op, string> => protocol === 'v1.0' ? METHOD_V1 : METHOD

export interface WorldOptions {
  /** a postgres:// URL of the run's own schema: two replicas share it; else one on SQLite */
  postgresUrl?: string
  /** the A2A generation the remote speaks (docs/design.md#protocol-versions); v0.3 by default */
  protocol?: 'v0.3' | 'v1.0'
}

export interface World {
  kind: 'sqlite' | 'postgres'
  /** the JSON-RPC method of each operation on this remote */
  methods: Record<Op, string>
  sim: Simulator
  fwd: Forwarder
  /** the replica that answers the next request (the ledger is shared, so any one reads it) */
  gw: RunningGateway
  replicas: RunningGateway[]
  /** the replica the last request went to, and the one the next goes to */
  lastReplica: () => number
  nextReplica: () => number
  tokens: Record<CallerName | 'admin', string>
  /** the gateway's control clock */
  gwNow: () => number
  /** moves both clocks (a jump or plain time passing) */
  advance: (ms: number) => void
  /** moves one clock only: the gateway's minus the remote's offset afterwards */
  skew: (gatewayMs: number) => void
  skewMs: () => number
  post: (who: CallerName | 'admin', path: string, body?: unknown) => Promise<JsonResponse>
  get: (who: CallerName | 'admin', path: string) => Promise<JsonResponse>
  /** stops (drain, close) and starts again one replica: the last one asked, by default */
  restart: (replica?: number) => Promise<void>
  /** every replica's pending sweep, as its timer would run it */
  sweep: () => Promise<void>
  logs: string[]
  close: () => Promise<void>
}

export async function startWorld (o: WorldOptions = {}): Promise<World> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  let remoteOffset = 0
  let gatewayOffset = 0
  const sim = await startSimulator({ profile: 'campaign-control', protocol: o.protocol ?? 'v0.3', secret, campaignControl: { now: () => Date.now() } })
  const fwd = await startForwarder(sim.url)
  const dir = mkdtempSync(join(tmpdir(), 'oogw-model-'))
  const tokens = { c1: `tok-${randomBytes(12).toString('hex')}`, c2: `tok-${randomBytes(12).toString('hex')}`, admin: `tok-${randomBytes(12).toString('hex')}` }
  const callers = [
    { name: 'c1', tokenSha256: sha256Hex(tokens.c1), scopes: ['read', 'control'], controllerId: CONTROLLER_OF.c1 },
    { name: 'c2', tokenSha256: sha256Hex(tokens.c2), scopes: ['read', 'control'], controllerId: CONTROLLER_OF.c2 },
    { name: 'admin', tokenSha256: sha256Hex(tokens.admin), scopes: ['read', 'admin'] }
  ]
  const config = loadConfig({
    OPENOPERATOR_URL: fwd.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify(callers),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: o.postgresUrl ?? `sqlite:${join(dir, 'ledger.db')}`,
    GATEWAY_LEASE_SAFETY_MS: String(TIMING.leaseSafetyMs),
    GATEWAY_RATE_LIMIT_CONTROL: '1000000',
    GATEWAY_RATE_LIMIT_READ: '1000000',
    GATEWAY_SHUTDOWN_GRACE_MS: '200',
    // a busy machine must not shed the history's requests: load shedding is proved elsewhere
    GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
    UPSTREAM_CONNECT_TIMEOUT_MS: String(TIMING.connectMs),
    UPSTREAM_MUTATION_TIMEOUT_MS: String(TIMING.mutationMs),
    UPSTREAM_READ_TIMEOUT_MS: String(TIMING.readMs),
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info'
  })
  const logs: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); if (logs.length > 400) logs.splice(0, 200); cb() } })
  const logger = createLogger({ level: 'info', secrets: new Set([secret]), destination: sink as unknown as pino.DestinationStream })
  const gwNow = (): number => Date.now() + gatewayOffset
  const start = async (): Promise<RunningGateway> => await startGatewayServer(config, { logger, clock: gwNow })
  const replicas = o.postgresUrl === undefined ? [await start()] : await Promise.all([start(), start()])
  let next = 0
  let last = 0
  /** round robin: deterministic for a given history, so a seed replays it */
  const pick = (): RunningGateway => {
    last = next
    next = (next + 1) % replicas.length
    return replicas[last]!
  }
  const world: World = {
    kind: o.postgresUrl === undefined ? 'sqlite' : 'postgres',
    methods: methodsOf(o.protocol ?? 'v0.3'),
    sim,
    fwd,
    get gw () { return replicas[0]! },
    replicas,
    lastReplica: () => last,
    nextReplica: () => next,
    tokens,
    gwNow,
    advance: (ms) => {
      sim.control.advanceClock(ms)
      remoteOffset += ms
      gatewayOffset += ms
    },
    skew: (ms) => {
      if (ms >= 0) gatewayOffset += ms
      else {
        sim.control.advanceClock(-ms)
        remoteOffset -= ms
      }
    },
    skewMs: () => gatewayOffset - remoteOffset,
    post: async (who, path, body = {}) => await call(`${pick().url}${path}`, { method: 'POST', token: tokens[who], body }),
    get: async (who, path) => await call(`${pick().url}${path}`, { token: tokens[who] }),
    restart: async (replica = last) => {
      await replicas[replica]!.close()
      replicas[replica] = await start()
    },
    sweep: async () => {
      for (const r of replicas) await r.app.control.sweep()
    },
    logs,
    close: async () => {
      for (const r of replicas) await r.close().catch(() => undefined)
      await fwd.close()
      await sim.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return world
}
