// The group commit under a kill (docs/design.md#group-commit): a gateway on a SQLite file with
// mutations of sixteen campaigns in flight at once — their writes sharing commits — is killed with
// SIGKILL at a random moment, ROUNDS times, and restarted on the same file each time. Checked
// against the remote's own log: every id that reached the remote has its record (lost ids 0);
// every mutation answered 200 before the kill is recorded applied (its outcome was on disk before
// its answer left); no id reached the remote twice; and each id sent again after the restart
// never reaches the remote a second time.
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { sqliteControlChild } from '../helpers/control.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { listenUrlOf, startGatewayChild, type GatewayChild } from '../helpers/child.js'

const ROUNDS = Number(process.env.GROUP_COMMIT_ROUNDS ?? 3)
const CAMPAIGNS = 16

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f()
})

describe('a gateway killed with many mutations in flight', () => {
  it('loses no record, answers no 200 it did not keep, sends no id twice', { timeout: 180_000 }, async () => {
    const { sim, token, env } = await sqliteControlChild(cleanups, { GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0' })
    const post = async (url: string, path: string, body: object): Promise<JsonResponse> => await call(`${url}${path}`, { method: 'POST', token, body })
    const sends = (requestId: string): number => sim.rpcCalls().filter((c) => c.id === requestId).length
    const sent: Array<{ campaignId: string; requestId: string; answered200: boolean }> = []
    const lost: string[] = []
    const unkept: string[] = []
    let batched = 0

    let gw: GatewayChild = startGatewayChild(env)
    let url = await listenUrlOf(gw)
    for (let round = 0; round < ROUNDS; round++) {
      const tag = `${round}-${randomBytes(3).toString('hex')}`
      const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) => `camp-${tag}-${i}`)
      await Promise.all(campaigns.map(async (c) => {
        const r = await post(url, `/v1/campaigns/${c}/control/claim`, { requestId: `claim-${c}`, ttlSeconds: 600 })
        expect(r.status, r.text).toBe(200)
      }))

      // sixteen streams of interventions, one per campaign, until the kill
      let killed = false
      const round0 = sent.length
      const streams = campaigns.map(async (campaignId) => {
        for (let n = 0; !killed; n++) {
          const entry = { campaignId, requestId: `iv-${campaignId}-${n}`, answered200: false }
          sent.push(entry)
          const r = await post(url, `/v1/campaigns/${campaignId}/interventions`, { requestId: entry.requestId, intervention: { n } }).catch(() => undefined)
          if (r === undefined) return
          // answered before the kill: what it says must survive it
          if (r.status === 200) entry.answered200 = true
          else if (!killed) throw new Error(`intervention answered ${r.status}: ${r.text}`)
        }
      })
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700))
      killed = true
      gw.child.kill('SIGKILL')
      expect(await gw.exited).toBe(null)
      await Promise.all(streams)
      batched += sent.length - round0

      gw = startGatewayChild(env)
      url = await listenUrlOf(gw)
      for (const s of sent.slice(round0)) {
        const rec = await call(`${url}/v1/campaigns/${s.campaignId}/requests/${s.requestId}`, { token })
        const reached = sends(s.requestId)
        // the record or its absence, nothing else: any other answer would hide a lost or unkept id
        expect([200, 404], `${s.requestId}: ${rec.status} ${rec.text}`).toContain(rec.status)
        if (reached > 0 && rec.status === 404) lost.push(s.requestId)
        if (s.answered200 && (rec.status !== 200 || rec.body.state !== 'applied')) unkept.push(`${s.requestId}: ${rec.status} ${rec.text.slice(0, 200)}`)
        // the same request again: what reached the remote never reaches it twice
        await post(url, `/v1/campaigns/${s.campaignId}/interventions`, { requestId: s.requestId, intervention: { again: true } })
        if (reached > 0) expect(sends(s.requestId), s.requestId).toBe(reached)
      }
    }
    gw.child.kill('SIGTERM')
    await gw.exited

    const seen = new Map<unknown, number>()
    for (const c of sim.rpcCalls()) if (c.method === 'campaign/intervene') seen.set(c.id, (seen.get(c.id) ?? 0) + 1)
    const duplicates = [...seen].filter(([, n]) => n > 1).map(([id]) => id)
    console.log(`group-commit-crash: ${ROUNDS} kills, ${batched} interventions sent in flight 16 at a time, lost ids ${lost.length}, unkept 200s ${unkept.length}, duplicate sends ${duplicates.length}`)
    expect(sent.filter((s) => s.answered200).length).toBeGreaterThan(ROUNDS * CAMPAIGNS)
    expect(lost).toEqual([])
    expect(unkept.slice(0, 5)).toEqual([])
    expect(duplicates).toEqual([])
  })
})
