// The mutation pipeline (docs/design.md#order-of-checks, CONTRACT §6), step by step and in
// the contract's order, without sockets or Fastify: a real in-memory SQLite ledger, the real
// discovery over a scripted fake upstream, and an injected clock. Each step proves that the
// first failing check answers, that later checks are not reached, and that nothing is sent.
// After every test the fake's log shows no mutation request id sent twice.
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import type { Caller } from '../../schemas/callers.js'
import { createDiscovery, type Discovery } from '../../src/discovery/discovery.js'
import { GatewayError } from '../../src/core/errors.js'
import { createLedger } from '../../src/ledger/index.js'
import type { Ledger, MutationOperation, MutationRecord } from '../../src/ledger/types.js'
import { createLeaseKeeper, type LeaseKeeper } from '../../src/control/leases.js'
import { createClockWatch } from '../../src/control/clocks.js'
import { createPipeline, parseBody, priorUse, type MutationAnswer, type MutationRequest } from '../../src/control/pipeline.js'
import { constraintsEnvelope, paramsHash } from '../../src/control/rules.js'
import { requestView } from '../../src/control/views.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { CONTROL_METHODS, controlCard, createFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'

// ---- helpers ------------------------------------------------------------------------------

const T0 = 1_750_000_000_000
const MUTATION_TIMEOUT_MS = 10_000
const CONNECT_TIMEOUT_MS = 5_000
const LEASE_SAFETY_MS = 2_000
const INSTANCE = 'gw-unit-1'
const C1 = 'camp-1'
const C2 = 'camp-2'
const logger = pino({ level: 'silent' })

const alice: Caller = { name: 'alice', tokenSha256: 'a'.repeat(64), scopes: ['control'], controllerId: 'ctl-alice' }
const bob: Caller = { name: 'bob', tokenSha256: 'b'.repeat(64), scopes: ['control'], controllerId: 'ctl-bob' }

interface Rig {
  ledger: Ledger
  fake: FakeUpstream
  discovery: Discovery
  leases: LeaseKeeper
  mutate: (req: MutationRequest) => Promise<MutationAnswer>
  clock: { t: number }
}

const ledgers: Ledger[] = []
const fakes: FakeUpstream[] = []

afterEach(async () => {
  // the whole-file rule: no request id ever reaches the remote twice, whatever happened
  for (const fake of fakes.splice(0)) {
    const ids = fake.mutations().map((c) => c.id)
    expect(ids.every((id) => typeof id === 'string'), 'every mutation carries its request id').toBe(true)
    expect(new Set(ids).size, `a request id was sent twice: ${ids.join(', ')}`).toBe(ids.length)
  }
  for (const l of ledgers.splice(0)) await l.close()
})

/** the pipeline over a fresh (or the given) ledger, a fake remote and a discovered card */
async function rig (o: { controlEnabled?: boolean; card?: unknown; lockWaitMs?: number; ledger?: Ledger } = {}): Promise<Rig> {
  const clock = { t: T0 }
  const now = (): number => clock.t
  // the ledger's clock is the rig's: one SQLite process owns it (docs/design.md#one-clock)
  const ledger = o.ledger ?? await createLedger('sqlite::memory:', { ambiguousAnswer, now })
  if (o.ledger === undefined) ledgers.push(ledger)
  const fake = createFakeUpstream({ card: o.card })
  fakes.push(fake)
  const discovery = createDiscovery({ client: fake, origin: 'https://remote.test', basePath: '/a2a', cardMaxBytes: 1 << 20, controlEnabled: o.controlEnabled ?? true, intervalMs: 60_000, logger })
  await discovery.refresh()
  const leases = createLeaseKeeper({ ledger, client: fake, discovery, leaseSafetyMs: LEASE_SAFETY_MS, readTimeoutMs: 1_000, now })
  // the rig's clock moving is time passing (its monotonic clock is the same); the remote's clock
  // is measured once, exactly as a Date of this instant would (docs/design.md#one-clock): within
  // [0, 1 s] of the rig's, an allowance of 1 s beyond the safety margin
  const clocks = createClockWatch({ now, monotonic: now, ledgerNow: async () => await ledger.now(), marginMs: LEASE_SAFETY_MS })
  clocks.observeDate(now(), now(), now())
  const mutate = createPipeline({
    ledger,
    client: fake,
    discovery,
    leases,
    instanceId: INSTANCE,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    mutationTimeoutMs: MUTATION_TIMEOUT_MS,
    readTimeoutMs: 1_000,
    maxTaskResponseBytes: 1 << 20,
    lockWaitMs: o.lockWaitMs ?? 2_000,
    logger,
    now,
    clocks
  })
  return { ledger, fake, discovery, leases, mutate, clock }
}

let seq = 0
const rid = (prefix = 'req'): string => `${prefix}-${String(++seq).padStart(6, '0')}`

/** a mutation request; `key` is the Idempotency-Key header */
function req (operation: MutationOperation, body: unknown, o: { caller?: Caller; campaignId?: string; key?: string | string[] } = {}): MutationRequest {
  return { operation, campaignId: o.campaignId ?? C1, caller: o.caller ?? alice, body, idempotencyKey: o.key }
}

/** the GatewayError a step answers with (fails the test when there is none) */
async function refusal (p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p
  } catch (err) {
    if (err instanceof GatewayError) return err
    throw err
  }
  throw new Error('expected a GatewayError, got an answer')
}

function refusalSync (fn: () => unknown): GatewayError {
  try {
    fn()
  } catch (err) {
    if (err instanceof GatewayError) return err
    throw err
  }
  throw new Error('expected a GatewayError, got a value')
}

/** a lease as the remote writes it, expiring `secondsLeft` after the rig's clock */
const wireLease = (r: Rig, controllerId: string, epoch: number, secondsLeft = 600): Record<string, unknown> =>
  ({ controller_id: controllerId, epoch, expires_at: Math.floor(r.clock.t / 1000) + secondsLeft })

/** the gateway already knows this lease (as after a claim or a read_control) */
async function knownLease (r: Rig, campaignId: string, controllerId: string, epoch: number, secondsLeft = 600): Promise<void> {
  await r.ledger.putLease(campaignId, { controllerId, epoch, expiresAt: Math.floor(r.clock.t / 1000) + secondsLeft }, r.clock.t)
}

/** a finished record of the campaign that blocks it (or, with `pending`, one still in flight) */
async function unresolvedRecord (r: Rig, campaignId: string, state: 'ambiguous' | 'pending'): Promise<string> {
  const requestId = rid('open')
  // a deadline already past on the ledger's clock (the rig's), so expiry may take it at once
  await r.ledger.insertPending({ requestId, campaignId, caller: 'alice', identity: 'static:alice', operation: 'intervene', paramsHash: 'f'.repeat(64), params: {}, controllerEpoch: 1, owner: 'gw-other', waitMs: -1, createdAt: T0 }, await r.ledger.ticket(campaignId))
  if (state === 'ambiguous') expect(await r.ledger.expirePending(T0 + 2)).toEqual([requestId])
  return requestId
}

const records = async (r: Rig, campaignId = C1): Promise<MutationRecord[]> => await r.ledger.listByCampaign(campaignId)
const errorCode = (a: MutationAnswer): unknown => (a.body as { error?: { code?: unknown } }).error?.code

