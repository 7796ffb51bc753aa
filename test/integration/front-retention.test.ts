// Ledger retention and the A2A front door (docs/api.md#a2a-front-door,
// docs/design.md#request-ids-are-forever), on both ledgers, over sockets against the simulator:
// past GATEWAY_LEDGER_RETENTION_DAYS a front-door read's stored answer goes with its row, so a
// repeat of its message id is a fresh read (harmless: a read changes nothing); a submission's row
// stays, and its request record is pruned like any other, so a repeat of an old message id is
// replayed (its task, state `unknown`), other content or another caller is refused, and nothing
// reaches the remote again. PostgreSQL runs only with TEST_POSTGRES_URL (skipped, saying so).
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { CONTROL_ENV, CONTROL_SIM, controlPairOf, expectEachRequestOnce, rid } from '../helpers/control.js'
import { startGateway } from '../helpers/gateway.js'
import { frontRpc } from '../helpers/http.js'
import { freshSchema } from '../helpers/postgres.js'

const DAY = 86_400_000
const URN = 'urn:openoperator:argus-supervisor:v1'
const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP front-door retention on PostgreSQL: TEST_POSTGRES_URL is not set')

const read = (messageId: string) => ({
  configuration: { blocking: true },
  message: { role: 'user', kind: 'message', messageId, extensions: [URN], metadata: { [URN]: { operation: 'supervisor.health', requestId: messageId } }, parts: [{ kind: 'data', data: { params: {} } }] }
})
const submission = (campaignId: string, messageId: string, text = 'train it') => ({
  configuration: { blocking: false },
  message: { role: 'user', kind: 'message', messageId, metadata: { argus_supervisor: { campaign_id: campaignId } }, parts: [{ kind: 'text', text }] }
})

for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(kind === 'postgres' && PG === undefined)(`front-door retention on ${kind}`, () => {
    it('an old read is deleted and a repeat is a fresh read; an old submission is replayed or refused, never sent again', async () => {
      const schema = kind === 'postgres' ? await freshSchema(PG!) : undefined
      let offset = 0
      const now = (): number => Date.now() + offset
      const sim = await startSimulator({ ...CONTROL_SIM, campaignControl: { now } })
      try {
        const gw = await startGateway({
          simulator: sim,
          clock: now,
          ledgerClock: now,
          env: { ...CONTROL_ENV, GATEWAY_LEDGER_RETENTION_DAYS: '30', ...(schema !== undefined ? { GATEWAY_LEDGER_URL: schema.url } : {}) }
        })
        const p = controlPairOf(sim, gw)
        const t = gw.tokens.controller
        const identity = 'static:controller'
        const C = 'camp-front-ret'
        const argusSends = (): number => p.calls('message/send').filter((c) => c.params.message.metadata?.[URN] !== undefined).length

        const readId = rid('read')
        const first = await frontRpc(gw.url, t, 'message/send', read(readId))
        expect(first.body.result.kind).toBe('message')
        expect((await frontRpc(gw.url, t, 'message/send', read(readId))).body.result).toEqual(first.body.result)
        expect(argusSends()).toBe(1)

        expect((await frontRpc(gw.url, t, 'campaign/claim_control', { campaign_id: C, request_id: rid('claim'), ttl_seconds: 600 })).body.result.lease).toBeDefined()
        const subId = rid('submit')
        const sub = await frontRpc(gw.url, t, 'message/send', submission(C, subId))
        const taskId = sub.body.result.id as string
        expect(taskId).toEqual(expect.any(String))

        // inside the window nothing goes; forty days on, past it
        expect(await gw.app.control.prune()).toBe(0)
        expect(await gw.app.ledger.getFrontSend(identity, readId)).toBeDefined()
        offset += 40 * DAY
        expect(await gw.app.control.prune()).toBe(2)
        expect(await gw.app.ledger.getFrontSend(identity, readId)).toBeUndefined()
        expect(await gw.app.ledger.get(subId)).toMatchObject({ params: null, answer: null, prunedAt: expect.any(Number) })
        expect(await gw.app.ledger.getFrontSend(identity, subId)).toMatchObject({ kind: 'submit', taskId })
        const logs = gw.logs.join('')
        expect(logs).toContain('"frontReads":1')

        // the read's repeat is a fresh read: answered, and the remote asked again
        expect((await frontRpc(gw.url, t, 'message/send', read(readId))).body.result.kind).toBe('message')
        expect(argusSends()).toBe(2)

        // hold the campaign again, at a newer epoch: a pruned id would pass the lease checks now
        expect((await frontRpc(gw.url, t, 'campaign/claim_control', { campaign_id: C, request_id: rid('claim'), ttl_seconds: 600 })).body.result.lease).toBeDefined()
        const calls = sim.rpcCalls().length
        // the submission's repeat replays its task; other content, another caller: refused
        const again = await frontRpc(gw.url, t, 'message/send', submission(C, subId))
        expect(again.body.result).toMatchObject({ kind: 'task', id: taskId, status: { state: 'unknown' }, metadata: { argus_supervisor: { request_id: subId, pruned: true } } })
        const other = await frontRpc(gw.url, t, 'message/send', submission(C, subId, 'something else'))
        expect(other.body.error).toMatchObject({ code: -32011, data: { code: 'idempotency_key_mismatch' } })
        const stranger = await frontRpc(gw.url, gw.tokens.all, 'message/send', submission(C, subId))
        expect(stranger.body.error).toMatchObject({ code: -32011, data: { code: 'idempotency_key_conflict' } })
        expect(JSON.stringify(stranger.body)).not.toContain(taskId)
        // the owner still owns the task; nothing of it reached the remote
        expect((await frontRpc(gw.url, t, 'tasks/get', { id: taskId })).body.result.id).toBe(taskId)
        expect(sim.rpcCalls().filter((c) => c.method !== 'tasks/get')).toHaveLength(calls)
        expect(p.calls('message/send').filter((c) => c.params.message.messageId === subId)).toHaveLength(1)
        await gw.close()
      } finally {
        await sim.close()
        await schema?.drop()
      }
      expectEachRequestOnce(sim)
    })
  })
}
