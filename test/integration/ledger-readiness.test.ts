// The ledger behind readiness and the routes (docs/design.md#readiness, docs/design.md#ledger):
// /readyz asks the ledger for real, and a ledger that fails answers 503 ledger_unavailable
// (retryable) on every route that needs it — never a raw 500, never a driver message.
import { describe, expect } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'

describe('the ledger and readiness', () => {
  it('is ready with a reachable ledger, and 503 ledger_unavailable everywhere once it fails', async ({ controlPair: p }) => {
    const t = p.gw.tokens.controller
    const ready = await p.get(t, '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body.checks).toEqual({ card: true, ledger: true, upstreamCircuit: 'closed', clock: { ok: true, ledgerOffsetMs: 0, remoteOffsetMs: null, marginMs: 2000 } })
    await claim(p, t, 'camp-l')

    await p.gw.app.ledger.close()
    const notReady = await p.get(t, '/readyz')
    expect(notReady.status).toBe(503)
    expect(notReady.body).toMatchObject({ ready: false, checks: { card: true, ledger: false } })
    for (const res of [
      await p.post(t, '/v1/campaigns/camp-l/interventions', { requestId: rid(), intervention: { a: 1 } }),
      await p.get(t, '/v1/campaigns/camp-l/requests'),
      await p.get(t, '/v1/campaigns/camp-l/requests/req-00000000'),
      await p.post(t, '/v1/campaigns/camp-l/requests/req-00000000/reconcile')
    ]) {
      expect(res.status).toBe(503)
      expect(res.body.error).toMatchObject({ code: 'ledger_unavailable', retryable: true })
      expect(res.text).not.toMatch(/sqlite|database|connection is not open/i)
    }
    // nothing was sent for the refused mutation
    expect(p.calls('campaign/intervene')).toHaveLength(0)
    // the reads that need no ledger still work
    expect((await p.get(t, '/v1/supervisor/health')).status).toBe(200)
  })
})