/** scripts a remote that accepts claims by ctl-alice at `epoch` */
/** the remote grants every claim for the TTL asked, on the rig's clock (no skew: docs/design.md#one-clock) */
function acceptClaims (r: Rig, epoch = 1, controllerId = 'ctl-alice'): void {
  r.fake.on(CONTROL_METHODS.claim_control, (call) => ({ result: { lease: wireLease(r, controllerId, epoch, (call.params as { ttl_seconds: number }).ttl_seconds) } }))
}

// ---- 1. body rules, aliases, strict schema ------------------------------------------------

describe('step 1: parseBody', () => {
  it('answers constraints_not_relaxable even when the body also fails the schema and holds a reserved field', async () => {
    expect(refusalSync(() => parseBody('claim', { ttlSeconds: 'sixty', bogus: 1, controller_id: 'x', deep: [{ Constraints: {} }] })).code).toBe('constraints_not_relaxable')
    // through the pipeline, even with no request id and in observer mode: nothing later is reached
    const r = await rig({ controlEnabled: false })
    const err = await refusal(r.mutate(req('intervene', { intervention: { constraints: { allow_merge: true } }, bogus: true })))
    expect(err.code).toBe('constraints_not_relaxable')
    expect(err.statusCode).toBe(400)
    expect(r.fake.calls).toEqual([])
    expect(await records(r)).toEqual([])
  })

  // a deep sibling first in key order must not hide a top-level constraints key
  it('answers constraints_not_relaxable whatever else the body nests deeply', () => {
    let deep: unknown = 1
    for (let i = 0; i < 70; i++) deep = { a: deep }
    expect(refusalSync(() => parseBody('intervene', { intervention: deep, constraints: {} })).code).toBe('constraints_not_relaxable')
  })

  it('answers reserved_field before the strict schema', () => {
    const err = refusalSync(() => parseBody('claim', { requestId: 'req-reserved1', ttlSeconds: 5, bogus: 1, controllerId: 'ctl-mallory' }))
    expect(err.code).toBe('reserved_field')
    expect(refusalSync(() => parseBody('intervene', { intervention: { 'urn:openoperator:x': 1 } })).code).toBe('reserved_field')
    expect(refusalSync(() => parseBody('submit', { parts: [{ kind: 'data', data: { argus_supervisor: {} } }] })).code).toBe('reserved_field')
  })

  it('answers invalid_request for an unknown key (strict schema)', async () => {
    const err = refusalSync(() => parseBody('release', { requestId: 'req-strict01', force: true }))
    expect(err.code).toBe('invalid_request')
    expect(err.statusCode).toBe(400)
    expect(refusalSync(() => parseBody('claim', { ttlSeconds: 10 })).code).toBe('invalid_request') // below 15
    const r = await rig()
    expect((await refusal(r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60, extra: 1 })))).code).toBe('invalid_request')
    expect(r.fake.calls).toEqual([])
  })

  // zod reports unknown keys as one issue at the object, with the names in `keys`
  it('names the unknown key in the message', () => {
    expect(refusalSync(() => parseBody('release', { requestId: 'req-strict01', force: true })).message).toContain('force')
  })

  it('normalises the snake_case aliases, and refuses both spellings with different values', async () => {
    expect(parseBody('claim', { request_id: 'req-alias001', ttl_seconds: 60 })).toEqual({ requestId: 'req-alias001', ttlSeconds: 60 })
    expect(parseBody('renew', { requestId: 'req-alias001', request_id: 'req-alias001', ttlSeconds: 60 })).toEqual({ requestId: 'req-alias001', ttlSeconds: 60 })
    expect(refusalSync(() => parseBody('claim', { ttlSeconds: 60, ttl_seconds: 61 })).code).toBe('conflicting_fields')

    // the alias spelling is what is sent and hashed: the camelCase spelling replays it
    const r = await rig()
    acceptClaims(r)
    const id = rid()
    const first = await r.mutate(req('claim', { request_id: id, ttl_seconds: 60 }))
    expect(first.httpStatus).toBe(200)
    expect(r.fake.mutations()[0]?.params).toMatchObject({ request_id: id, ttl_seconds: 60 })
    const again = await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    expect(again).toEqual({ ...first, replayed: true })
    expect(r.fake.mutations()).toHaveLength(1)
  })
})

// ---- 2. the request id --------------------------------------------------------------------

describe('step 2: the request id', () => {
  it('is required: neither body nor header is 400 invalid_request, nothing sent', async () => {
    const r = await rig()
    const err = await refusal(r.mutate(req('claim', { ttlSeconds: 60 })))
    expect(err.code).toBe('invalid_request')
    expect(err.message).toMatch(/request id/)
    expect(r.fake.calls).toEqual([])
    expect(await records(r)).toEqual([])
  })

  it('header and body ids that differ are conflicting_fields, before the id\'s earlier use is looked at', async () => {
    const r = await rig()
    acceptClaims(r)
    const bobs = rid('bob')
    await r.mutate(req('claim', { requestId: bobs, ttlSeconds: 60 }, { caller: bob, campaignId: C2 }))
    // the header names bob's id: the disagreement answers, not idempotency_key_conflict
    const err = await refusal(r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { key: bobs })))
    expect(err.code).toBe('conflicting_fields')
    expect(err.statusCode).toBe(400)
    expect((await refusal(r.mutate(req('claim', { ttlSeconds: 60 }, { key: [rid(), rid()] })))).code).toBe('conflicting_fields')
    expect(r.fake.mutations()).toHaveLength(1)
  })

  it('may come from the Idempotency-Key header alone, and is the id sent upstream', async () => {
    const r = await rig()
    acceptClaims(r)
    const id = rid('hdr')
    expect((await r.mutate(req('claim', { ttlSeconds: 60 }, { key: id }))).httpStatus).toBe(200)
    expect(r.fake.mutations()[0]).toMatchObject({ id, params: { request_id: id } })
    expect((await r.ledger.get(id))?.state).toBe('applied')
  })
})

// ---- 3. the id's earlier use ----------------------------------------------------------------

