// Crash points of a mutation (docs/design.md#outcomes): the gateway is killed with SIGKILL at
// each step of a mutation (before its pending record, before the send, while the remote holds
// it, before its outcome), CRASH_REPEATS times each (3 by default; soak runs 50), and restarted
// on the same SQLite ledger. Whatever reached the remote or was committed pending has a record
// after the restart (lost ids 0), no request id reaches the remote twice (duplicate sends 0),
// and repeating the request after the restart sends nothing that was sent before.
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { call, type JsonResponse } from '../helpers/http.js'
import { CONTROL_METHOD, sqliteControlChild } from '../helpers/control.js'
import { listenUrlOf, startCrashChild, waitFor, type GatewayChild } from '../helpers/child.js'

type Point = 'before-pending' | 'before-send' | 'remote-holds' | 'before-outcome'
type Op = 'intervene' | 'submit' | 'renew' | 'release' | 'claim' | 'cancel'

const POINTS: Point[] = ['before-pending', 'before-send', 'remote-holds', 'before-outcome']
const REPEATS = Number(process.env.CRASH_REPEATS ?? 3)
/** soak runs (50 repeats) take minutes */
const TEST_TIMEOUT_MS = 15 * 60_000

const ROUTE: Record<Op, string> = {
  claim: 'control/claim', renew: 'control/renew', release: 'control/release', intervene: 'interventions', submit: 'submissions', cancel: 'cancel'
}
const MUTATION_METHODS = new Set<string>(Object.values(CONTROL_METHOD))
const PARTS = [{ kind: 'text', text: 'crash probe' }]

function bodyOf (op: Op, requestId: string, i: number): object {
  switch (op) {
    case 'claim':
    case 'renew': return { requestId, ttlSeconds: 600 }
    case 'release':
    case 'cancel': return { requestId }
    case 'intervene': return { requestId, intervention: { step: i } }
    case 'submit': return { requestId, parts: PARTS }
  }
}

/** intervene, then submit, at every point; then every operation in turn, each point starting at another */
const LATER: Op[] = ['renew', 'release', 'claim', 'cancel', 'intervene', 'submit']
const opFor = (p: number, i: number): Op => i === 0 ? 'intervene' : i === 1 ? 'submit' : LATER[(p + i - 2) % LATER.length]!

interface Planned { campaignId: string; op: Op; requestId: string; body: object }
interface Crashed extends Planned {
  /** the child said so: it froze after the pending record was committed */
  committed: boolean
  /** remote-holds: what became of the held request after the kill */
  fate: 'delivered' | 'dropped' | undefined
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f()
})

