// The real system a model-based history runs against (docs/design.md#campaign-control): the
// simulator in campaign-control mode behind a TCP forwarder (shut it and nothing can leave the
// gateway), and the gateway started as the bin starts it — one replica on an SQLite file, or two
// replicas on one PostgreSQL schema, requests spread over them in turn — restartable on the same
// ledger. Callers: two static controllers, two JWT identities (different subjects) presenting the
// same controller id claim, a static controller granted one campaign alone (docs/design.md#grants),
// and an admin. Clocks: the ledger's (PostgreSQL's, shifted by the time
// the history advanced; SQLite's is its replica's), the remote's, and one per replica, each of
// which the history moves (docs/design.md#one-clock). Everything is over loopback sockets; the
// ledger is read in process only to cross-check what the REST side said, and each mutation's
// steps are marked (`onMutationStep`) so the checker can tell when its owner stopped waiting.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import pg from 'pg'
import type pino from 'pino'
import { loadConfig } from '../../src/config/index.js'
import { createLogger } from '../../src/core/logger.js'
import { sha256Hex } from '../../src/callers/tokens.js'
import { ERROR_TABLE, isErrorCode } from '../../src/core/errors.js'
import type { MutationStep } from '../../src/control/pipeline.js'
import { startGatewayServer, type RunningGateway } from '../../src/server.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startForwarder, type Forwarder } from '../helpers/forwarder.js'
import { AUDIENCE, ISSUER, sign, testKey, type TestKey } from '../helpers/jwks.js'
import type { Op } from './model.js'
import { call, type JsonResponse } from '../helpers/http.js'

/**
 * c1, c2: static callers; j1, j2: JWT callers (subjects team-x, team-y) whose tokens claim the same
 * controller id and the same display name (their `azp`, the name claim here, as operating.md's
 * Keycloak example maps it): two identities, one name (docs/design.md#controller-bindings)
 */
export const CALLERS = ['c1', 'c2', 'j1', 'j2'] as const
/**
 * g1: a static controller whose grants reach camp-a alone (docs/design.md#grants); the histories
 * send its mutations and reads to both campaigns, and check that nothing of camp-b reaches the
 * remote for it or comes back to it
 */
export const GRANTED = 'g1'
export type CallerName = typeof CALLERS[number] | typeof GRANTED
/** every caller a history may resolve a lease holder to */
export const ALL_CALLERS: readonly CallerName[] = [...CALLERS, GRANTED]
export const CONTROLLER_OF: Record<CallerName, string> = { c1: 'ctl-1', c2: 'ctl-2', j1: 'ctl-jwt', j2: 'ctl-jwt', g1: 'ctl-g1' }
/** the caller name the gateway gives each (a JWT caller's is `jwt:<name claim>`): j1 and j2 share one */
export const NAME_OF: Record<CallerName, string> = { c1: 'c1', c2: 'c2', j1: 'jwt:model-client', j2: 'jwt:model-client', g1: 'g1' }
/** who each caller is to the gateway: what owns its records, sends and bindings */
export const IDENTITY_OF: Record<CallerName, string> = { c1: 'static:c1', c2: 'static:c2', j1: `jwt:${ISSUER}#team-x`, j2: `jwt:${ISSUER}#team-y`, g1: 'static:g1' }
export const CAMPAIGNS = ['camp-a', 'camp-b'] as const
export type Campaign = typeof CAMPAIGNS[number]
/** the campaigns each caller's grants reach, read and control alike: g1's alone are limited */
export const granted = (caller: CallerName, campaign: Campaign): boolean => caller !== GRANTED || campaign === 'camp-a'
/** the remote's campaign list: each campaign under a project of its own */
export const CAMPAIGN_LIST = [{ campaign_id: 'camp-a', project: 'proj-a', stage: 'train' }, { campaign_id: 'camp-b', project: 'proj-b', stage: 'eval' }]

/** the gateway's timing in histories: short, so that a lost answer costs little real time */
export const TIMING = {
  connectMs: 500,
  mutationMs: 400,
  readMs: 2000,
  leaseSafetyMs: 2000,
  /** the owner's wait plus the grace, as docs/design.md#outcomes counts it */
  graceMs: 30_000
}

/** how long a sent mutation's owner may wait (docs/design.md#outcomes): the deadline is this past the ledger's clock at the send */
export const ownerWaitMs = (op: Op): number => TIMING.connectMs + TIMING.mutationMs + (op === 'renew' ? TIMING.readMs : 0) + TIMING.graceMs

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