describe('step 3: priorUse', () => {
  const record = (o: Partial<MutationRecord>): MutationRecord => ({
    requestId: 'req-prior001',
    campaignId: C1,
    caller: 'alice',
    identity: 'static:alice',
    operation: 'claim',
    paramsHash: 'h1',
    params: {},
    controllerEpoch: null,
    owner: INSTANCE,
    deadline: T0,
    createdAt: T0,
    state: 'applied',
    updatedAt: T0,
    answer: { httpStatus: 200, body: { ok: 1 } },
    outcomeCode: null,
    taskId: null,
    reconcileFailures: 0,
    resolution: null,
    prunedAt: null,
    ...o
  })

  it('as a pure step: conflict before mismatch before in-flight before replay', () => {
    expect(priorUse(undefined, alice, 'h1')).toBeUndefined()
    const conflict = refusalSync(() => priorUse(record({ caller: 'bob', identity: 'static:bob', state: 'pending', answer: null }), alice, 'other'))
    expect(conflict.code).toBe('idempotency_key_conflict')
    expect(conflict.toBody().error.requestId).toBeUndefined()
    expect(refusalSync(() => priorUse(record({ state: 'pending', answer: null }), alice, 'other')).code).toBe('idempotency_key_mismatch')
    expect(refusalSync(() => priorUse(record({ state: 'pending', answer: null }), alice, 'h1')).code).toBe('request_in_flight')
    expect(priorUse(record({}), alice, 'h1')).toEqual({ httpStatus: 200, body: { ok: 1 }, replayed: true })
  })

  it('as a pure step: the owner is the identity, never the name (docs/design.md#request-records)', () => {
    const jwt = (sub: string): Caller => ({ name: 'jwt:ml-portal', identity: `jwt:https://idp.test#${sub}`, tokenSha256: 'c'.repeat(64), scopes: ['control'], controllerId: `ctl-${sub}` })
    const hers = record({ caller: 'jwt:ml-portal', identity: 'jwt:https://idp.test#alice' })
    expect(priorUse(hers, jwt('alice'), 'h1')).toMatchObject({ replayed: true })
    // one name, another subject: the conflict, even with the very same params
    expect(refusalSync(() => priorUse(hers, jwt('mallory'), 'h1')).code).toBe('idempotency_key_conflict')
    // a static caller whose name reads like the identity's is no JWT caller
    expect(refusalSync(() => priorUse(record({ identity: 'static:alice' }), jwt('alice'), 'h1')).code).toBe('idempotency_key_conflict')
    // a record of unknown owner (a JWT caller's from before migration 6) is no caller's, its writer's name included
    const unowned = record({ caller: 'jwt:ml-portal', identity: null })
    for (const c of [jwt('alice'), jwt('mallory'), { ...alice, name: 'jwt:ml-portal' }]) {
      expect(refusalSync(() => priorUse(unowned, c, 'h1')).code).toBe('idempotency_key_conflict')
    }
    // what a record shows follows the same owner: the details to its identity or an admin alone
    expect(requestView(hers, jwt('alice')).params).toEqual({})
    expect(requestView(hers, jwt('mallory'))).toEqual({ requestId: hers.requestId, operation: 'claim', state: 'applied', caller: 'jwt:ml-portal', createdAt: expect.any(String), updatedAt: expect.any(String) })
    expect(requestView(unowned, jwt('alice')).params).toBeUndefined()
    expect(requestView(unowned, { ...jwt('alice'), scopes: ['read', 'admin'] }).params).toEqual({})
  })

  it('another caller\'s id is 409 idempotency_key_conflict, even with other params, showing nothing of theirs', async () => {
    const r = await rig()
    acceptClaims(r, 1, 'ctl-bob')
    const id = rid()
    await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }, { caller: bob }))
    const err = await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 900 }, { campaignId: C2 })))
    expect(err.code).toBe('idempotency_key_conflict')
    expect(err.statusCode).toBe(409)
    expect(err.toBody()).toEqual({ error: { code: 'idempotency_key_conflict', message: err.message, retryable: false } })
    expect(r.fake.mutations()).toHaveLength(1)
  })

  it('the same caller with other params is 422 idempotency_key_mismatch', async () => {
    const r = await rig()
    acceptClaims(r)
    const id = rid()
    await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    for (const other of [req('claim', { requestId: id, ttlSeconds: 61 }), req('claim', { requestId: id, ttlSeconds: 60 }, { campaignId: C2 }), req('renew', { requestId: id, ttlSeconds: 60 })]) {
      const err = await refusal(r.mutate(other))
      expect(err.code).toBe('idempotency_key_mismatch')
      expect(err.statusCode).toBe(422)
      expect(err.requestId).toBe(id)
    }
    expect(r.fake.calls).toHaveLength(1)
  })

  it('params are compared in canonical form: another key order is the same request', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 1)
    r.fake.on(CONTROL_METHODS.intervene, { result: { accepted: true } })
    const id = rid()
    await r.mutate(req('intervene', { requestId: id, intervention: { a: 1, b: { c: 2, d: 3 } } }))
    expect((await r.mutate(req('intervene', { intervention: { b: { d: 3, c: 2 }, a: 1 }, requestId: id }))).replayed).toBe(true)
    expect(r.fake.calls).toHaveLength(1)
  })

  it('a pending record with the same params is 409 request_in_flight, nothing sent', async () => {
    const r = await rig()
    const id = rid()
    await r.ledger.insertPending({ requestId: id, campaignId: C1, caller: 'alice', identity: 'static:alice', operation: 'claim', paramsHash: paramsHash('claim', C1, { ttlSeconds: 60 }), params: {}, controllerEpoch: null, owner: INSTANCE, waitMs: 40_000, createdAt: T0 }, await r.ledger.ticket(C1))
    const err = await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))
    expect(err.code).toBe('request_in_flight')
    expect(err.requestId).toBe(id)
    expect(r.fake.calls).toEqual([])
  })

  it('a finished id replays the stored answer with replayed: true and no upstream call', async () => {
    const r = await rig()
    acceptClaims(r)
    const id = rid()
    const first = await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    expect(first.replayed).toBe(false)
    const before = r.fake.calls.length
    r.clock.t += 3_600_000 // the lease has long expired: a replay does not care
    const again = await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    expect(again).toEqual({ httpStatus: first.httpStatus, body: first.body, replayed: true })
    expect(r.fake.calls).toHaveLength(before)
  })

  it('every id check comes before the capability check: they all answer in observer mode', async () => {
    const controller = await rig()
    acceptClaims(controller)
    const done = rid('done')
    const first = await controller.mutate(req('claim', { requestId: done, ttlSeconds: 60 }))
    const inFlight = rid('flight')
    await controller.ledger.insertPending({ requestId: inFlight, campaignId: C2, caller: 'alice', identity: 'static:alice', operation: 'claim', paramsHash: paramsHash('claim', C2, { ttlSeconds: 60 }), params: {}, controllerEpoch: null, owner: INSTANCE, waitMs: 40_000, createdAt: T0 }, await controller.ledger.ticket(C2))

    const observer = await rig({ controlEnabled: false, ledger: controller.ledger })
    expect(observer.discovery.snapshot().mode).toBe('observer')
    expect(await observer.mutate(req('claim', { requestId: done, ttlSeconds: 60 }))).toEqual({ ...first, replayed: true })
    expect((await refusal(observer.mutate(req('claim', { requestId: done, ttlSeconds: 60 }, { caller: bob })))).code).toBe('idempotency_key_conflict')
    expect((await refusal(observer.mutate(req('claim', { requestId: done, ttlSeconds: 99 })))).code).toBe('idempotency_key_mismatch')
    expect((await refusal(observer.mutate(req('claim', { requestId: inFlight, ttlSeconds: 60 }, { campaignId: C2 })))).code).toBe('request_in_flight')
    // a fresh id gets as far as the capability check
    expect((await refusal(observer.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 })))).code).toBe('capability_unavailable')
    expect(observer.fake.calls).toEqual([])
  })
})

// ---- 4. capability --------------------------------------------------------------------------

