// Every long-lived map of the gateway has a bound or lives only as long as what it holds
// (docs/design.md#bounded-maps): filled past the bound, each forgets, and what it forgot leads to
// the safe side — a reconcile that waits, a store asked again, a project unknown, a card signed
// anew — never to a wait judged over early or a refused address let past.
import { createPublicKey } from 'node:crypto'
import { exportJWK, flattenedVerify, generateKeyPair, importJWK, base64url } from 'jose'
import pino from 'pino'
import type { FastifyReply, FastifyRequest } from 'fastify'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import { afterEach, describe, expect, it } from 'vitest'
import { makeRoom } from '../../src/core/bounded-map.js'
import { coalesced } from '../../src/argus/coalesce.js'
import { createCampaignProjects, MAX_CAMPAIGNS } from '../../src/control/campaign-projects.js'
import { noteSent, openPlane, SENT_REMEMBERED, waitLeftMs, type PlaneState } from '../../src/control/plane-state.js'
import { sweep } from '../../src/control/plane-upkeep.js'
import { ownerWaitMs } from '../../src/control/pipeline.js'
import { ambiguousAnswer } from '../../src/control/ambiguous-answer.js'
import { createDiscovery } from '../../src/discovery/discovery.js'
import { createLedger } from '../../src/ledger/index.js'
import type { Ledger } from '../../src/ledger/types.js'
import { KEYS, keyNamesKept, keyOf } from '../../src/http/rate-limit.js'
import { failureMemory, MEMORY_ADDRESSES } from '../../src/http/auth-failures.js'
import { createCardSigner, SIGNED_CARDS_KEPT } from '../../src/front/card.js'
import { distinctPayloads } from '../../src/discovery/card-canonical.js'
import { createLogger, scrubberOf, SEEN_MAX } from '../../src/core/logger.js'
import { AccessLog } from '../../src/http/access-log.js'
import { createFakeUpstream } from '../helpers/fake-upstream.js'

const logger = pino({ level: 'silent' })
const ledgers: Ledger[] = []
afterEach(async () => { for (const l of ledgers.splice(0)) await l.close() })

describe('makeRoom', () => {
  it('at the bound, forgets the oldest quarter in insertion order and hands each value over', () => {
    const m = new Map<string, number>()
    const forgot: number[] = []
    for (let i = 0; i < 8; i++) m.set(`k${i}`, i)
    makeRoom(m, 9, (v) => forgot.push(v))
    expect(m.size).toBe(8)
    makeRoom(m, 8, (v) => forgot.push(v))
    expect(forgot).toEqual([0, 1])
    expect([...m.keys()]).toEqual(['k2', 'k3', 'k4', 'k5', 'k6', 'k7'])
  })
})

describe('the sends a control plane remembers (sentUntil)', () => {
  it('keeps at most SENT_REMEMBERED; a forgotten send still waits its owner\'s full wait, and the sweep forgets sends once their wait is over', async () => {
    const clock = { wall: 1_750_000_000_000, mono: 0 }
    const ledger = await createLedger('sqlite::memory:', { ambiguousAnswer, now: () => clock.wall })
    ledgers.push(ledger)
    const fake = createFakeUpstream()
    const discovery = createDiscovery({ client: fake, origin: 'https://remote.test', basePath: '/a2a', cardMaxBytes: 1 << 20, controlEnabled: true, intervalMs: 60_000, logger })
    const o = { ledger, client: fake, discovery, leaseSafetyMs: 2_000, connectTimeoutMs: 5_000, mutationTimeoutMs: 10_000, readTimeoutMs: 1_000, maxTaskResponseBytes: 1 << 20, instanceId: 'gw-1', logger, now: () => clock.wall, monotonic: () => clock.mono }
    const s: PlaneState = openPlane(o)
    const waitMs = ownerWaitMs(o, 'intervene')
    const intervene = (requestId: string): { requestId: string; operation: 'intervene' } => ({ requestId, operation: 'intervene' })
    // past the start: a record this process never sent has no wait left here (its deadline on the ledger decides)
    clock.mono = s.startedAt + s.longestWaitMs + 1
    expect(waitLeftMs(s, intervene('someone-elses'))).toBeLessThanOrEqual(0)

    noteSent(s, 'first', waitMs)
    clock.mono += 1_000
    for (let i = 0; i < SENT_REMEMBERED; i++) noteSent(s, `send-${i}`, waitMs)
    expect(s.sentUntil.size).toBeLessThanOrEqual(SENT_REMEMBERED)
    expect(s.sentUntil.has('first')).toBe(false)
    expect(s.sentUntil.has(`send-${SENT_REMEMBERED - 1}`)).toBe(true)
    // forgotten, yet still waited for: as long as its own wait has left, never less
    expect(waitLeftMs(s, intervene('first'))).toBeGreaterThanOrEqual(waitMs - 1_000)
    // the price: until then, every record not remembered waits as long
    expect(waitLeftMs(s, intervene('someone-elses'))).toBeGreaterThan(0)
    // a send remembered keeps its own wait
    expect(waitLeftMs(s, intervene(`send-${SENT_REMEMBERED - 1}`))).toBe(waitMs)

    clock.mono += waitMs
    expect(waitLeftMs(s, intervene('first'))).toBeLessThanOrEqual(0)
    expect(waitLeftMs(s, intervene('someone-elses'))).toBeLessThanOrEqual(0)
    expect(await sweep(s)).toEqual([])
    expect(s.sentUntil.size).toBe(0)
  })
})

