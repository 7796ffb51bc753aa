// Signed agent cards (A2A v1.0 §8.4): each signature verifies as a detached flattened JWS over
// JCS(cleanEmpty(card without signatures)), computed here independently of the simulator, and
// @a2a-js/sdk's own verifier accepts the card, so the simulator signs as the real SDK does.
// A card tampered with after signing does not verify; keys rotate at run time.
import { verifyAgentCardSignature } from '@a2a-js/sdk'
import canonicalize from 'canonicalize'
import { base64url, decodeProtectedHeader, exportJWK, flattenedVerify, generateKeyPair } from 'jose'
import type { CryptoKey } from 'jose'
import { describe, expect, it, vi } from 'vitest'
import { useSimulator } from './helpers.js'
import { V1, card } from './v1-helpers.js'

const start = useSimulator()

// The SDK's cleanEmpty, restated: null, "", [] and {} members go, recursively.
function cleanEmpty (value: unknown): unknown {
  if (value === null || value === undefined || value === '') return undefined
  if (Array.isArray(value)) {
    const kept = value.map(cleanEmpty).filter((v) => v !== undefined)
    return kept.length === 0 ? undefined : kept
  }
  if (typeof value === 'object') {
    const kept = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cleanEmpty(v)]).filter(([, v]) => v !== undefined))
    return Object.keys(kept).length === 0 ? undefined : kept
  }
  return value
}

function payloadOf (signed: Record<string, unknown>): string {
  const { signatures: _signatures, ...rest } = signed
  return base64url.encode(canonicalize(cleanEmpty(rest)) as string)
}

async function verifies (signed: Record<string, unknown>, index: number, key: CryptoKey): Promise<boolean> {
  const entry = (signed.signatures as Array<{ protected: string; signature: string }>)[index]!
  try {
    await flattenedVerify({ payload: payloadOf(signed), protected: entry.protected, signature: entry.signature }, key)
    return true
  } catch {
    return false
  }
}

async function keyPair (alg: 'ES256' | 'RS256'): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
  return generateKeyPair(alg, { extractable: true })
}