describe('step 4: capability', () => {
  it('observer mode is 503 capability_unavailable with missingPrerequisites, before the lock and before any ledger write', async () => {
    const r = await rig({ controlEnabled: false, lockWaitMs: 5_000 })
    const held = await r.ledger.lockCampaign(C1, 0)
    expect(held).toBeDefined()
    const id = rid()
    const started = performance.now()
    const err = await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))
    // the lock is held for good: answering at once proves the lock was never waited for
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(err.code).toBe('capability_unavailable')
    expect(err.statusCode).toBe(503)
    expect(err.missingPrerequisites).toEqual(['GATEWAY_CONTROL_ENABLED is not true'])
    expect(err.toBody().error.missingPrerequisites).toEqual(['GATEWAY_CONTROL_ENABLED is not true'])
    expect(r.fake.calls).toEqual([])
    expect(await r.ledger.get(id)).toBeUndefined()
    await held?.()
  })

  it('a card without the extension names it as the missing prerequisite', async () => {
    const r = await rig({ card: { name: 'plain', skills: [] } })
    const err = await refusal(r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 })))
    expect(err.missingPrerequisites).toContain('card does not advertise urn:openoperator:campaign-control:v1')
    expect(r.fake.calls).toEqual([])
  })

  it('each route checks its own operation: intervene not advertised is 503 while claim works', async () => {
    const { intervene: _gone, ...operations } = CONTROL_METHODS
    const r = await rig({ card: controlCard({ operations }) })
    expect(r.discovery.snapshot().mode).toBe('controller')
    await knownLease(r, C1, 'ctl-alice', 1)
    await unresolvedRecord(r, C1, 'ambiguous') // not reached either
    const err = await refusal(r.mutate(req('intervene', { requestId: rid(), intervention: { pause: true } })))
    expect(err.code).toBe('capability_unavailable')
    expect(err.missingPrerequisites).toEqual(['operation intervene is not advertised'])
    expect(r.fake.calls).toEqual([])
    acceptClaims(r)
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { campaignId: C2 }))).httpStatus).toBe(200)
  })
})

describe('step 4: capability (submissions)', () => {
  it('a project needs params.project_selection: 503 before the lease check; without a project the submission goes', async () => {
    const r = await rig({ card: controlCard({ params: { project_selection: false } }) })
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 1) } }))
    r.fake.on('message/send', { result: { kind: 'task', id: 'task-1', status: { state: 'submitted' } } })
    const err = await refusal(r.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }], project: 'p1' })))
    expect(err.code).toBe('capability_unavailable')
    expect(err.missingPrerequisites).toEqual(['params.project_selection is not true'])
    expect(r.fake.calls).toEqual([])
    expect((await r.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }] }))).httpStatus).toBe(202)
    expect(r.fake.calls.map((c) => c.method)).toEqual([CONTROL_METHODS.read_control, 'message/send'])
  })
})

// ---- 5. the per-campaign lock ---------------------------------------------------------------

describe('step 5: the per-campaign lock', () => {
  it('a held lock is 409 campaign_busy after lockWaitMs, nothing sent, no record written', async () => {
    const r = await rig({ lockWaitMs: 100 })
    acceptClaims(r)
    await unresolvedRecord(r, C1, 'ambiguous') // the ambiguity block comes later: not reached
    const held = await r.ledger.lockCampaign(C1, 0)
    expect(held).toBeDefined()
    const id = rid()
    const started = performance.now()
    const err = await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))
    const waited = performance.now() - started
    expect(err.code).toBe('campaign_busy')
    expect(err.statusCode).toBe(409)
    expect(err.requestId).toBe(id)
    expect(waited).toBeGreaterThanOrEqual(90)
    expect(waited).toBeLessThan(1_000)
    expect(r.fake.calls).toEqual([])
    expect(await r.ledger.get(id)).toBeUndefined()

    // another campaign is not held up, and the busy id stays unused
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { campaignId: C2 }))).httpStatus).toBe(200)
    await held?.()
    expect((await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))).code).toBe('ambiguity_unresolved')
  })

  it('is released after every answer: a second mutation of the campaign gets it at once', async () => {
    const r = await rig({ lockWaitMs: 50 })
    r.fake.once(CONTROL_METHODS.claim_control, { throws: new UpstreamCallError('unreachable', { nothingSent: true }) })
    acceptClaims(r)
    await refusal(r.mutate(req('claim', { ttlSeconds: 60 }))) // a refusal (no id)
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }))).httpStatus).toBe(503) // a rejected outcome
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }))).httpStatus).toBe(200)
  })
})

// ---- 6. the ambiguity block -----------------------------------------------------------------

describe('step 6: the ambiguity block', () => {
  it('an ambiguous record blocks its campaign with 409 ambiguity_unresolved naming it; nothing sent; another campaign is unaffected', async () => {
    const r = await rig()
    acceptClaims(r)
    const open = await unresolvedRecord(r, C1, 'ambiguous')
    const id = rid()
    const err = await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))
    expect(err.code).toBe('ambiguity_unresolved')
    expect(err.statusCode).toBe(409)
    expect(err.requestId).toBe(open)
    expect(err.message).toContain(open)
    expect(err.reconcile).toBe(`/v1/campaigns/${C1}/requests/${open}/reconcile`)
    expect(r.fake.calls).toEqual([])
    expect(await r.ledger.get(id)).toBeUndefined()
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { campaignId: C2 }))).httpStatus).toBe(200)
  })

  it('a pending record blocks too, and the block comes before the lease checks (no read_control)', async () => {
    const r = await rig()
    const open = await unresolvedRecord(r, C1, 'pending')
    const err = await refusal(r.mutate(req('renew', { requestId: rid(), ttlSeconds: 60 })))
    expect(err.code).toBe('ambiguity_unresolved')
    expect(err.requestId).toBe(open)
    expect(r.fake.calls).toEqual([])
  })

  it('a fence (docs/design.md#fence) passes an ambiguous record, never a pending one, and is sent as claim_control', async () => {
    const r = await rig()
    acceptClaims(r, 1, 'ctl-ops')
    const admin: Caller = { name: 'ops', tokenSha256: 'd'.repeat(64), scopes: ['read', 'admin'], controllerId: 'ctl-ops' }
    await unresolvedRecord(r, C1, 'ambiguous')
    const pending = await unresolvedRecord(r, C2, 'pending')
    const busy = await refusal(r.mutate(req('fence', { requestId: rid('fence'), ttlSeconds: 60 }, { campaignId: C2, caller: admin })))
    expect([busy.code, busy.requestId]).toEqual(['ambiguity_unresolved', pending])
    expect(r.fake.calls).toEqual([])

    const id = rid('fence')
    const fenced = await r.mutate(req('fence', { requestId: id, ttlSeconds: 60 }, { caller: admin }))
    expect(fenced.httpStatus).toBe(200)
    expect(r.fake.mutations().map((c) => [c.method, c.params.controller_id, c.params.request_id])).toEqual([[CONTROL_METHODS.claim_control, 'ctl-ops', id]])
    expect(await r.ledger.get(id)).toMatchObject({ operation: 'fence', state: 'applied', controllerEpoch: null })
    // the campaign stays blocked for everything but another fence until its record is resolved
    expect((await refusal(r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 })))).code).toBe('ambiguity_unresolved')
  })
})

// ---- 7. lease checks ------------------------------------------------------------------------