describe('the read coalescer', () => {
  it('keeps a key only while its call is in flight, however many keys went through', async () => {
    const pending: Array<() => void> = []
    const f = coalesced((k: string) => k, async (k) => await new Promise<string>((resolve) => pending.push(() => { resolve(k) })))
    const calls = Array.from({ length: 5_000 }, (_, i) => f(`task-${i}`))
    expect(f.inFlight()).toBe(5_000)
    for (const settle of pending.splice(0, 4_000)) settle()
    await Promise.all(calls.slice(0, 4_000))
    expect(f.inFlight()).toBe(1_000)
    for (const settle of pending.splice(0)) settle()
    await Promise.all(calls)
    expect(f.inFlight()).toBe(0)
    // a key seen before is a call of its own again
    const again = f('task-0')
    expect(f.inFlight()).toBe(1)
    pending.shift()!()
    expect(await again).toBe('task-0')
  })
})

describe('each campaign\'s project', () => {
  it('remembers the first MAX_CAMPAIGNS of a list; one past them is unknown, and asking reads the list again', async () => {
    let clock = 0
    let reads = 0
    const list = { campaigns: Array.from({ length: MAX_CAMPAIGNS + 10 }, (_, i) => ({ campaign_id: `c-${i}`, project: `p-${i % 7}` })) }
    const projects = createCampaignProjects({ readList: async () => { reads++; return list }, monotonic: () => clock })
    projects.learn(list)
    expect(await projects.lookup('c-0')).toBe('p-0')
    expect(await projects.lookup(`c-${MAX_CAMPAIGNS - 1}`)).toBe(`p-${(MAX_CAMPAIGNS - 1) % 7}`)
    expect(reads).toBe(0)
    // past the bound: unknown (a project grant then refuses, 'project_unknown'), after one read of the list
    expect(await projects.lookup(`c-${MAX_CAMPAIGNS}`)).toBeUndefined()
    expect(reads).toBe(1)
    // within the interval no more reads; after it, one more
    expect(await projects.lookup(`c-${MAX_CAMPAIGNS + 1}`)).toBeUndefined()
    expect(reads).toBe(1)
    clock += 10_000
    expect(await projects.lookup(`c-${MAX_CAMPAIGNS + 1}`)).toBeUndefined()
    expect(reads).toBe(2)
  })
})

describe('the rate limit\'s keys', () => {
  it('keeps the keys of at most KEYS caller names, and a name forgotten gets the same keys again', () => {
    const first = keyOf(false, 'caller-first')
    for (let i = 0; i < KEYS + 10; i++) keyOf(i % 2 === 0, `caller-${i}`)
    expect(keyNamesKept()).toBeGreaterThan(0)
    expect(keyNamesKept()).toBeLessThanOrEqual(KEYS)
    expect(keyOf(false, 'caller-first')).toBe(first)
    expect(keyOf(true, 'caller-first')).toBe('control:caller-first')
  })

  it('the in-memory store, as the gateway builds it, keeps at most KEYS counts (a forgotten caller\'s window starts again)', () => {
    const store = new LocalStore(false, false, KEYS)
    const count = (key: string): number => {
      let n = -1
      store.incr(key, (_err: Error | null, res: { current: number }) => { n = res.current }, 60_000, 100)
      return n
    }
    expect([count('read:a'), count('read:a')]).toEqual([1, 2])
    for (let i = 0; i < KEYS; i++) count(`read:caller-${i}`)
    expect(count('read:a')).toBe(1)
  })
})

