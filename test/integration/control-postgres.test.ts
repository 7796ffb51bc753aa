// The control plane on the PostgreSQL ledger (docs/design.md#ledger): many campaigns mutated at
// once hold as many campaign locks, each on a session of its own. Drawn from the query pool they
// once took every connection and starved the queries their holders needed (ledger_unavailable
// under 32 concurrent mutations); locks have a pool of their own. Skipped, saying so, without
// TEST_POSTGRES_URL.
import { describe, expect } from 'vitest'
import { claim, rid } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { freshSchema } from '../helpers/postgres.js'

const PG = process.env.TEST_POSTGRES_URL
if (PG === undefined) console.warn('SKIP control on PostgreSQL: TEST_POSTGRES_URL is not set')

describe.skipIf(PG === undefined)('control on PostgreSQL', () => {
  it('40 campaigns mutated at once: every mutation served, none starved of a connection', async ({ startControlPair }) => {
    const schema = await freshSchema(PG!)
    try {
      const p = await startControlPair({ env: { GATEWAY_LEDGER_URL: schema.url } })
      const t = p.gw.tokens.controller
      const campaigns = Array.from({ length: 40 }, (_, i) => `camp-pg-${i}`)
      for (const c of campaigns) await claim(p, t, c)
      const answers = await Promise.all(campaigns.map(async (c) => await p.post(t, `/v1/campaigns/${c}/interventions`, { requestId: rid('iv'), intervention: { c } })))
      const codes = answers.map((a) => a.status === 200 ? 'ok' : String(a.body?.error?.code))
      expect(codes.filter((c) => c !== 'ok'), JSON.stringify(codes)).toEqual([])
      expect(p.calls('campaign/intervene')).toHaveLength(40)
      await p.gw.close()
    } finally {
      await schema.drop()
    }
  }, 60_000)
})