/** the campaign locks' advisory key namespace (src/ledger/postgres/locks.ts) */
const LOCK_NAMESPACE = 726_011

export interface WorldOptions {
  /** a postgres:// URL of the run's own schema: two replicas share it; else one on SQLite */
  postgresUrl?: string
  /** the A2A generation the remote speaks (docs/design.md#protocol-versions); v0.3 by default */
  protocol?: 'v0.3' | 'v1.0'
}

/** one step of a mutation, as a replica's pipeline reported it, on the real clock */
export interface StepMark { step: MutationStep; id: string; t: number }

export interface World {
  kind: 'sqlite' | 'postgres'
  /** the JSON-RPC method of each operation on this remote */
  methods: Record<Op, string>
  sim: Simulator
  fwd: Forwarder
  /** the first replica (the ledger is shared, so any one reads it) */
  gw: RunningGateway
  replicas: RunningGateway[]
  /** the replica the last request went to, and the one the next goes to */
  lastReplica: () => number
  nextReplica: () => number
  /** takes the next replica in turn (deterministic for a given history, so a seed replays it) */
  pickReplica: () => number
  tokens: Record<CallerName | 'admin', string>
  /** the ledger's clock: deadlines are written and judged on it */
  ledgerNow: () => number
  /** a replica's own clock */
  replicaNow: (replica: number) => number
  /**
   * the replicas' monotonic clock (docs/design.md#one-clock): time passing moves it, a replica's
   * or the remote's clock moving alone does not (for the gateway that is a step of its wall clock)
   */
  monoNow: () => number
  /** when each replica last started, on the monotonic clock: before and after its start (the gateway takes its own moment in between) */
  startedAt: (replica: number) => { from: number; to: number }
  /** how many times each replica has started */
  incarnation: (replica: number) => number
  /** a replica's offsets (peer minus local, ms), as it would measure them exactly */
  offsets: (replica: number) => { ledger: number; remote: number }
  /** the clocks' offsets as set: each replica's from the ledger's, the remote's from the ledger's */
  skews: () => { replicas: number[]; remote: number }
  /**
   * how far ahead of the real clock (Date.now) the ledger's and each replica's clock run: never
   * behind it, as a history moves them, because the gateway's upstream calls budget their
   * timeouts on the real clock from deadlines taken on the control clock (one clock on a real
   * machine; two in a test that moves only one)
   */
  aheadOfReal: () => { ledger: number; replicas: number[] }
  /** time passes on every clock (a jump when large) */
  advance: (ms: number) => void
  /** one replica's clock moves alone (on SQLite its ledger's with it: the ledger's clock is its own) */
  moveReplica: (replica: number, ms: number) => void
  /** the remote's clock moves against all the others */
  moveRemote: (ms: number) => void
  /** the replica measures its offset to the ledger's clock now, as its 30 s timer would */
  measure: (replica: number) => Promise<number>
  post: (who: CallerName | 'admin', path: string, body?: unknown) => Promise<JsonResponse>
  postTo: (replica: number, who: CallerName | 'admin', path: string, body?: unknown) => Promise<JsonResponse>
  get: (who: CallerName | 'admin', path: string) => Promise<JsonResponse>
  /** stops (drain, close) and starts again one replica: the last one asked, by default */
  restart: (replica?: number) => Promise<void>
  /** every replica's pending sweep, as its timer would run it: the ids each turned ambiguous */
  sweep: () => Promise<string[]>
  /** PostgreSQL: terminates the sessions holding (and with `waiters`, awaiting) this world's campaign locks; answers how many */
  killLockSessions: (o?: { waiters?: boolean }) => Promise<number>
  /** gateway_ledger_lock_sessions_lost_total summed over every replica this world ran */
  lockSessionsLost: () => Promise<number>
  /** every mutation step every replica reported */
  marks: StepMark[]
  /** REST requests outstanding now, and the most at once so far */
  inFlight: () => { now: number; max: number }
  logs: string[]
  close: () => Promise<void>
}

/** the identity provider's key and the JWT callers' tokens: one per process (signing is slow) */
let jwtKit: Promise<{ key: TestKey; j1: string; j2: string }> | undefined
async function jwtCallers (): Promise<{ key: TestKey; j1: string; j2: string }> {
  jwtKit ??= (async () => {
    const key = await testKey('model-k1', 'ES256')
    const exp = Math.floor(Date.now() / 1000) + 12 * 3600
    const claims = (sub: string): Record<string, unknown> => ({ sub, azp: 'model-client', scope: 'read control', oo_controller_id: CONTROLLER_OF.j1, exp })
    return { key, j1: await sign(key, claims('team-x')), j2: await sign(key, claims('team-y')) }
  })()
  return await jwtKit
}