describe('signed cards', () => {
  it('one JWS per key (ES256 and RS256), protected header {alg, kid, typ: JOSE}, detached, verifying over JCS(cleanEmpty(card))', async () => {
    const es = await keyPair('ES256')
    const rs = await keyPair('RS256')
    const s = await start({
      protocol: 'v1.0',
      profile: 'campaign-control',
      cardSigning: { keys: [{ privateKey: es.privateKey, kid: 'es-1', alg: 'ES256' }, { privateKey: rs.privateKey, kid: 'rs-1', alg: 'RS256' }] }
    })
    const signed = (await card(s)).json
    expect(signed.signatures).toHaveLength(2)
    for (const entry of signed.signatures) expect(Object.keys(entry).sort()).toEqual(['protected', 'signature'])
    expect(decodeProtectedHeader(signed.signatures[0])).toEqual({ alg: 'ES256', kid: 'es-1', typ: 'JOSE' })
    expect(decodeProtectedHeader(signed.signatures[1])).toEqual({ alg: 'RS256', kid: 'rs-1', typ: 'JOSE' })
    expect(await verifies(signed, 0, es.publicKey)).toBe(true)
    expect(await verifies(signed, 1, rs.publicKey)).toBe(true)
    // and not with the other key
    expect(await verifies(signed, 0, (await keyPair('ES256')).publicKey)).toBe(false)
  })

  it('@a2a-js/sdk verifyAgentCardSignature accepts the card (its v1.0-schema canonicalisation leaves it unchanged)', async () => {
    const es = await keyPair('ES256')
    const rs = await keyPair('RS256')
    const s = await start({ protocol: 'v1.0', profile: 'campaign-control', secret: 's3cret', cardSigning: { keys: [{ privateKey: rs.privateKey, kid: 'rs-1', alg: 'RS256' }] } })
    const keys: Record<string, CryptoKey> = { 'rs-1': rs.publicKey, 'es-1': es.publicKey }
    const verify = verifyAgentCardSignature(async (kid) => keys[kid]!)
    await expect(verify((await card(s)).json)).resolves.toBeUndefined()
    // a JWK private key works too
    s.setCardSigning({ keys: [{ privateKey: await exportJWK(es.privateKey), kid: 'es-1', alg: 'ES256' }] })
    await expect(verify((await card(s)).json)).resolves.toBeUndefined()
  })

  it('signs the transformed card; the after-signing hook tampers, and neither verifier accepts that', async () => {
    const es = await keyPair('ES256')
    const s = await start({ protocol: 'v1.0', card: (c) => ({ ...c, description: 'transformed before signing' }), cardSigning: { keys: [{ privateKey: es.privateKey, kid: 'es-1', alg: 'ES256' }] } })
    const signed = (await card(s)).json
    expect(signed.description).toBe('transformed before signing')
    expect(await verifies(signed, 0, es.publicKey)).toBe(true)

    s.setCardAfterSigning((c) => ({ ...c, name: 'Evil Twin' }))
    const tampered = (await card(s)).json
    expect(tampered.name).toBe('Evil Twin')
    expect(tampered.signatures).toEqual(signed.signatures)
    expect(await verifies(tampered, 0, es.publicKey)).toBe(false)
    vi.spyOn(console, 'debug').mockImplementation(() => undefined) // the SDK logs each failed entry
    await expect(verifyAgentCardSignature(async () => es.publicKey)(tampered)).rejects.toThrow(/No valid signatures/)
    vi.restoreAllMocks()
    s.reset()
    expect(await verifies((await card(s)).json, 0, es.publicKey)).toBe(true)
  })

  it('signs once per card body: the same (randomised ES256) signature until the card or the keys change; rotation at run time', async () => {
    const first = await keyPair('ES256')
    const second = await keyPair('ES256')
    const s = await start({ protocol: 'v1.0', cardSigning: { keys: [{ privateKey: first.privateKey, kid: 'k-1', alg: 'ES256' }] } })
    const a = (await card(s)).json
    const b = (await card(s)).json
    expect(b.signatures).toEqual(a.signatures)
    s.setCard((c) => ({ ...c, version: '2.0.0' }))
    const changed = (await card(s)).json
    expect(changed.signatures).not.toEqual(a.signatures)
    expect(await verifies(changed, 0, first.publicKey)).toBe(true)

    s.setCardSigning({ keys: [{ privateKey: second.privateKey, kid: 'k-2', alg: 'ES256' }] })
    const rotated = (await card(s)).json
    expect(decodeProtectedHeader(rotated.signatures[0]).kid).toBe('k-2')
    expect(await verifies(rotated, 0, second.publicKey)).toBe(true)
    expect(await verifies(rotated, 0, first.publicKey)).toBe(false)
    s.setCardSigning(undefined)
    expect((await card(s)).json).not.toHaveProperty('signatures')
  })

  it('on a dual server the v0.3 card carries the v1.0 card\'s signatures, as the SDK\'s compat card does', async () => {
    const es = await keyPair('ES256')
    const s = await start({ protocol: 'dual', cardSigning: { keys: [{ privateKey: es.privateKey, kid: 'es-1', alg: 'ES256' }] } })
    const current = (await card(s, V1)).json
    const legacy = (await card(s)).json
    expect(await verifies(current, 0, es.publicKey)).toBe(true)
    expect(legacy.protocolVersion).toBe('0.3')
    expect(legacy.signatures).toEqual(current.signatures)
  })

  it('a transform adding a field outside the v1.0 schema: signed as served, but the SDK drops the field before verifying', async () => {
    const es = await keyPair('ES256')
    const s = await start({ protocol: 'v1.0', card: (c) => ({ ...c, url: 'https://legacy.invalid/a2a/' }), cardSigning: { keys: [{ privateKey: es.privateKey, kid: 'es-1', alg: 'ES256' }] } })
    const signed = (await card(s)).json
    expect(await verifies(signed, 0, es.publicKey)).toBe(true)
    vi.spyOn(console, 'debug').mockImplementation(() => undefined)
    await expect(verifyAgentCardSignature(async () => es.publicKey)(signed)).rejects.toThrow(/No valid signatures/)
    vi.restoreAllMocks()
  })

  it('refuses signing options without keys, kid or alg', async () => {
    const es = await keyPair('ES256')
    await expect(start({ protocol: 'v1.0', cardSigning: { keys: [] } })).rejects.toThrow(/at least one key/)
    await expect(start({ protocol: 'v1.0', cardSigning: { keys: [{ privateKey: es.privateKey, kid: '', alg: 'ES256' }] } })).rejects.toThrow(/kid/)
  })
})
