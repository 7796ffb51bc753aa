// Signed agent cards (A2A v1.0 §8.4), made as @a2a-js/sdk's generateAgentCardSignature makes
// them: one flattened JWS per key, protected header {alg, kid, typ: "JOSE"}, detached payload
// (the card is not repeated), over RFC 8785 JCS of the card without `signatures` after the
// SDK's cleanEmpty (members that are null, "", [] or {} dropped, recursively). Signatures are
// kept per card version and reused while the card body and the keys stay the same.
import canonicalize from 'canonicalize'
import { FlattenedSign } from 'jose'
import type { CardSigningKey, CardSigningOptions } from '../types.js'

export interface CardSignature {
  protected: string
  signature: string
}

interface Signed {
  unsigned: string
  signatures: Promise<CardSignature[]>
}

export class CardSigner {
  private keys: CardSigningKey[] = []
  private readonly signed = new Map<string, Signed>()

  constructor (signing?: CardSigningOptions) {
    this.set(signing)
  }

  /** New keys (none: cards go out unsigned); what the old ones signed is forgotten. */
  set (signing: CardSigningOptions | undefined): void {
    const keys = signing?.keys ?? []
    if (signing !== undefined && keys.length === 0) throw new TypeError('cardSigning needs at least one key')
    for (const key of keys) {
      if (typeof key.kid !== 'string' || key.kid === '') throw new TypeError('a card signing key needs a kid')
      if (typeof key.alg !== 'string' || key.alg === '') throw new TypeError('a card signing key needs an alg')
    }
    this.keys = keys.map((k) => ({ ...k }))
    this.signed.clear()
  }

  get enabled (): boolean {
    return this.keys.length > 0
  }

  /**
   * The card as served: its own `signatures` (a transform may plant some) followed by one per
   * key, or the card untouched when there are no keys. `slot` names the version's card.
   */
  async sign (slot: string, card: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.keys.length === 0) return card
    const unsigned = JSON.stringify(card)
    let entry = this.signed.get(slot)
    if (entry === undefined || entry.unsigned !== unsigned) {
      const fresh: Signed = { unsigned, signatures: signAll(this.keys, canonicalPayload(card)) }
      this.signed.set(slot, fresh)
      // A key that cannot sign is the caller's mistake; the next request tries again.
      fresh.signatures.catch(() => {
        if (this.signed.get(slot) === fresh) this.signed.delete(slot)
      })
      entry = fresh
    }
    const planted = Array.isArray(card.signatures) ? card.signatures : []
    return { ...card, signatures: [...planted, ...(await entry.signatures)] }
  }
}

/** JCS of the card without `signatures`, after cleanEmpty: the bytes every signature covers. */
export function canonicalPayload (card: Record<string, unknown>): string {
  const { signatures: _signatures, ...rest } = card
  const cleaned = cleanEmpty(rest)
  return cleaned === null ? '{}' : (canonicalize(cleaned) ?? '{}')
}

/** The SDK's cleanEmpty: null, undefined, "", and lists or objects left empty become null (dropped). */
export function cleanEmpty (value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return null
  if (Array.isArray(value)) {
    const kept = value.map((v) => cleanEmpty(v)).filter((v) => v !== null)
    return kept.length > 0 ? kept : null
  }
  if (typeof value === 'object') {
    const kept: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) {
      const cleaned = cleanEmpty(v)
      if (cleaned !== null) kept[key] = cleaned
    }
    return Object.keys(kept).length > 0 ? kept : null
  }
  return value
}

async function signAll (keys: CardSigningKey[], payload: string): Promise<CardSignature[]> {
  const bytes = new TextEncoder().encode(payload)
  return Promise.all(
    keys.map(async (key) => {
      const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JOSE' }).sign(key.privateKey)
      return { protected: jws.protected ?? '', signature: jws.signature }
    })
  )
}
