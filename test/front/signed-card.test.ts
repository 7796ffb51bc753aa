// The front door's signed card (docs/api.md#a2a-front-door, docs/design.md#signed-cards): with
// GATEWAY_CARD_SIGNING_KEY the card carries JWS signatures over its canonical forms that verify
// with the key the JWKS route publishes — with @a2a-js/sdk's own verifyAgentCardSignature, with
// an independent §8.4.1 check (test/helpers/a2a-spec-card.ts), and as the gateway verifies others'
// cards, which reads a v0.3 card's own members (`url`) only while a signature covers them; it names
// GATEWAY_PUBLIC_URL, never the request's Host. A key without the URL, a key that is no private
// asymmetric JWK, or one that cannot sign — halves that disagree, the wrong curve or size for its
// alg, key_ops without sign — refuses to start, naming the variable; no card request is a 500.
import { generateKeyPairSync } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import { verifyAgentCardSignature } from '@a2a-js/sdk'
import { describe, expect, vi } from 'vitest'
import { loadConfig } from '../../src/config/index.js'
import { signedForm, verifyCard } from '../../src/discovery/card-signature.js'
import { startGatewayServer } from '../../src/server.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'
import { rawExchange } from '../helpers/raw-http.js'
import { specVerifiedSignatures } from '../helpers/a2a-spec-card.js'

async function privateJwk (alg: 'ES256' | 'ES384' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256', opts: { modulusLength?: number } = {}): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...opts })
  return { ...(await exportJWK(privateKey)), kid: 'gw-card-1', alg }
}