describe('step 7: lease checks', () => {
  it('an unknown local lease is read with one read_control first, then the mutation is sent', async () => {
    const r = await rig()
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 4) } }))
    r.fake.on(CONTROL_METHODS.intervene, { result: { accepted: true } })
    const id = rid()
    const a = await r.mutate(req('intervene', { requestId: id, intervention: { pause: true } }))
    expect(a.httpStatus).toBe(200)
    expect(r.fake.calls.map((c) => [c.method, c.kind])).toEqual([[CONTROL_METHODS.read_control, 'read'], [CONTROL_METHODS.intervene, 'mutation']])
    expect(r.fake.calls[0]?.params).toEqual({ campaign_id: C1 })
    expect(r.fake.calls[1]?.params).toMatchObject({ controller_epoch: 4 })
    expect((await r.ledger.get(id))?.controllerEpoch).toBe(4)
  })

  it('a lease of another controller is 409 lease_not_held: no mutating call, no record', async () => {
    const r = await rig()
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-bob', 2) } }))
    // (a cancel checks its bound task before its lease: below, under cancel)
    for (const [operation, body] of [['renew', { ttlSeconds: 60 }], ['release', {}], ['intervene', { intervention: { a: 1 } }], ['submit', { parts: [{ kind: 'text', text: 'go' }] }]] as const) {
      await r.ledger.markLeaseUnknown(C1, r.clock.t)
      const id = rid(operation)
      const err = await refusal(r.mutate(req(operation, { requestId: id, ...body })))
      expect(err.code, operation).toBe('lease_not_held')
      expect(await r.ledger.get(id)).toBeUndefined()
    }
    expect(r.fake.calls.every((c) => c.method === CONTROL_METHODS.read_control)).toBe(true)
    expect(r.fake.calls).toHaveLength(4)
    // no lease at all is not held either
    r.fake.on(CONTROL_METHODS.read_control, { result: { lease: null } })
    await r.ledger.markLeaseUnknown(C1, r.clock.t)
    expect((await refusal(r.mutate(req('release', { requestId: rid() })))).code).toBe('lease_not_held')
    expect(r.fake.mutations()).toEqual([])
  })

  it('a lease expiring within leaseSafetyMs is 409 lease_expired, read or known', async () => {
    const r = await rig()
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 2, 1) } })) // 1 s < 2 s margin
    const id = rid()
    const err = await refusal(r.mutate(req('intervene', { requestId: id, intervention: { a: 1 } })))
    expect(err.code).toBe('lease_expired')
    expect(r.fake.calls.map((c) => c.method)).toEqual([CONTROL_METHODS.read_control])
    expect(await r.ledger.get(id)).toBeUndefined()

    // a known lease: the clock moves to 1 s before its expiry, and nothing is sent at all
    const k = await rig()
    await knownLease(k, C1, 'ctl-alice', 3, 600)
    k.clock.t += 599_000
    expect((await refusal(k.mutate(req('release', { requestId: rid() })))).code).toBe('lease_expired')
    expect(k.fake.calls).toEqual([])
  })

  it('a known local lease of the caller means no read_control call at all', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 7)
    r.fake.on(CONTROL_METHODS.release_control, { result: { released: true } })
    const id = rid()
    expect((await r.mutate(req('release', { requestId: id }))).httpStatus).toBe(200)
    expect(r.fake.calls.map((c) => c.method)).toEqual([CONTROL_METHODS.release_control])
    expect(r.fake.calls[0]?.params).toMatchObject({ controller_epoch: 7 })
    // a known lease of another controller refuses locally, also without asking
    await knownLease(r, C2, 'ctl-bob', 1)
    expect((await refusal(r.mutate(req('release', { requestId: rid() }, { campaignId: C2 })))).code).toBe('lease_not_held')
    expect(r.fake.calls).toHaveLength(1)
  })

  it('claim has no local check: it is sent even when the known lease is another controller\'s', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-bob', 1)
    acceptClaims(r, 2)
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }))).httpStatus).toBe(200)
    expect(r.fake.calls.map((c) => c.method)).toEqual([CONTROL_METHODS.claim_control])
  })
})

// ---- 8. write pending, send once, record the outcome ----------------------------------------

describe('step 8: pending before the send, the send, the outcome', () => {
  it('the record is pending, owned, with deadline = createdAt + connect + mutation timeouts + 30 s, when the call is made', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 5)
    const id = rid()
    r.clock.t += 1_234
    let seen: MutationRecord | undefined
    r.fake.on(CONTROL_METHODS.intervene, async (call) => {
      seen = await r.ledger.get(call.id ?? '')
      r.clock.t += 500 // the answer takes a while
      return { result: { accepted: true } }
    })
    const a = await r.mutate(req('intervene', { requestId: id, intervention: { pause: true } }))

    expect(seen).toMatchObject({
      requestId: id,
      campaignId: C1,
      caller: 'alice',
      identity: 'static:alice',
      operation: 'intervene',
      paramsHash: paramsHash('intervene', C1, { intervention: { pause: true } }),
      params: { requestId: id, intervention: { pause: true } },
      controllerEpoch: 5,
      owner: INSTANCE,
      createdAt: T0 + 1_234,
      deadline: T0 + 1_234 + CONNECT_TIMEOUT_MS + MUTATION_TIMEOUT_MS + 30_000,
      state: 'pending',
      answer: null
    })
    const [call] = r.fake.calls
    expect(r.fake.calls).toHaveLength(1)
    expect(call).toMatchObject({ method: CONTROL_METHODS.intervene, kind: 'mutation', id, op: 'intervene' })
    expect(call?.params).toEqual({ campaign_id: C1, controller_id: 'ctl-alice', controller_epoch: 5, request_id: id, constraints: constraintsEnvelope(), intervention: { pause: true } })

    expect(a).toEqual({ httpStatus: 200, body: { requestId: id, campaignId: C1, accepted: true }, replayed: false })
    expect(await r.ledger.get(id)).toMatchObject({ state: 'applied', answer: { httpStatus: 200, body: a.body }, outcomeCode: null, updatedAt: T0 + 1_734 })
  })

  it('the outcome is written compare-and-set: a record another process turned ambiguous stays ambiguous', async () => {
    const r = await rig()
    const id = rid()
    r.fake.on(CONTROL_METHODS.claim_control, async () => {
      // another replica's sweep wins the race while the call is out
      expect(await r.ledger.expirePending(T0 + 10 ** 9)).toEqual([id])
      return { result: { lease: wireLease(r, 'ctl-alice', 1) } }
    })
    const a = await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    expect(a.httpStatus).toBe(504)
    expect(errorCode(a)).toBe('ambiguous_write')
    expect((await r.ledger.get(id))?.state).toBe('ambiguous')
  })

  // a sweep that turns the record ambiguous mid-call wins: the lease the result carried is unproven
  it('when the compare-and-set loses, the answer is ambiguous and so is the local lease', async () => {
    const r = await rig()
    r.fake.on(CONTROL_METHODS.claim_control, async () => {
      // another replica's sweep, its deadline long past on the ledger's clock
      r.clock.t += 10 ** 9
      await r.ledger.expirePending(r.clock.t)
      return { result: { lease: wireLease(r, 'ctl-alice', 1) } }
    })
    expect(errorCode(await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 })))).toBe('ambiguous_write')
    expect((await r.ledger.getLease(C1))?.known).toBe(false)
  })

  it('records each outcome class: applied, rejected, ambiguous', async () => {
    const r = await rig()
    r.fake.once(CONTROL_METHODS.claim_control,
      () => ({ result: { lease: wireLease(r, 'ctl-alice', 1) } }),
      { error: { code: -32602 } },
      { throws: new UpstreamCallError('network') })
    const ids = [rid(), rid(), rid()]
    for (const id of ids) await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }, { campaignId: `camp-${id}` }))
    expect(await Promise.all(ids.map(async (id) => (await r.ledger.get(id))?.state))).toEqual(['applied', 'rejected', 'ambiguous'])
    expect((await r.ledger.get(ids[1] ?? ''))?.outcomeCode).toBe('upstream_rejected')
    expect((await r.ledger.get(ids[2] ?? ''))?.outcomeCode).toBe('ambiguous_write')
  })
})