async function runPoint (point: Point, p: number): Promise<void> {
  const { sim, token, env } = await sqliteControlChild(cleanups, {
    // a busy machine must not shed the setup requests: load shedding is proved elsewhere
    GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0',
    UPSTREAM_MUTATION_TIMEOUT_MS: '5000'
  })
  const post = async (url: string, campaignId: string, op: Op, body: object): Promise<JsonResponse> =>
    await call(`${url}/v1/campaigns/${campaignId}/${ROUTE[op]}`, { method: 'POST', token, body })
  const record = async (url: string, campaignId: string, requestId: string): Promise<JsonResponse> =>
    await call(`${url}/v1/campaigns/${campaignId}/requests/${requestId}`, { token })
  const sends = (requestId: string): number => sim.rpcCalls().filter((c) => c.id === requestId).length
  /** every mutation this point sent, the crashed ones and those that set a campaign up */
  const sent: Array<{ campaignId: string; requestId: string }> = []
  let lost = 0

  // the id the gateway crashed on, checked by the next gateway on the same ledger
  const verify = async (url: string, c: Crashed): Promise<void> => {
    const rec = await record(url, c.campaignId, c.requestId)
    const reached = sends(c.requestId)
    if ((reached > 0 || c.committed) && rec.status === 404) lost++
    const applied = sim.control.applied().some((a) => a.requestId === c.requestId)
    const what = `${point} ${c.op} ${c.requestId}`
    if (point === 'before-pending') {
      expect(rec.status, what).toBe(404)
      expect(reached, what).toBe(0)
    } else {
      expect(rec.status, what).toBe(200)
      expect(rec.body, what).toMatchObject({ state: 'ambiguous', operation: c.op })
      expect(reached, what).toBe(point === 'before-send' ? 0 : 1)
      if (point === 'before-send') expect(applied, what).toBe(false)
      if (point === 'remote-holds') expect(applied, what).toBe(c.fate === 'delivered')
      if (point === 'before-outcome') expect(applied, what).toBe(true)
    }

    // the same request again
    const again = await post(url, c.campaignId, c.op, c.body)
    if (point === 'before-pending') {
      // nothing of it ever left, nothing was recorded: it is a new request, sent now, once
      expect(again.status, `${what}: ${again.text}`).toBeLessThan(300)
      expect(again.headers['idempotent-replayed'], what).toBeUndefined()
      expect(sends(c.requestId), what).toBe(1)
      expect((await record(url, c.campaignId, c.requestId)).body, what).toMatchObject({ state: 'applied' })
    } else {
      // a replay of the ambiguous record: nothing sent
      expect(again.headers['idempotent-replayed'], `${what}: ${again.status} ${again.text}`).toBe('true')
      expect(again.body.error?.code, what).toBe('ambiguous_write')
      expect(sends(c.requestId), what).toBe(reached)
    }
  }

  let prev: Crashed | undefined
  for (let i = 0; i <= REPEATS; i++) {
    const tag = `${i}-${randomBytes(4).toString('hex')}`
    const op = opFor(p, i)
    const requestId = `crash-${op}-${tag}`
    // a fresh campaign per iteration: the ambiguous record left behind blocks only its own
    const next: Planned | undefined = i < REPEATS ? { campaignId: `camp-${tag}`, op, requestId, body: bodyOf(op, requestId, i) } : undefined
    // the gateway that checks the last crash is the one that crashes next: CRASH_REQUEST_ID
    // keeps its trap off every other request (the checks, the claims that set a campaign up)
    const probe = next !== undefined && point !== 'remote-holds'
    const gw: GatewayChild = startCrashChild(probe ? { ...env, CRASH_AT: point, CRASH_REQUEST_ID: next.requestId } : env)
    const url = await listenUrlOf(gw)
    if (prev !== undefined) await verify(url, prev)

    if (next === undefined) {
      // every id that reached the remote has its record, crashed or not
      for (const s of sent) {
        if (sends(s.requestId) > 0 && (await record(url, s.campaignId, s.requestId)).status === 404) lost++
      }
      gw.child.kill('SIGTERM')
      expect(await gw.exited).toBe(0)
      break
    }

    // the campaign's lease (and, for a cancel, its bound task), set up by this same gateway
    const { campaignId } = next
    if (op !== 'claim') {
      const claimId = `claim-${tag}`
      sent.push({ campaignId, requestId: claimId })
      const claimed = await post(url, campaignId, 'claim', { requestId: claimId, ttlSeconds: 600 })
      expect(claimed.status, claimed.text).toBe(200)
    }
    if (op === 'cancel') {
      const submitId = `submit-${tag}`
      sent.push({ campaignId, requestId: submitId })
      const submitted = await post(url, campaignId, 'submit', { requestId: submitId, parts: PARTS })
      expect(submitted.status, submitted.text).toBe(202)
    }
    if (point === 'remote-holds') sim.inject({ rpcMethod: CONTROL_METHOD[op] }, { kind: 'hold' }, 1)

    sent.push({ campaignId, requestId })
    const inFlight = post(url, campaignId, op, next.body).catch(() => undefined)
    let committed = false
    if (probe) {
      const line = await waitFor(() => /CRASH-POINT (\S+) (\S+)\n/.exec(gw.out()) ?? undefined, 15_000, `the gateway to reach ${point}`)
      expect([line[1], line[2]]).toEqual([point, requestId])
      committed = point !== 'before-pending'
    } else {
      await waitFor(() => sim.held().some((h) => h.id === requestId) || undefined, 15_000, 'the remote to hold the mutation')
    }
    gw.child.kill('SIGKILL')
    expect(await gw.exited).toBe(null)
    await inFlight

    let fate: Crashed['fate']
    if (point === 'remote-holds') {
      // the remote applies it after all, or loses it: the gateway cannot know which
      fate = Math.random() < 0.5 ? 'delivered' : 'dropped'
      const held = (h: { id: unknown }): boolean => h.id === requestId
      expect(fate === 'delivered' ? sim.deliverHeld(held) : sim.dropHeld(held)).toBe(1)
    }
    prev = { ...next, committed, fate }
  }

  // no request id reached the remote twice, on the wire or at a handler
  const seen = new Map<unknown, number>()
  for (const c of sim.rpcCalls()) if (MUTATION_METHODS.has(c.method)) seen.set(c.id, (seen.get(c.id) ?? 0) + 1)
  const duplicates = new Set([...seen].filter(([, n]) => n > 1).map(([id]) => id))
  for (const [id, n] of sim.control.requestCounts()) if (n > 1) duplicates.add(id)
  console.log(`crash-points: ${point} ×${REPEATS}: lost ids ${lost}, duplicate sends ${duplicates.size}`)
  expect(lost).toBe(0)
  expect([...duplicates]).toEqual([])
}

describe('a gateway killed at each point of a mutation', () => {
  for (const [p, point] of POINTS.entries()) {
    it(`${point}: restarted on the same ledger, no id lost, none sent twice`, async () => {
      await runPoint(point, p)
    }, TEST_TIMEOUT_MS)
  }
})
