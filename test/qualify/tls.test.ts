// The probe's TLS (docs/design.md#qualification): verification always on, UPSTREAM_CA_FILE
// added to the system roots. A deployment whose certificate chains to the given CA qualifies;
// one signed by an unknown CA FAILs every assertion with the tool's TLS reason, also with
// NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment.
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { TRUSTED_CA_FILE, trustedServer, unknownServer } from '../helpers/tls.js'
import { envFor, notPassed, qualify } from './helpers.js'

let sim: Simulator | undefined
afterEach(async () => { await sim?.close(); sim = undefined })

describe('qualify over TLS', () => {
  it('trusts UPSTREAM_CA_FILE in addition to the system roots', async () => {
    sim = await startSimulator({ secret: 'tls-secret-1', tls: trustedServer })
    expect(sim.url).toMatch(/^https:/)
    const run = await qualify(envFor(sim, { UPSTREAM_CA_FILE: TRUSTED_CA_FILE }))
    expect(notPassed(run)).toEqual({ card_signature: 'SKIP', observer_chain: 'SKIP', campaign_control: 'SKIP' })
    expect(run.err).not.toMatch(/warning/)
  })

  it('without the CA, or against an unknown issuer, nothing is trusted', async () => {
    sim = await startSimulator({ secret: 'tls-secret-1', tls: trustedServer })
    const bare = await qualify(envFor(sim))
    expect(bare.reason.health).toBe('TLS verification failed: the certificate is not trusted or does not name the host')
    expect(bare.code).toBe(1)
    await sim.close()
    sim = await startSimulator({ secret: 'tls-secret-1', tls: unknownServer })
    const unknown = await qualify(envFor(sim, { UPSTREAM_CA_FILE: TRUSTED_CA_FILE }))
    expect(unknown.reason.bearer_accepted).toBe('TLS verification failed: the certificate is not trusted or does not name the host')
    expect(sim.received).toEqual([]) // no request ever reached it
  })

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn verification off (docs/design.md#production)', async () => {
    sim = await startSimulator({ secret: 'tls-secret-0123456789', tls: unknownServer })
    // Node's TLS reads the variable at each connection; this file runs in its own process (pool: forks)
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
    try {
      const run = await qualify(envFor(sim, { UPSTREAM_CA_FILE: TRUSTED_CA_FILE }))
      expect(run.reason.bearer_accepted).toBe('TLS verification failed: the certificate is not trusted or does not name the host')
      expect(run.code).toBe(1)
    } finally {
      delete process.env.NODE_TLS_REJECT_UNAUTHORIZED
    }
    expect(sim.received).toEqual([])
  })
})