const URL_ENV = { GATEWAY_PUBLIC_URL: 'https://gateway.example/' }

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

  it('verifies with @a2a-js/sdk\'s verifyAgentCardSignature and with an independent §8.4.1 check, in both shapes, for every key type; a tampered card with neither', async ({ startPair }) => {
    const quiet = vi.spyOn(console, 'debug').mockImplementation(() => {})
    try {
      for (const alg of ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] as const) {
        const { gw } = await startPair({ env: { GATEWAY_CARD_SIGNING_KEY: JSON.stringify(await privateJwk(alg)), ...URL_ENV } })
        const published = (await call(`${gw.url}/a2a/.well-known/jwks.json`)).body.keys[0] as JWK
        const sdk = verifyAgentCardSignature(async () => published)
        for (const headers of [{}, { 'a2a-version': '1.0' }] as Array<Record<string, string>>) {
          const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`, { headers })).body
          const what = `${alg} ${JSON.stringify(headers)}`
          await expect(sdk(card), what).resolves.toBeUndefined()
          expect(await specVerifiedSignatures(card, published), what).toBeGreaterThanOrEqual(1)
          const tampered = { ...card, skills: card.skills.slice(1) }
          await expect(sdk(tampered), what).rejects.toThrow(/No valid signatures/)
          expect(await specVerifiedSignatures(tampered, published), what).toBe(0)
          expect((await verifyCard(tampered, { keys: [published] })).state, what).toBe('failed')
        }
        await gw.close()
      }
    } finally {
      quiet.mockRestore()
    }
  })

  it('covers the v0.3 card\'s own members too: the gateway reads its url while a signature covers it, and a changed url is read without it', async ({ startPair }) => {
    const { gw } = await startPair({ env: { GATEWAY_CARD_SIGNING_KEY: JSON.stringify(await privateJwk()), ...URL_ENV } })
    const jwks = (await call(`${gw.url}/a2a/.well-known/jwks.json`)).body
    const card = (await call(`${gw.url}/a2a/.well-known/agent-card.json`)).body
    const report = await verifyCard(card, jwks)
    expect(report).toMatchObject({ state: 'verified', form: 'whole' })
    expect(signedForm(card, 'whole').url).toBe('https://gateway.example/a2a/')
    // a url swapped after signing: only a form without v0.3's members still verifies, and is read without the url
    const moved = { ...card, url: 'https://evil.example/a2a/' }
    const r = await verifyCard(moved, jwks)
    expect(r.state).toBe('verified')
    expect(r.state === 'verified' ? r.form : undefined).not.toBe('whole')
    expect(signedForm(moved, r.state === 'verified' ? r.form : 'whole').url).toBeUndefined()
  })

  it('a key that cannot sign stops the start, naming GATEWAY_CARD_SIGNING_KEY: halves that disagree, the wrong curve or size, key_ops without sign', async () => {
    const a = await privateJwk()
    const b = await privateJwk()
    const refused = (jwk: Record<string, unknown>): string => {
      try {
        loadConfig({ GATEWAY_CARD_SIGNING_KEY: JSON.stringify(jwk), ...URL_ENV })
      } catch (err) {
        return (err as Error).message
      }
      return 'started'
    }
    // Node 24 checks an EC JWK's point against its private scalar at import, Node 20 does not: refused either way
    expect(refused({ ...a, x: b.x, y: b.y })).toMatch(/GATEWAY_CARD_SIGNING_KEY: (the JWK's public half \(crv, x, y\) is not the public key of its private half|the JWK is not a key Node can import)/)
    const rsa = await privateJwk('RS256')
    const otherRsa = await privateJwk('RS256')
    expect(refused({ ...rsa, n: otherRsa.n })).toMatch(/GATEWAY_CARD_SIGNING_KEY: (the JWK's public half \(n, e\) is not the public key of its private half|the JWK is not a key Node can import)/)
    expect(refused({ ...a, alg: 'ES384' })).toMatch(/GATEWAY_CARD_SIGNING_KEY: alg ES384 signs with an EC P-384 key; this key is EC P-256/)
    expect(refused({ ...a, alg: 'RS256' })).toMatch(/GATEWAY_CARD_SIGNING_KEY: alg RS256 signs with an RSA key/)
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' })
    expect(refused({ ...small, kid: 'small', alg: 'RS256' })).toMatch(/GATEWAY_CARD_SIGNING_KEY: alg RS256 signs with an RSA key of 2048 bits at least; this key is RSA of 1024 bits/)
    const ed = await privateJwk('EdDSA')
    const otherEd = await privateJwk('EdDSA')
    expect(refused({ ...ed, x: otherEd.x })).toMatch(/GATEWAY_CARD_SIGNING_KEY: (the JWK's public half \(crv, x\) is not the public key of its private half|the JWK is not a key Node can import)/)
    expect(refused({ ...(await privateJwk('EdDSA')), alg: 'ES256' })).toMatch(/GATEWAY_CARD_SIGNING_KEY: alg ES256 signs with an EC P-256 key; this key is OKP Ed25519/)
    expect(refused({ ...a, key_ops: ['verify'] })).toMatch(/GATEWAY_CARD_SIGNING_KEY: the JWK's key_ops does not allow "sign"/)
    expect(refused(a)).toBe('started')
    // past the configuration, the server's own start proves the key with the signer itself
    const config = loadConfig({ GATEWAY_CARD_SIGNING_KEY: JSON.stringify(a), ...URL_ENV, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', GATEWAY_LEDGER_URL: 'sqlite::memory:' })
    const broken = { ...config, frontCard: { ...config.frontCard, signingKey: { ...config.frontCard.signingKey!, privateJwk: { ...a, key_ops: ['verify'] } } } }
    await expect(startGatewayServer(broken, { logger: (await import('pino')).default({ level: 'silent' }) })).rejects.toThrow(/^GATEWAY_CARD_SIGNING_KEY: the key cannot sign the card/)
  })

  it('no request makes a card route answer 500: hosts, versions, methods and queries of every kind', async ({ startPair }) => {
    for (const env of [{ GATEWAY_CARD_SIGNING_KEY: JSON.stringify(await privateJwk()), ...URL_ENV }, { GATEWAY_TRUST_PROXY: '1' }]) {
      const { gw } = await startPair({ env })
      const port = new URL(gw.url).port
      const lines = [
        'GET /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n',
        'GET /a2a/.well-known/agent.json?x=%00%ff HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 9\r\n',
        'GET /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: a b\r\n',
        'GET /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: evil.example/a2a\r\nX-Forwarded-Host: \u00e9vil\r\nX-Forwarded-Proto: javascript\r\n',
        'GET /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: [::1]:' + port + '\r\nA2A-Version: 1.0\r\nA2A-Version: 0.3\r\n',
        'GET /a2a/.well-known/agent-card.json HTTP/1.0\r\n',
        'HEAD /a2a/.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n',
        'GET /a2a/.well-known/jwks.json HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\r\n'
      ]
      for (const head of lines) {
        for (let i = 0; i < 3; i++) {
          const res = await rawExchange(gw.url, `${head}Connection: close\r\n\r\n`)
          expect(res.status, head).toBeGreaterThan(0)
          expect(res.status, head).toBeLessThan(500)
        }
      }
      await gw.close()
    }
  })
})
