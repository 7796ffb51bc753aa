// The OpenOperator A2A simulator: an independent reading of the remote's contract (seeds and
// recorded fixtures), sharing no code with the gateway, with fault injection for tests and, for
// people, through SIMULATOR_FAULTS and the loopback-only admin routes (docs/design.md#simulator-faults).
// Its rooms import one way (test/simulator/no-circles.test.ts): books/ (what it remembers) ←
// rpc/ (a call and its answer) ← extensions/ (Argus, campaign control) ← wire/ (v0.3, v1.0) ←
// dispatch.ts (which wire answers a call) ← routes/; profiles.ts holds where the remotes differ.
import type { AddressInfo } from 'node:net'
import { buildSimulatorApp } from './app.js'
import { DEMO_FILE_PATH, DEMO_TASK_ID, demoTask } from './books/seed-task.js'
import { handleRpc } from './dispatch.js'
import { resolveOptions } from './options.js'
import { PROFILES } from './profiles.js'
import { createState } from './state.js'
import type { RpcCall, Simulator, SimulatorOptions } from './types.js'

export type {
  ArgusErrorCode,
  ArgusErrorPlacement,
  AppliedMutation,
  AuthScheme,
  CampaignControlOptions,
  CardCacheOptions,
  CardRequestCounts,
  CardSigningKey,
  CardSigningOptions,
  CardTransform,
  ControlOperation,
  Fault,
  FaultRule,
  FaultTarget,
  HeldRequest,
  InterventionRecord,
  Lease,
  MutationOperation,
  ReceivedMutation,
  ReceivedRequest,
  RpcCall,
  Simulator,
  SimulatorControl,
  SimulatorOptions,
  SimulatorProfile,
  SimulatorProtocol,
  WireProfile
} from './types.js'
export { defaultCard } from './cards/card.js'
export type { CardOptions } from './cards/card.js'
export { ARGUS_URN } from './extensions/argus.js'
export { CONTROL_URN } from './extensions/control-options.js'
export { CONTROL_REFUSED_CODE } from './extensions/control-rules.js'
export { DEFAULT_SOURCE_SHA, SIMULATOR_PROTOCOLS } from './options.js'
export { FAULT_KINDS, FAULT_OPERATIONS, parseFaultRules, parseTaskSeconds } from './books/fault-spec.js'
export { DEFAULT_TASK_SECONDS, simulatorEnvOptions } from './env-options.js'
export { ADMIN_PREFIX, isLoopbackPeer } from './routes/admin.js'
export { DEMO_FILE_PATH, DEMO_TASK_ID }

export async function startSimulator (options: SimulatorOptions = {}): Promise<Simulator> {
  const opts = resolveOptions(options)
  const state = createState(opts, options.cardSigning)
  for (const rule of options.faults ?? []) state.faults.inject(rule.target, rule.fault, rule.times, rule.text)
  const app = buildSimulatorApp(state, options.tls)
  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 })
  state.origin = originOf(app.server.address() as AddressInfo, options.tls !== undefined)
  state.tasks.add(demoTask(state.origin, PROFILES[opts.profile], opts.sourceSha))

  let closed: Promise<void> | undefined
  return {
    url: state.origin,
    secret: opts.secret,
    received: state.received,
    rpcCalls: () => rpcCalls(state.received),
    inject: (target, fault, times) => state.faults.inject(target, fault, times),
    clearFaults: () => { state.faults.clear() },
    faults: () => state.faults.list(),
    setCard: (transform) => {
      state.cardTransform = transform
    },
    setCardAfterSigning: (transform) => {
      state.cardAfterSigning = transform
    },
    setCardSigning: (signing) => state.signer.set(signing),
    setCampaigns: (campaigns) => { state.campaigns = campaigns },
    cardRequests: () => structuredClone(state.cardCounts),
    addTask: (task) => state.tasks.add(task),
    getTask: (id) => state.tasks.get(id),
    control: {
      applied: () => state.control.applied(),
      lease: (campaignId) => state.control.liveLease(campaignId),
      interventions: (campaignId) => state.control.interventions(campaignId),
      received: () => state.control.received(),
      requestCounts: () => state.control.requestCounts(),
      setLease: (campaignId, lease) => state.control.setLease(campaignId, lease),
      advanceClock: (ms) => state.control.advance(ms),
      now: () => state.control.now()
    },
    held: () => state.held.list(),
    deliverHeld: (filter) => state.held.deliver((input) => handleRpc(state, input), filter),
    dropHeld: (filter) => state.held.drop(filter),
    reset: () => {
      // In place: callers may hold on to `received`.
      state.received.length = 0
      state.cardCounts = {}
      state.faults.clear()
      state.cardTransform = opts.initialCard
      state.cardAfterSigning = opts.initialCardAfterSigning
    },
    close: () => {
      closed ??= (async () => {
        // Also drops the held requests (their sockets are destroyed), so nothing is left waiting.
        state.closing.abort()
        await app.close()
      })()
      return closed
    }
  }
}

function originOf (address: AddressInfo, tls: boolean): string {
  // A wildcard bind is still reached through loopback (the test certificates name 127.0.0.1).
  let host = address.address
  if (host === '0.0.0.0' || host === '::') host = '127.0.0.1'
  if (host.includes(':')) host = `[${host}]`
  return `${tls ? 'https' : 'http'}://${host}:${address.port}`
}

function rpcCalls (received: Simulator['received']): RpcCall[] {
  const calls: RpcCall[] = []
  for (const r of received) {
    if (r.method !== 'POST' || r.path.split('?')[0] !== '/a2a/') continue
    const json = r.json
    if (typeof json !== 'object' || json === null || Array.isArray(json)) continue
    const { method, id, params } = json as Record<string, unknown>
    if (typeof method === 'string') calls.push({ method, id, params, headers: r.headers })
  }
  return calls
}
