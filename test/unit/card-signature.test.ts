// Card signatures (docs/design.md#signed-cards) with keys generated here: ES256 and RS256 verify;
// a tampered card, an unknown kid, a wrong typ, an HMAC or `none` signature do not; a card
// re-serialised with its keys reordered still verifies (the canonical form), and one with empty
// members added verifies and is read without them (the signed form); the canonical forms —
// §8.4.1's own example to the byte, @a2a-js/sdk's canonicalizeAgentCard to the byte, the whole
// card — and a card the SDK signed; and the JWKS file refuses what must never be a trusted key.
import { exportJWK, FlattenedSign, generateKeyPair, generateSecret, base64url } from 'jose'
import canonicalize from 'canonicalize'
import { describe, expect, it } from 'vitest'
import { canonicalizeAgentCard, generateAgentCardSignature } from '@a2a-js/sdk'
import { cardPayload, type CardForm } from '../../src/discovery/card-canonical.js'
import { signedForm, verifyCard } from '../../src/discovery/card-signature.js'

// the whole card without its empty members: the form the simulator signs, as the SDK's cleanEmpty leaves it
const canonicalCardPayload = (card: Record<string, unknown>): string => cardPayload(card, 'whole')
import { parseJwks } from '../../src/core/trusted-keys.js'

const CARD = {
  name: 'OpenOperator',
  description: 'signed',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'https://oo.example/a2a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: false, extensions: [{ uri: 'urn:openoperator:campaign-control:v1', params: { lease_epoch_enforced: true, policy_enforced: true, operations: { claim_control: 'campaign/claim_control' } } }] },
  skills: [{ id: 'argus_supervisor_health', name: 'Health', tags: [] }],
  iconUrl: ''
}

async function keyPair (alg: 'ES256' | 'RS256', kid: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, jwk: { ...await exportJWK(publicKey), kid, alg } }
}

async function sign<C extends Record<string, unknown>> (card: C, privateKey: Parameters<FlattenedSign['sign']>[0], header: Record<string, unknown>, form: CardForm = 'whole'): Promise<C & { signatures: Array<{ protected: string | undefined; signature: string }> }> {
  const jws = await new FlattenedSign(new TextEncoder().encode(cardPayload(card, form))).setProtectedHeader(header as never).sign(privateKey)
  return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] }
}

/** the same JSON members in reverse order, at every level */
function reordered (v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reordered)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)]))
  return v
}

