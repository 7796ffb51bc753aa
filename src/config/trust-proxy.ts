// GATEWAY_TRUST_PROXY (docs/design.md#client-address): which hops may name the client in
// X-Forwarded-For, parsed, and the per-address connection bound that follows from it.
import { isIP } from 'node:net'
import type { TrustProxy } from './types.js'

/** proxy-addr's named ranges, which Fastify accepts in a trust list */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])
const MAX_HOPS = 32

function isAddressOrCidr (entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const slash = entry.indexOf('/')
  const addr = slash < 0 ? entry : entry.slice(0, slash)
  const v = isIP(addr)
  if (v === 0) return false
  if (slash < 0) return true
  const bits = entry.slice(slash + 1)
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128)
}

/** GATEWAY_TRUST_PROXY: `false`/`0`, `true`, a hop count (1–32), or a comma-separated list of addresses and CIDRs */
export function parseTrustProxy (raw: string): TrustProxy | undefined {
  const v = raw.trim()
  if (v === 'false' || v === '0') return false
  if (v === 'true') return true
  if (/^\d+$/.test(v)) {
    const n = Number(v)
    return n >= 1 && n <= MAX_HOPS ? n : undefined
  }
  const list = v.split(',').map((x) => x.trim())
  return list.length > 0 && list.every(isAddressOrCidr) ? list : undefined
}

/** the per-address bound when none is set: a sixteenth of the cap, or no bound behind a trusted ingress */
export function defaultPerAddress (maxConnections: number, trustProxy: TrustProxy): number {
  return trustProxy === false ? Math.ceil(maxConnections / 16) : 0
}

/** the setting, or undefined and its problem; a setting that trusts hops whoever connects is warned about */
export function trustProxySetting (raw: string, problems: string[], warnings: string[]): TrustProxy | undefined {
  const trustProxy = parseTrustProxy(raw)
  if (trustProxy === undefined) {
    problems.push(`GATEWAY_TRUST_PROXY: must be false, true, a hop count (1–${MAX_HOPS}) or a comma-separated list of addresses or CIDRs (e.g. 10.0.0.0/8,fd00::/8)`)
  } else if (trustProxy === true) {
    warnings.push('GATEWAY_TRUST_PROXY=true trusts every X-Forwarded-For entry, the ones a client wrote included: safe only behind an ingress that overwrites the header; behind one that appends, give the ingress\'s addresses or its hop count (1)')
  } else if (typeof trustProxy === 'number') {
    warnings.push(`GATEWAY_TRUST_PROXY=${trustProxy} trusts the last ${trustProxy} hop(s) whoever connects: a client that reaches the gateway directly, past the ingress, chooses its own address; safe only if nothing but the ingress reaches PORT, else give the ingress's addresses`)
  }
  return trustProxy
}