describe('failed logins remembered per address', () => {
  it('keeps at most MEMORY_ADDRESSES; while one forgotten is inside its window every address asks the store, so none is let past', () => {
    const m = failureMemory()
    const t0 = 1_000_000
    m.note('203.0.113.7', t0)
    expect(m.mayBeOver('203.0.113.7', t0 + 1)).toBe(true)
    expect(m.mayBeOver('198.51.100.1', t0 + 1)).toBe(false)
    for (let i = 0; i < MEMORY_ADDRESSES; i++) m.note(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, t0 + 2)
    expect(m.size()).toBeLessThanOrEqual(MEMORY_ADDRESSES)
    // the first address is forgotten, within its window: it still may be over, the store decides
    expect(m.mayBeOver('203.0.113.7', t0 + 3)).toBe(true)
    // and so may any other, until the forgotten windows end
    expect(m.mayBeOver('198.51.100.1', t0 + 3)).toBe(true)
    expect(m.mayBeOver('198.51.100.1', t0 + 60_002)).toBe(false)
    expect(m.mayBeOver('203.0.113.7', t0 + 60_002)).toBe(false)
  })
})

describe('the card signer\'s memo', () => {
  it('signs an unchanged card once, keeps at most SIGNED_CARDS_KEPT cards, and signs a forgotten one anew, still valid', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const privateJwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'ES256' }
    const publicJwk = { ...(createPublicKey({ key: privateJwk as never, format: 'jwk' }).export({ format: 'jwk' })), kid: 'k1', alg: 'ES256', use: 'sig' }
    const signer = await createCardSigner({ kid: 'k1', alg: 'ES256', privateJwk, publicJwk })
    const card = (i: number): Record<string, unknown> => ({ name: `card-${i}`, url: 'https://gw.test/a2a/' })
    const sigsOf = async (i: number): Promise<unknown> => (await signer.sign(card(i))).signatures
    const first = await sigsOf(0)
    expect(await sigsOf(0)).toBe(first)
    for (let i = 1; i <= SIGNED_CARDS_KEPT; i++) await sigsOf(i)
    const again = await sigsOf(0) as Array<{ protected: string; signature: string }>
    expect(again).not.toBe(first)
    // detached: each signature made anew verifies over one of the card's canonical forms
    const key = await importJWK(publicJwk as never, 'ES256')
    const forms = distinctPayloads(card(0))
    expect(again).toHaveLength(forms.length)
    for (const sig of again) {
      const verified = await Promise.any(forms.map(async (f) => await flattenedVerify({ ...sig, payload: base64url.encode(f.payload) }, key)))
      expect(verified.protectedHeader).toMatchObject({ alg: 'ES256', kid: 'k1' })
    }
  })
})

describe('what the access line remembers as clean', () => {
  it('keeps at most SEEN_MAX values, however many addresses call, and each line still names its own', () => {
    const written: string[] = []
    const destination = { write: (s: string) => { written.push(s) } } as unknown as pino.DestinationStream
    const root = createLogger({ level: 'info', secrets: new Set(['Zq3vQ8sL1xT7mN2pR5wY9kB4']), destination })
    const access = new AccessLog(true)
    for (let i = 0; i < 3 * SEEN_MAX; i++) {
      const ip = `10.0.${i >> 8}.${i & 255}`
      const request = { id: `r-${i}`, method: 'GET', url: '/v1/supervisor/health', routeOptions: { url: '/v1/supervisor/health' }, ip, socket: { remotePort: 5000 } } as unknown as FastifyRequest
      access.requestCompleted(null, request, { log: root.child({ reqId: `r-${i}` }), statusCode: 200, elapsedTime: 1 } as unknown as FastifyReply)
      expect(JSON.parse(written[i]!).req.remoteAddress).toBe(ip)
      expect(scrubberOf(root)!.seen().texts.size).toBeLessThanOrEqual(SEEN_MAX)
    }
  })
})
