// Crash safety of the SQLite ledger (docs/design.md#ledger): the gateway process is killed
// with SIGKILL while a mutation is in flight, then restarted on the same ledger file. The
// in-flight record comes back `ambiguous`, nothing is re-sent, every earlier record is still
// there; and a second process on the same file refuses to start while the first owns it.
import { afterEach, describe, expect, it } from 'vitest'
import { sqliteControlChild } from '../helpers/control.js'
import { call } from '../helpers/http.js'
import { listenUrlOf, startGatewayChild, waitFor } from '../helpers/child.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f()
})

describe('a gateway killed mid-mutation', () => {
  it('restarts on the same ledger with the in-flight record ambiguous, nothing re-sent, nothing lost', async () => {
    const { sim, token, env } = await sqliteControlChild(cleanups)

    const first = startGatewayChild(env)
    const url = await listenUrlOf(first)
    const post = async (base: string, path: string, body: object) => await call(`${base}${path}`, { method: 'POST', token, body })
    expect((await post(url, '/v1/campaigns/camp-k/control/claim', { requestId: 'claim-0001', ttlSeconds: 600 })).status).toBe(200)
    expect((await post(url, '/v1/campaigns/camp-k/interventions', { requestId: 'iv-before-kill', intervention: { a: 1 } })).status).toBe(200)
    expect((await post(url, '/v1/campaigns/camp-j/control/claim', { requestId: 'claim-0002', ttlSeconds: 600 })).status).toBe(200)

    // a second process on the same file refuses to start, saying why
    const intruder = startGatewayChild({ ...env })
    expect(await intruder.exited).not.toBe(0)
    expect(intruder.err()).toMatch(/in use by another gateway process/)

    // the remote holds the next intervention 1.5 s before applying it; the gateway dies meanwhile
    sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'delay', ms: 1500 }, 1)
    const inFlight = post(url, '/v1/campaigns/camp-k/interventions', { requestId: 'iv-in-flight', intervention: { b: 2 } }).catch(() => undefined)
    await waitFor(() => sim.rpcCalls().find((c) => c.id === 'iv-in-flight'), 10_000, 'the mutation to reach the remote')
    first.child.kill('SIGKILL')
    await first.exited
    await inFlight
    // the remote applies it after all: only request_status can tell
    await waitFor(() => sim.control.applied().find((a) => a.requestId === 'iv-in-flight'), 5_000, 'the remote to apply it')
    const interveneCalls = sim.rpcCalls().filter((c) => c.method === 'campaign/intervene').length

    const second = startGatewayChild(env)
    const url2 = await listenUrlOf(second)
    const rec = await call(`${url2}/v1/campaigns/camp-k/requests/iv-in-flight`, { token })
    expect(rec.status).toBe(200)
    expect(rec.body).toMatchObject({ state: 'ambiguous', operation: 'intervene', controllerEpoch: 1 })
    const list = await call(`${url2}/v1/campaigns/camp-k/requests`, { token })
    expect(list.body.requests.map((r: { requestId: string; state: string }) => `${r.requestId}:${r.state}`))
      .toEqual(['iv-in-flight:ambiguous', 'iv-before-kill:applied', 'claim-0001:applied'])
    expect(second.out()).toContain('the gateway restarted before its outcome was written')

    // a lease known before the restart is not trusted after it: read_control comes first
    const reads = sim.rpcCalls().filter((c) => c.method === 'campaign/read_control').length
    expect((await post(url2, '/v1/campaigns/camp-j/interventions', { requestId: 'iv-j-after', intervention: { d: 4 } })).status).toBe(200)
    expect(sim.rpcCalls().filter((c) => c.method === 'campaign/read_control').length).toBe(reads + 1)

    // blocked until resolved; reconcile asks, never re-sends
    const blocked = await post(url2, '/v1/campaigns/camp-k/interventions', { requestId: 'iv-after-restart', intervention: { c: 3 } })
    expect(blocked.body.error.code).toBe('ambiguity_unresolved')
    const reconciled = await post(url2, '/v1/campaigns/camp-k/requests/iv-in-flight/reconcile', {})
    expect(reconciled.body.state).toBe('applied')
    expect(sim.rpcCalls().filter((c) => c.id === 'iv-in-flight')).toHaveLength(1)
    expect(sim.rpcCalls().filter((c) => c.method === 'campaign/intervene').length).toBe(interveneCalls + 1) // iv-j-after only
    for (const [id, n] of sim.control.requestCounts()) expect(n, id).toBe(1)

    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 60_000)
})
