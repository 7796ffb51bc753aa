// The front door's signed card (docs/api.md#a2a-front-door): with GATEWAY_CARD_SIGNING_KEY the
// card carries a JWS over its canonical form that verifies with the key the JWKS route publishes,
// as the gateway verifies others' cards; it names GATEWAY_PUBLIC_URL, never the request's Host;
// a key without the URL, or a key that is no private asymmetric JWK, refuses to start.
import { exportJWK, generateKeyPair } from 'jose'
import { describe, expect } from 'vitest'
import { loadConfig } from '../../src/config/index.js'
import { verifyCard } from '../../src/discovery/card-signature.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

async function privateJwk (): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  return { ...(await exportJWK(privateKey)), kid: 'gw-card-1', alg: 'ES256' }
}

describe('the signed card', () => {
  it('verifies with the published key in both shapes, names the public URL, and a tampered copy fails', async ({ startPair }) => {
    const key = await privateJwk()
    const { gw } = await startPair({ env: { GATEWAY_CARD_SIGNING_KEY: JSON.stringify(key), GATEWAY_PUBLIC_URL: 'https://gateway.example/' } })
    const jwks = (await call(`${gw.url}/a2a/.well-known/jwks.json`)).body
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]).toMatchObject({ kid: 'gw-card-1', alg: 'ES256', use: 'sig', kty: 'EC' })
    expect(jwks.keys[0].d).toBeUndefined()
    const variants: Array<Record<string, string>> = [{}, { 'a2a-version': '1.0' }, { host: 'evil.example' }]
    for (const headers of variants) {
      const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers })).body
      expect(JSON.stringify(card)).not.toContain('evil.example')
      expect(card.supportedInterfaces[0].url).toBe('https://gateway.example/a2a/')
      expect(card.signatures[0]).toEqual({ protected: expect.any(String), signature: expect.any(String) })
      expect((await verifyCard(card, jwks)).state).toBe('verified')
      expect((await verifyCard({ ...card, name: 'someone else' }, jwks)).state).toBe('failed')
    }
  })

  it('a key without GATEWAY_PUBLIC_URL, or no private asymmetric JWK, is refused at start', async () => {
    const key = await privateJwk()
    expect(() => loadConfig({ GATEWAY_CARD_SIGNING_KEY: JSON.stringify(key) })).toThrow(/GATEWAY_CARD_SIGNING_KEY: requires GATEWAY_PUBLIC_URL/)
    const { d: _d, ...pub } = key
    expect(() => loadConfig({ GATEWAY_CARD_SIGNING_KEY: JSON.stringify(pub), GATEWAY_PUBLIC_URL: 'https://g.example' })).toThrow(/private key/)
    expect(() => loadConfig({ GATEWAY_CARD_SIGNING_KEY: JSON.stringify({ ...key, alg: 'HS256' }), GATEWAY_PUBLIC_URL: 'https://g.example' })).toThrow(/alg/)
    expect(() => loadConfig({ GATEWAY_CARD_SIGNING_KEY: 'not json', GATEWAY_PUBLIC_URL: 'https://g.example' })).toThrow(/private JWK/)
    expect(() => loadConfig({ GATEWAY_PUBLIC_URL: 'https://u:p@g.example' })).toThrow(/GATEWAY_PUBLIC_URL/)
  })
})