// ---- 9. outcome classes through the pipeline ------------------------------------------------

describe('step 9: outcome classes', () => {
  /** a controller rig where ctl-alice holds a known lease of C1 at epoch 3 */
  async function holding (): Promise<Rig> {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 3)
    return r
  }
  const intervene = (id: string): MutationRequest => req('intervene', { requestId: id, intervention: { pause: true } })

  it('a nothingSent UpstreamCallError is rejected: 503 upstream_unavailable, retryable, lease still known', async () => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { throws: new UpstreamCallError('unreachable', { nothingSent: true }) })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect(a.httpStatus).toBe(503)
    expect(a.body).toMatchObject({ error: { code: 'upstream_unavailable', requestId: id, retryable: true } })
    expect((await r.ledger.get(id))?.state).toBe('rejected')
    expect((await r.ledger.getLease(C1))?.known).toBe(true)
  })

  it.each([
    ['a timeout after sending', new UpstreamCallError('timeout')],
    ['a connection lost after sending', new UpstreamCallError('network')],
    ['a 5xx without a JSON-RPC body', new UpstreamCallError('http_status', { httpStatus: 502 })],
    ['a redirect', new UpstreamCallError('redirect', { httpStatus: 302 })],
    ['a non-upstream error', new Error('socket hang up')]
  ])('%s is ambiguous: 504 ambiguous_write with the reconcile path, lease unknown', async (_name, thrown) => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { throws: thrown })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect(a).toEqual({
      httpStatus: 504,
      body: { error: { code: 'ambiguous_write', message: expect.any(String), requestId: id, retryable: false, reconcile: `/v1/campaigns/${C1}/requests/${id}/reconcile` } },
      replayed: false
    })
    expect((await r.ledger.get(id))?.state).toBe('ambiguous')
    expect((await r.ledger.getLease(C1))?.known).toBe(false)
    // and the campaign is now blocked
    expect((await refusal(r.mutate(intervene(rid())))).code).toBe('ambiguity_unresolved')
  })

  it('reason stale_epoch with code -32603 is rejected 409 stale_epoch (the reason beats the code), and the lease becomes unknown', async () => {
    const r = await holding()
    r.fake.once(CONTROL_METHODS.intervene, { error: { code: -32603, data: { reason: 'stale_epoch' } } })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect(a.httpStatus).toBe(409)
    expect(errorCode(a)).toBe('stale_epoch')
    expect(await r.ledger.get(id)).toMatchObject({ state: 'rejected', outcomeCode: 'stale_epoch' })
    expect((await r.ledger.getLease(C1))?.known).toBe(false)

    // the next mutation asks the remote first
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 4) } }))
    r.fake.on(CONTROL_METHODS.intervene, { result: { accepted: true } })
    expect((await r.mutate(intervene(rid()))).httpStatus).toBe(200)
    expect(r.fake.calls.map((c) => c.method)).toEqual([CONTROL_METHODS.intervene, CONTROL_METHODS.read_control, CONTROL_METHODS.intervene])
    expect(r.fake.calls[2]?.params).toMatchObject({ controller_epoch: 4 })
  })

  it.each([
    ['lease_held', -32603, 409, 'lease_held_by_other', false],
    ['lease_expired', -32000, 409, 'lease_expired', false],
    ['policy_violation', -32603, 403, 'policy_rejected', true]
  ])('reason %s (code %i) is rejected %i %s', async (reason, code, status, restCode, leaseStaysKnown) => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { error: { code, data: { reason } } })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect([a.httpStatus, errorCode(a)]).toEqual([status, restCode])
    expect((await r.ledger.get(id))?.state).toBe('rejected')
    expect((await r.ledger.getLease(C1))?.known).toBe(leaseStaysKnown)
  })

  it.each([
    [-32700, 502, 'upstream_rejected'],
    [-32600, 502, 'upstream_rejected'],
    [-32602, 502, 'upstream_rejected'],
    [-32001, 404, 'not_found'],
    [-32002, 409, 'task_not_cancelable'],
    [-32004, 502, 'upstream_rejected'],
    [-32005, 502, 'upstream_rejected']
  ])('code %i without a reason is rejected %i %s', async (code, status, restCode) => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { error: { code } })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect([a.httpStatus, errorCode(a)]).toEqual([status, restCode])
    expect((await r.ledger.get(id))?.state).toBe('rejected')
  })

  it.each([
    ['an unknown reason', { code: -32602, data: { reason: 'quota_exceeded' } }],
    ['-32603 without a reason', { code: -32603 }],
    ['an unlisted code', { code: -32099 }],
    ['a non-string reason', { code: -32600, data: { reason: 42 } }]
  ])('%s is ambiguous', async (_name, error) => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { error })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect([a.httpStatus, errorCode(a)]).toEqual([504, 'ambiguous_write'])
    expect((await r.ledger.get(id))?.state).toBe('ambiguous')
  })

  it('-32601 is rejected 503 capability_unavailable and marks the operation unavailable in discovery', async () => {
    const r = await holding()
    r.fake.on(CONTROL_METHODS.intervene, { error: { code: -32601 } })
    const id = rid()
    const a = await r.mutate(intervene(id))
    expect([a.httpStatus, errorCode(a)]).toEqual([503, 'capability_unavailable'])
    expect((await r.ledger.get(id))?.state).toBe('rejected')
    expect(r.discovery.capability('control.intervene').state).toBe('unavailable')
    expect(r.discovery.snapshot().controlMethods.intervene).toBeUndefined()
    // the next intervene stops at the capability check; other operations still work
    const err = await refusal(r.mutate(intervene(rid())))
    expect(err.code).toBe('capability_unavailable')
    expect(err.missingPrerequisites).toEqual(['operation intervene answered method not found'])
    expect(r.fake.calls).toHaveLength(1)
    r.fake.on(CONTROL_METHODS.release_control, { result: { released: true } })
    expect((await r.mutate(req('release', { requestId: rid() }))).httpStatus).toBe(200)
  })

  it('-32601 on a submission marks a2a.message.send unavailable', async () => {
    const r = await holding()
    r.fake.on('message/send', { error: { code: -32601 } })
    const a = await r.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }] }))
    expect(a.httpStatus).toBe(503)
    expect(r.discovery.capability('a2a.message.send').state).toBe('unavailable')
  })

  it('a renewal is read back: agreement is 200; a disagreement stays applied, answers 502 lease_readback_mismatch and forgets the lease', async () => {
    const r = await holding()
    const renewed = (): Record<string, unknown> => wireLease(r, 'ctl-alice', 3, 900)
    r.fake.on(CONTROL_METHODS.renew_control, () => ({ result: { lease: renewed() } }))
    r.fake.once(CONTROL_METHODS.read_control, () => ({ result: { lease: renewed() } }), () => ({ result: { lease: { ...renewed(), expires_at: 1 } } }))
    const ok = rid()
    const a = await r.mutate(req('renew', { requestId: ok, ttlSeconds: 900 }))
    expect(a.httpStatus).toBe(200)
    expect(r.fake.calls.map((c) => [c.method, c.kind])).toEqual([[CONTROL_METHODS.renew_control, 'mutation'], [CONTROL_METHODS.read_control, 'read']])
    expect((await r.ledger.getLease(C1))?.known).toBe(true)

    const bad = rid()
    const b = await r.mutate(req('renew', { requestId: bad, ttlSeconds: 900 }))
    expect([b.httpStatus, errorCode(b)]).toEqual([502, 'lease_readback_mismatch'])
    expect((await r.ledger.get(bad))?.state).toBe('applied')
    expect((await r.ledger.getLease(C1))?.known).toBe(false)
  })

  describe('a result of the wrong shape is ambiguous', () => {
    it('intervene answering {accepted: false}', async () => {
      const r = await holding()
      r.fake.on(CONTROL_METHODS.intervene, { result: { accepted: false } })
      const id = rid()
      expect(errorCode(await r.mutate(intervene(id)))).toBe('ambiguous_write')
      expect((await r.ledger.get(id))?.state).toBe('ambiguous')
      expect((await r.ledger.getLease(C1))?.known).toBe(false)
    })

    it('a claim whose lease names another controller (which is not kept as the known lease)', async () => {
      const r = await rig()
      acceptClaims(r, 1, 'ctl-bob')
      const id = rid()
      expect(errorCode(await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))).toBe('ambiguous_write')
      expect((await r.ledger.get(id))?.state).toBe('ambiguous')
      expect((await r.ledger.getLease(C1))?.known).not.toBe(true)
    })

    it('a submission without a task id (no bound task is set)', async () => {
      const r = await holding()
      r.fake.once('message/send', { result: { kind: 'task', status: { state: 'submitted' } } })
      const id = rid()
      expect(errorCode(await r.mutate(req('submit', { requestId: id, parts: [{ kind: 'text', text: 'go' }] })))).toBe('ambiguous_write')
      expect((await r.ledger.get(id))?.state).toBe('ambiguous')
      expect(await r.ledger.getBoundTask(C1)).toBeUndefined()

      // a message instead of a task is no task id either
      const m = await holding()
      m.fake.on('message/send', { result: { kind: 'message', messageId: 'm-1', role: 'agent', parts: [] } })
      expect(errorCode(await m.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }] })))).toBe('ambiguous_write')
    })

    it('release answering something else than {released: true}', async () => {
      const r = await holding()
      r.fake.on(CONTROL_METHODS.release_control, { result: null })
      expect(errorCode(await r.mutate(req('release', { requestId: rid() })))).toBe('ambiguous_write')
    })
  })

  it('a valid submission binds its task and answers 202', async () => {
    const r = await holding()
    r.fake.on('message/send', { result: { kind: 'task', id: 'task-9', contextId: 'ctx-1', status: { state: 'submitted' } } })
    const id = rid()
    const a = await r.mutate(req('submit', { requestId: id, parts: [{ kind: 'text', text: 'go' }] }))
    // the remote's context rides along, for the front door's answer (docs/design.md#front-door)
    expect(a).toEqual({ httpStatus: 202, body: { requestId: id, taskId: 'task-9', state: 'submitted', contextId: 'ctx-1' }, replayed: false })
    expect(await r.ledger.getBoundTask(C1)).toMatchObject({ taskId: 'task-9', requestId: id })
    const [call] = r.fake.mutations()
    expect(call).toMatchObject({ method: 'message/send', id, params: { configuration: { blocking: false }, message: { messageId: id } } })
  })
})

