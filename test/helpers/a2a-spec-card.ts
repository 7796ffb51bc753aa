// A signed agent card checked the way A2A v1.0 §8.4 describes, written from the specification and
// the proto alone, never with the gateway's code: the card's canonical form by §8.4.1 (its
// ProtoJSON form — members a2a.proto does not define left out, a field holding its default
// omitted unless REQUIRED or `optional` — then RFC 8785), with the field presence read from the
// proto's own text (test/fixtures/a2a/agent-card.proto), and each signature checked as a compact
// JWS over those bytes with jose's compactVerify.
import { readFileSync } from 'node:fs'
import canonicalize from 'canonicalize'
import { base64url, compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose'

interface ProtoField { json: string; type: string; repeated: boolean; map: boolean; kept: boolean }

/** lowerCamelCase as protoc derives a JSON name from a field name */
const jsonName = (field: string): string => field.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())

/** message name → its fields, from the proto text: `kept` when REQUIRED, `optional` or in a oneof (presence) */
export function readProto (text: string): Map<string, ProtoField[]> {
  const messages = new Map<string, ProtoField[]>()
  for (const m of text.matchAll(/^message (\w+) \{([\s\S]*?)^\}/gm)) {
    const fields: ProtoField[] = []
    let inOneof = false
    for (const line of m[2]!.split('\n')) {
      if (/^\s*oneof \w+ \{/.test(line)) { inOneof = true; continue }
      if (inOneof && /^\s*\}/.test(line)) { inOneof = false; continue }
      const f = /^\s*(optional |repeated )?(map<\s*\w+\s*,\s*([\w.]+)\s*>|[\w.]+)\s+(\w+)\s*=\s*\d+/.exec(line)
      if (f === null) continue
      const map = f[3] !== undefined
      fields.push({
        json: jsonName(f[4]!),
        type: map ? f[3]! : f[2]!,
        repeated: f[1] === 'repeated ',
        map,
        kept: inOneof || f[1] === 'optional ' || line.includes('field_behavior) = REQUIRED')
      })
    }
    messages.set(m[1]!, fields)
  }
  return messages
}

const PROTO = readProto(readFileSync(new URL('../fixtures/a2a/agent-card.proto', import.meta.url), 'utf8'))

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isDefault = (v: unknown): boolean => v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0)

/** a value of a proto type in ProtoJSON form, §8.4.1's presence rules applied */
function protoJson (v: unknown, type: string): unknown {
  const fields = PROTO.get(type)
  if (fields === undefined || !isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    const raw = v[f.json]
    if (raw === undefined || raw === null) continue
    const value = f.map && isObject(raw)
      ? Object.fromEntries(Object.entries(raw).map(([k, x]) => [k, protoJson(x, f.type)]))
      : f.repeated && Array.isArray(raw) ? raw.map((x) => protoJson(x, f.type)) : protoJson(raw, f.type)
    if (f.kept || !isDefault(value)) out[f.json] = value
  }
  return out
}

/** §8.4.1: the card without `signatures`, in ProtoJSON form, as RFC 8785 writes it */
export function specCanonicalCard (card: Record<string, unknown>): string {
  const { signatures: _s, ...rest } = card
  return canonicalize(protoJson(rest, 'AgentCard'))!
}

/** the signatures (§8.4.2) that verify over the §8.4.1 bytes with the published key; each header checked */
export async function specVerifiedSignatures (card: Record<string, unknown>, publicJwk: JWK): Promise<number> {
  const payload = base64url.encode(specCanonicalCard(card))
  const key = await importJWK(publicJwk, String(publicJwk.alg))
  let verified = 0
  for (const sig of (card.signatures ?? []) as Array<{ protected: string; signature: string }>) {
    const header = decodeProtectedHeader(sig)
    // §8.4.2: the protected header MUST include alg and kid; typ SHOULD be JOSE (the gateway's is)
    if (typeof header.alg !== 'string' || typeof header.kid !== 'string' || header.typ !== 'JOSE') throw new Error(`signature header lacks alg, kid or typ JOSE: ${JSON.stringify(header)}`)
    try {
      await compactVerify(`${sig.protected}.${payload}.${sig.signature}`, key)
      verified++
    } catch { /* another form's signature, or not this card */ }
  }
  return verified
}
