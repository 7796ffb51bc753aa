// Two JWT callers that are one name and two identities (docs/design.md#request-records): alice and
// mallory, whose subjects differ and whose name claim (`azp`, as operating.md's Keycloak example
// maps it, or `preferred_username`) is the same, each a controller of its own, against a gateway
// in controller mode whose keys come from a JWKS endpoint the test runs.
import { onTestFinished } from 'vitest'
import { CONTROL_ENV, type ControlPair } from './control.js'
import { AUDIENCE, ISSUER, eventually, sign, startIdp, testKey } from './jwks.js'

export async function twoSubjectsOneName (
  startControlPair: (o?: { env?: Record<string, string> }) => Promise<ControlPair>,
  claimName: string,
  /** a campaign whose lease read shows the keys are in use */
  probeCampaign: string
): Promise<{ p: ControlPair; alice: string; mallory: string }> {
  const key = await testKey('k1')
  const idp = await startIdp([key])
  onTestFinished(idp.close)
  const p = await startControlPair({
    env: {
      ...CONTROL_ENV,
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
      GATEWAY_JWT_JWKS_URL: idp.url,
      GATEWAY_JWT_CLAIMS: JSON.stringify({ name: claimName }),
      GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000'
    }
  })
  const token = async (sub: string, controllerId: string): Promise<string> =>
    await sign(key, { sub, [claimName]: 'ml-portal', scope: 'read control', oo_controller_id: controllerId })
  const alice = await token('alice-0001', 'ctl-alice')
  const mallory = await token('mallory-0666', 'ctl-mallory')
  await eventually(async () => (await p.get(alice, `/v1/campaigns/${probeCampaign}/control`)).status === 200, 5000, 'keys in use')
  return { p, alice, mallory }
}