describe('verifyCard', () => {
  it.each(['ES256', 'RS256'] as const)('%s: verifies, names the key; reordered keys still verify; a tampered card does not', async (alg) => {
    const k = await keyPair(alg, `key-${alg}`)
    const signed = await sign(CARD, k.privateKey, { alg, kid: `key-${alg}`, typ: 'JOSE' })
    const jwks = { keys: [k.jwk] }
    expect(await verifyCard(signed, jwks)).toMatchObject({ state: 'verified', keyId: `key-${alg}`, algorithm: alg })
    const shuffled = JSON.parse(JSON.stringify(reordered(signed))) as Record<string, unknown>
    expect(JSON.stringify(shuffled)).not.toBe(JSON.stringify(signed))
    expect((await verifyCard(shuffled, jwks)).state).toBe('verified')
    const tampered = structuredClone(signed) as typeof signed
    tampered.capabilities.extensions[0]!.params.policy_enforced = false
    expect(await verifyCard(tampered, jwks)).toEqual({ state: 'failed', reason: `no signature verified: signature 1: the signature does not match the card (key key-${alg})` })
  })

  it('the payload is JCS of the card without signatures and without empty members', () => {
    expect(canonicalCardPayload({ b: 1, a: { y: '', z: [], w: {} }, signatures: [1], c: null, d: [null, 2] })).toBe(canonicalize({ b: 1, d: [2] }))
  })

  it('empty members added after signing still verify, and the signed form is the card without them', async () => {
    const k = await keyPair('ES256', 'k1')
    const signed = await sign(CARD, k.privateKey, { alg: 'ES256', kid: 'k1', typ: 'JOSE' })
    const added = { ...signed, url: '', preferredTransport: null, additionalInterfaces: [], extra: {}, supportedInterfaces: [...signed.supportedInterfaces, {}, null] }
    expect((await verifyCard(added, { keys: [k.jwk] })).state).toBe('verified')
    // the signer's own empties go too: iconUrl "", a skill's tags []
    const { iconUrl: _empty, ...rest } = signed
    const covered = { ...rest, skills: [{ id: 'argus_supervisor_health', name: 'Health' }] }
    expect(signedForm(added, 'whole')).toEqual(covered)
    expect(signedForm(signed, 'whole')).toEqual(covered)
    expect(canonicalCardPayload(signedForm(added, 'whole'))).toBe(canonicalCardPayload(signed))
    expect((await verifyCard(signedForm(added, 'whole'), { keys: [k.jwk] })).state).toBe('verified')
  })

  it('refuses an unsigned card, an unknown kid, a typ other than JOSE, HMAC and none', async () => {
    const k = await keyPair('ES256', 'k1')
    const other = await keyPair('ES256', 'k2')
    const jwks = { keys: [k.jwk] }
    expect((await verifyCard(CARD, jwks)).reason).toBe('the card is unsigned and GATEWAY_CARD_JWKS_FILE requires a signature')
    expect((await verifyCard(await sign(CARD, other.privateKey, { alg: 'ES256', kid: 'k2', typ: 'JOSE' }), jwks)).reason).toBe('no signature verified: signature 1: no trusted key has kid k2 for ES256')
    expect((await verifyCard(await sign(CARD, k.privateKey, { alg: 'ES256', kid: 'k1', typ: 'JWT' }), jwks)).reason).toBe('no signature verified: signature 1: typ is not JOSE')
    // a signature made with a secret: the algorithm itself is refused, whatever the key set holds
    const secret = await generateSecret('HS256', { extractable: true })
    expect((await verifyCard(await sign(CARD, secret, { alg: 'HS256', kid: 'k1', typ: 'JOSE' }), jwks)).reason).toBe('no signature verified: signature 1: algorithm HS256 is not accepted')
    const none = { ...CARD, signatures: [{ protected: base64url.encode(JSON.stringify({ alg: 'none', kid: 'k1', typ: 'JOSE' })), signature: '' }] }
    expect((await verifyCard(none, jwks)).reason).toBe('no signature verified: signature 1: algorithm none is not accepted')
  })

  it('one good signature among bad ones verifies (rotation: old and new keys side by side)', async () => {
    const oldKey = await keyPair('ES256', 'old')
    const newKey = await keyPair('RS256', 'new')
    const a = await sign(CARD, oldKey.privateKey, { alg: 'ES256', kid: 'old', typ: 'JOSE' })
    const b = await sign(CARD, newKey.privateKey, { alg: 'RS256', kid: 'new', typ: 'JOSE' })
    const both = { ...CARD, signatures: [...a.signatures, ...b.signatures] }
    expect(await verifyCard(both, { keys: [newKey.jwk] })).toMatchObject({ state: 'verified', keyId: 'new' })
    expect(await verifyCard(both, { keys: [oldKey.jwk] })).toMatchObject({ state: 'verified', keyId: 'old' })
  })
})