// ---- 10. the controller id ------------------------------------------------------------------

describe('step 10: the controller id sent upstream', () => {
  it('is the caller\'s controllerId, not its name, for a claim and for a held-lease mutation', async () => {
    const r = await rig()
    r.fake.on(CONTROL_METHODS.claim_control, (call) => ({ result: { lease: wireLease(r, String(call.params.controller_id), 1, 60) } }))
    r.fake.on(CONTROL_METHODS.intervene, { result: { accepted: true } })
    expect((await r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { caller: bob }))).httpStatus).toBe(200)
    expect((await r.mutate(req('intervene', { requestId: rid(), intervention: { a: 1 } }, { caller: bob }))).httpStatus).toBe(200)
    expect(r.fake.mutations().map((c) => c.params.controller_id)).toEqual(['ctl-bob', 'ctl-bob'])
    // the body cannot supply one
    expect((await refusal(r.mutate(req('intervene', { requestId: rid(), intervention: { a: 1 }, controller_id: 'ctl-alice' }, { caller: bob })))).code).toBe('reserved_field')
  })

  it('a caller without a controllerId is refused before anything is looked up or sent', async () => {
    const r = await rig()
    const reader: Caller = { name: 'reader', tokenSha256: 'c'.repeat(64), scopes: ['read'] }
    expect((await refusal(r.mutate(req('claim', { requestId: rid(), ttlSeconds: 60 }, { caller: reader })))).code).toBe('forbidden')
    expect(r.fake.calls).toEqual([])
  })
})

// ---- 11. one send per request id ------------------------------------------------------------