/** a contract answer: a success, or an error code of the contract's table at its status, never a 500 */
export function expectContractAnswer (res: JsonResponse, what: string): void {
  if (res.status < 300) return
  const code: unknown = res.body?.error?.code
  if (!isErrorCode(code) || ERROR_TABLE[code].status !== res.status || res.status === 500) {
    throw new Error(`${what}: ${res.status} is no contract answer: ${res.text.slice(0, 300)}`)
  }
}

export async function startWorld (o: WorldOptions = {}): Promise<World> {
  const secret = `sim-${randomBytes(12).toString('hex')}`
  const postgres = o.postgresUrl !== undefined
  const n = postgres ? 2 : 1
  // the clocks, as offsets from Date.now: the ledger's, the remote's, each replica's
  let ledgerOffset = 0
  const replicaOffset = Array.from({ length: n }, () => 0)
  let monoOffset = 0
  const monoNow = (): number => performance.now() + monoOffset
  const startedAt = Array.from({ length: n }, () => ({ from: 0, to: 0 }))
  const incarnations = Array.from({ length: n }, () => 0)
  const sim = await startSimulator({ profile: 'campaign-control', protocol: o.protocol ?? 'v0.3', secret, campaignControl: { now: () => Date.now() }, campaigns: CAMPAIGN_LIST })
  const fwd = await startForwarder(sim.url)
  const dir = mkdtempSync(join(tmpdir(), 'oogw-model-'))
  const jwt = await jwtCallers()
  const jwksFile = join(dir, 'jwks.json')
  writeFileSync(jwksFile, JSON.stringify({ keys: [jwt.key.jwk] }))
  const tokens = { c1: `tok-${randomBytes(12).toString('hex')}`, c2: `tok-${randomBytes(12).toString('hex')}`, j1: jwt.j1, j2: jwt.j2, g1: `tok-${randomBytes(12).toString('hex')}`, admin: `tok-${randomBytes(12).toString('hex')}` }
  const callers = [
    { name: 'c1', tokenSha256: sha256Hex(tokens.c1), scopes: ['read', 'control'], controllerId: CONTROLLER_OF.c1 },
    { name: 'c2', tokenSha256: sha256Hex(tokens.c2), scopes: ['read', 'control'], controllerId: CONTROLLER_OF.c2 },
    { name: 'g1', tokenSha256: sha256Hex(tokens.g1), scopes: ['read', 'control'], controllerId: CONTROLLER_OF.g1, grants: { control: { campaigns: ['camp-a'] } } },
    { name: 'admin', tokenSha256: sha256Hex(tokens.admin), scopes: ['read', 'admin'] }
  ]
  const config = loadConfig({
    OPENOPERATOR_URL: fwd.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify(callers),
    GATEWAY_JWT_ISSUER: ISSUER,
    GATEWAY_JWT_AUDIENCE: AUDIENCE,
    GATEWAY_JWT_JWKS_FILE: jwksFile,
    // the display name from a claim both subjects share: ownership must follow the identity
    GATEWAY_JWT_CLAIMS: JSON.stringify({ name: 'azp' }),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: o.postgresUrl ?? `sqlite:${join(dir, 'ledger.db')}`,
    // the smallest window: a history's prune command moves the clocks a day on to reach it
    GATEWAY_LEDGER_RETENTION_DAYS: '1',
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
  const replicaNow = (i: number): number => Date.now() + replicaOffset[i]!
  // SQLite: one replica owns the file and its clock is the ledger's (docs/design.md#one-clock)
  const ledgerNow = (): number => postgres ? Date.now() + ledgerOffset : replicaNow(0)
  const marks: StepMark[] = []
  const start = async (i: number): Promise<RunningGateway> => {
    const from = monoNow()
    incarnations[i]!++
    const gw = await startGatewayServer(config, {
      logger,
      clock: () => replicaNow(i),
      monotonic: monoNow,
      // PostgreSQL's clock moves with the history's time, never with one replica's skew
      ...(postgres ? { ledgerClock: () => Date.now() + ledgerOffset } : {}),
      onMutationStep: (step, id) => { marks.push({ step, id, t: Date.now() }) }
    })
    startedAt[i] = { from, to: monoNow() }
    return gw
  }
  const replicas = await Promise.all(Array.from({ length: n }, async (_, i) => await start(i)))
  let next = 0
  let last = 0
  let outstanding = 0
  let maxOutstanding = 0
  let lostBefore = 0
  const admin = postgres ? new pg.Client({ connectionString: withApplicationName(o.postgresUrl!, 'admin') }) : undefined
  await admin?.connect()
  const schemaApp = postgres ? new URL(o.postgresUrl!).searchParams.get('application_name') : null
  const lostOf = async (r: RunningGateway): Promise<number> => {
    const text = (await call(`${r.metricsUrl}/metrics`)).text
    return Number(/^gateway_ledger_lock_sessions_lost_total (\d+)/m.exec(text)?.[1] ?? 0)
  }
  const pickReplica = (): number => {
    last = next
    next = (next + 1) % replicas.length
    return last
  }
  /** every answer is checked against the contract's codes: never a 500 */
  const postTo = async (i: number, who: CallerName | 'admin', path: string, body: unknown = {}): Promise<JsonResponse> => {
    last = i
    outstanding++
    maxOutstanding = Math.max(maxOutstanding, outstanding)
    try {
      const res = await call(`${replicas[i]!.url}${path}`, { method: 'POST', token: tokens[who], body })
      expectContractAnswer(res, `POST ${path} by ${who}`)
      return res
    } finally {
      outstanding--
    }
  }
  const world: World = {
    kind: postgres ? 'postgres' : 'sqlite',
    methods: methodsOf(o.protocol ?? 'v0.3'),
    sim,
    fwd,
    get gw () { return replicas[0]! },
    replicas,
    lastReplica: () => last,
    nextReplica: () => next,
    pickReplica,
    tokens,
    ledgerNow,
    replicaNow,
    monoNow,
    startedAt: (i) => startedAt[i]!,
    incarnation: (i) => incarnations[i]!,
    offsets: (i) => ({ ledger: ledgerNow() - replicaNow(i), remote: sim.control.now() - replicaNow(i) }),
    skews: () => ({ replicas: replicaOffset.map((r) => postgres ? r - ledgerOffset : 0), remote: sim.control.now() - ledgerNow() }),
    aheadOfReal: () => ({ ledger: postgres ? ledgerOffset : replicaOffset[0]!, replicas: [...replicaOffset] }),
    advance: (ms) => {
      sim.control.advanceClock(ms)
      ledgerOffset += ms
      monoOffset += ms
      for (let i = 0; i < n; i++) replicaOffset[i]! += ms
    },
    moveReplica: (i, ms) => { replicaOffset[i]! += ms },
    moveRemote: (ms) => {
      if (ms >= 0) sim.control.advanceClock(ms)
      else {
        // the remote's clock only moves forward: every other clock does instead
        ledgerOffset -= ms
        for (let i = 0; i < n; i++) replicaOffset[i]! -= ms
      }
    },
    measure: async (i) => await replicas[i]!.app.control.clocks.measureLedger(),
    post: async (who, path, body = {}) => await postTo(pickReplica(), who, path, body),
    postTo,
    get: async (who, path) => await call(`${replicas[pickReplica()]!.url}${path}`, { token: tokens[who] }),
    restart: async (replica = last) => {
      lostBefore += await lostOf(replicas[replica]!).catch(() => 0)
      await replicas[replica]!.close()
      replicas[replica] = await start(replica)
    },
    sweep: async () => {
      const ids: string[] = []
      for (const r of replicas) ids.push(...await r.app.control.sweep())
      return ids
    },
    killLockSessions: async (k = {}) => {
      if (admin === undefined) return 0
      // only this world's sessions (its schema's application_name): other runs share the server
      const res = await admin.query<{ killed: boolean }>(`SELECT pg_terminate_backend(pid) AS killed FROM (
        SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.classid = $1 AND a.application_name = $2 AND (l.granted OR $3)) s`, [LOCK_NAMESPACE, schemaApp, k.waiters === true])
      return res.rows.filter((r) => r.killed).length
    },
    lockSessionsLost: async () => {
      let sum = lostBefore
      for (const r of replicas) sum += await lostOf(r).catch(() => 0)
      return sum
    },
    marks,
    inFlight: () => ({ now: outstanding, max: maxOutstanding }),
    logs,
    close: async () => {
      for (const r of replicas) await r.close().catch(() => undefined)
      await admin?.end().catch(() => undefined)
      await fwd.close()
      await sim.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return world
}

function withApplicationName (url: string, suffix: string): string {
  const u = new URL(url)
  u.searchParams.set('application_name', `${u.searchParams.get('application_name') ?? 'oogw'}_${suffix}`)
  return u.toString()
}