describe('the canonical forms (docs/design.md#signed-cards)', () => {
  it('proto is A2A v1.0 §8.4.1\'s own example, to the byte: REQUIRED kept at its default, optional kept as set, an empty plain list omitted', () => {
    const fragment = { name: 'Example Agent', description: '', capabilities: { streaming: false, pushNotifications: false, extensions: [] }, skills: [] }
    expect(cardPayload(fragment, 'proto')).toBe('{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}')
  })

  it('sdk is what @a2a-js/sdk 1.3 computes (canonicalizeAgentCard), whatever the card holds', () => {
    const cards: Array<Record<string, unknown>> = [
      CARD,
      { ...CARD, skills: [], securityRequirements: [{ schemes: { bearer: { list: [] } } }], securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: '' } } } },
      { ...CARD, capabilities: { streaming: false, extensions: [{ uri: 'urn:x', required: false, description: '', params: { a: false, b: '', c: [] } }] } },
      // v0.3's members, which the v1.0 schema does not define, and snake_case spellings ProtoJSON readers accept
      { ...CARD, url: 'https://oo.example/a2a/', protocolVersion: '0.3.0', preferredTransport: 'JSONRPC', security: [{ bearer: [] }], default_input_modes: ['text/plain'] },
      { name: 'n', description: 'd', version: '1', supportedInterfaces: [], capabilities: {}, defaultInputModes: [], defaultOutputModes: [], skills: [], provider: {}, iconUrl: '', documentationUrl: 'https://d.example' }
    ]
    for (const card of cards) expect(cardPayload(card, 'sdk'), JSON.stringify(card)).toBe(canonicalizeAgentCard(card as never))
  })

  it('whole keeps every member the card has, v0.3\'s included; proto and sdk keep only the v1.0 schema\'s', () => {
    const v03 = { ...CARD, url: 'https://oo.example/a2a/', preferredTransport: 'JSONRPC' }
    expect(JSON.parse(cardPayload(v03, 'whole'))).toMatchObject({ url: 'https://oo.example/a2a/', preferredTransport: 'JSONRPC' })
    for (const form of ['proto', 'sdk'] as const) expect(JSON.parse(cardPayload(v03, form)).url, form).toBeUndefined()
  })

  it('a card deeper than 64 levels has no canonical form: refused, never a stack overflow', async () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const card = { ...CARD, capabilities: { extensions: [{ uri: 'urn:x', params: { deep } }] }, signatures: [{ protected: 'e30', signature: 'AA' }] }
    expect(() => cardPayload(card, 'proto')).toThrow(/deeper than 64/)
    expect(await verifyCard(card, { keys: [(await keyPair('ES256', 'k')).jwk] })).toEqual({ state: 'failed', reason: 'the card cannot be put in canonical form' })
  })

  it('a card @a2a-js/sdk signed verifies, read in the form it signed; so does one signed in §8.4.1\'s strict form', async () => {
    const k = await keyPair('ES256', 'sdk-1')
    const card = { ...CARD, skills: [], capabilities: { streaming: false, extensions: [{ uri: 'urn:x', required: false }] } }
    const bySdk = await generateAgentCardSignature(k.privateKey, { alg: 'ES256', kid: 'sdk-1', typ: 'JOSE' })(card as never) as unknown as Record<string, unknown>
    const r = await verifyCard(bySdk, { keys: [k.jwk] })
    expect(r).toMatchObject({ state: 'verified', form: 'sdk' })
    const strict = await sign(card, k.privateKey, { alg: 'ES256', kid: 'sdk-1', typ: 'JOSE' }, 'proto')
    expect(await verifyCard(strict, { keys: [k.jwk] })).toMatchObject({ state: 'verified', form: 'proto' })
    expect(signedForm(strict, 'proto').skills).toEqual([])
  })
})

describe('parseJwks', () => {
  it('accepts public keys with unique kids; refuses secrets, private keys, missing or repeated kids, and junk', async () => {
    const k = await keyPair('ES256', 'a')
    expect('jwks' in parseJwks(JSON.stringify({ keys: [k.jwk] }))).toBe(true)
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const priv = { ...await exportJWK(privateKey), kid: 'p' }
    expect(parseJwks(JSON.stringify({ keys: [priv, { kty: 'oct', k: 'c2VjcmV0', kid: 's' }, { ...k.jwk, kid: undefined }, k.jwk, k.jwk, { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'bad' }] }))).toEqual({
      problems: [
        'keys[0]: holds private key material; give the public key only',
        'keys[1]: kty must be RSA, EC or OKP (public keys; never a shared secret)',
        'keys[2]: needs a "kid" (a card\'s signature names its key by kid)',
        'keys[4]: kid "a" is used twice',
        'keys[5]: not a usable EC public key'
      ]
    })
    expect(parseJwks('{')).toEqual({ problems: ['not valid JSON'] })
    expect(parseJwks('{"keys":[]}')).toEqual({ problems: ['must be a JWKS: an object whose "keys" is a non-empty array'] })
  })
})