describe('step 11: never two sends for one request id', () => {
  it('repeating a request after every kind of outcome sends nothing more', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 3)
    const scripts = [
      { result: { accepted: true } },
      { result: { accepted: false } },
      { error: { code: -32602 } },
      { error: { code: -32603, data: { reason: 'stale_epoch' } } },
      { error: { code: -32603 } },
      { throws: new UpstreamCallError('timeout') }
    ]
    for (const [i, script] of scripts.entries()) {
      const campaignId = `camp-repeat-${i}`
      await knownLease(r, campaignId, 'ctl-alice', 3)
      r.fake.once(CONTROL_METHODS.intervene, script)
      const id = rid()
      const body = { requestId: id, intervention: { n: i } }
      const first = await r.mutate(req('intervene', body, { campaignId }))
      for (let k = 0; k < 3; k++) expect(await r.mutate(req('intervene', body, { campaignId }))).toEqual({ ...first, replayed: true })
      expect(r.fake.mutations().filter((c) => c.id === id), JSON.stringify(script)).toHaveLength(1)
    }
    expect(r.fake.mutations()).toHaveLength(scripts.length)
  })

  it('nothing sent is not a use: the same request runs again as new, once, then replays', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 3)
    r.fake.once(CONTROL_METHODS.intervene, { throws: new UpstreamCallError('unreachable', { nothingSent: true }) })
    const id = rid()
    const body = { requestId: id, intervention: { n: 1 } }
    expect((await r.mutate(req('intervene', body))).httpStatus).toBe(503)
    expect((await r.ledger.get(id))?.state).toBe('rejected')
    r.fake.once(CONTROL_METHODS.intervene, { result: { accepted: true } })
    const again = await r.mutate(req('intervene', body))
    expect(again).toMatchObject({ httpStatus: 200, replayed: false })
    expect(await r.mutate(req('intervene', body))).toEqual({ ...again, replayed: true })
    expect((await refusal(r.mutate(req('intervene', { ...body, intervention: { n: 2 } })))).code).toBe('idempotency_key_mismatch')
    expect(r.fake.mutations().filter((c) => c.id === id)).toHaveLength(1)
    expect((await r.ledger.get(id))?.state).toBe('applied')
  })

  it('concurrent requests with one id: one send, the others in flight or replayed', async () => {
    const r = await rig({ lockWaitMs: 2_000 })
    let answer: (() => void) | undefined
    r.fake.on(CONTROL_METHODS.claim_control, async () => {
      await new Promise<void>((resolve) => { answer = resolve })
      return { result: { lease: wireLease(r, 'ctl-alice', 1) } }
    })
    const id = rid()
    const first = r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))
    while (answer === undefined) await new Promise((resolve) => setImmediate(resolve))
    // while the first is out, a second one with the same id is in flight, not sent
    expect((await refusal(r.mutate(req('claim', { requestId: id, ttlSeconds: 60 })))).code).toBe('request_in_flight')
    answer()
    expect((await first).httpStatus).toBe(200)
    expect((await r.mutate(req('claim', { requestId: id, ttlSeconds: 60 }))).replayed).toBe(true)
    expect(r.fake.mutations()).toHaveLength(1)
  })
})

// ---- cancel's target (after the lease checks) -----------------------------------------------

describe('cancel targets the bound task only', () => {
  it('no bound task is 409 no_bound_task; a terminal one is task_not_cancelable after one tasks/get; nothing is sent', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 2)
    // a cancel asks the remote for the lease, even with the lease known — after its task
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 2) } }))
    expect((await refusal(r.mutate(req('cancel', { requestId: rid() })))).code).toBe('no_bound_task')
    expect(r.fake.calls.map((c) => c.method)).toEqual([])

    r.fake.once('message/send', { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'submitted' } } })
    expect((await r.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }] }))).httpStatus).toBe(202)
    const submitted = r.fake.calls.length
    const after = (): typeof r.fake.calls => r.fake.calls.slice(submitted)
    r.fake.once('tasks/get', { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'completed' } } })
    const id = rid()
    expect((await refusal(r.mutate(req('cancel', { requestId: id })))).code).toBe('task_not_cancelable')
    expect(after().map((c) => [c.method, c.kind])).toEqual([['tasks/get', 'read']])
    expect(await r.ledger.get(id)).toBeUndefined()

    r.fake.once('tasks/get', { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'working' } } })
    r.fake.on(CONTROL_METHODS.cancel, { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'canceled' } } })
    const ok = rid()
    expect((await r.mutate(req('cancel', { requestId: ok }))).body).toEqual({ requestId: ok, campaignId: C1, taskId: 'task-1', state: 'canceled', contextId: 'ctx' })
    // the order of docs/design.md#leases: the task, then the lease, then the send
    expect(after().map((c) => c.method)).toEqual(['tasks/get', 'tasks/get', CONTROL_METHODS.read_control, CONTROL_METHODS.cancel])
    expect(r.fake.mutations()[1]?.params).toEqual({ id: 'task-1', metadata: { argus_supervisor: { campaign_id: C1, controller_id: 'ctl-alice', controller_epoch: 2, request_id: ok, constraints: constraintsEnvelope() } } })
  })

  it('the lease read for a cancel decides over the known one: another holder or a lapse is refused, nothing sent', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 2)
    r.fake.once('message/send', { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'submitted' } } })
    expect((await r.mutate(req('submit', { requestId: rid(), parts: [{ kind: 'text', text: 'go' }] }))).httpStatus).toBe(202)
    r.fake.on('tasks/get', { result: { kind: 'task', id: 'task-1', contextId: 'ctx', status: { state: 'working' } } })
    r.fake.once(CONTROL_METHODS.read_control, { result: { lease: wireLease(r, 'ctl-bob', 3) } })
    expect((await refusal(r.mutate(req('cancel', { requestId: rid() })))).code).toBe('lease_not_held')
    r.fake.once(CONTROL_METHODS.read_control, { result: { lease: wireLease(r, 'ctl-alice', 3, 1) } })
    expect((await refusal(r.mutate(req('cancel', { requestId: rid() })))).code).toBe('lease_expired')
    expect(r.fake.mutations()).toHaveLength(1)
  })
})

// ---- the lease keeper -----------------------------------------------------------------------

describe('createLeaseKeeper', () => {
  it('an epoch from read_control lower than maxEpochSeen is upstream_invalid_response, and the lease stays unknown', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 5)
    await r.ledger.markLeaseUnknown(C1, r.clock.t)
    r.fake.on(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 4) } }))
    const err = await refusal(r.leases.fresh(C1))
    expect(err.code).toBe('upstream_invalid_response')
    expect(err.statusCode).toBe(502)
    expect(await r.ledger.getLease(C1)).toMatchObject({ known: false, maxEpochSeen: 5 })

    // through the pipeline: refused before anything is written or sent
    const id = rid()
    expect((await refusal(r.mutate(req('intervene', { requestId: id, intervention: { a: 1 } })))).code).toBe('upstream_invalid_response')
    expect(r.fake.mutations()).toEqual([])
    expect(await r.ledger.get(id)).toBeUndefined()
  })

  it('the same or a higher epoch is kept as the known lease; a bare lease result is accepted', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 5)
    r.fake.once(CONTROL_METHODS.read_control, () => ({ result: { lease: wireLease(r, 'ctl-alice', 5) } }), () => ({ result: wireLease(r, 'ctl-bob', 6) }))
    expect((await r.leases.fresh(C1))?.epoch).toBe(5)
    expect(await r.leases.fresh(C1)).toMatchObject({ controllerId: 'ctl-bob', epoch: 6 })
    expect(await r.ledger.getLease(C1)).toMatchObject({ known: true, maxEpochSeen: 6, lease: { controllerId: 'ctl-bob', epoch: 6 } })
  })

  it('accept() refuses a mutation\'s lease below the epochs seen and forgets the local lease', async () => {
    const r = await rig()
    await knownLease(r, C1, 'ctl-alice', 5)
    expect(await r.leases.accept(C1, { controllerId: 'ctl-alice', epoch: 4, expiresAt: 0 })).toBe(false)
    expect((await r.ledger.getLease(C1))?.known).toBe(false)
  })

  it('a read_control that is not a lease is upstream_invalid_response; -32601 marks read_control unavailable', async () => {
    const r = await rig()
    r.fake.once(CONTROL_METHODS.read_control, { result: { lease: { controller_id: 'x' } } }, { error: { code: -32601 } })
    expect((await refusal(r.leases.fresh(C1))).code).toBe('upstream_invalid_response')
    expect((await refusal(r.leases.fresh(C1))).code).toBe('capability_unavailable')
    expect(r.discovery.capability('control.read_control').state).toBe('unavailable')
    expect(r.discovery.snapshot().mode).toBe('observer')
  })
})
