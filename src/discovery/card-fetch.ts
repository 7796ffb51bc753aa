// One card path fetched (docs/design.md#discovery-and-capabilities, docs/design.md#card-caching):
// the v1.0 card asked for, If-None-Match sent for the card held, a 304 answered with the card held,
// 404/405 or an invalid card a reason to fall back to the next path, Cache-Control read within
// the configured bounds by the caller (src/discovery/card-refresh.ts).
import { createHash } from 'node:crypto'
import { AgentCardSchema, type AgentCard } from '../../schemas/card.js'
import type { GetResult } from '../upstream/client.js'
import { UpstreamCallError } from '../upstream/errors.js'
import type { DiscoveryState } from './discovery-state.js'

/** agent-card.json first, agent.json only on 404/405 or an invalid card */
export const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const

/** a card fetched, as adopted if it verifies */
export interface Fetched { card: AgentCard; raw: Record<string, unknown>; hash: string; path: string; etag: string | undefined; maxAgeMs: number | undefined }

export type Attempt =
  | Fetched
  | { fallback: true; why: string }
  | { error: string }

const header = (h: GetResult['headers'], name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

/** how long the answer says the card stays fresh: max-age less Age; no-cache/no-store: 0; absent: undefined */
export function freshnessMs (cacheControl: string | undefined, age: string | undefined): number | undefined {
  if (cacheControl === undefined) return undefined
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim())
  if (directives.some((d) => d === 'no-cache' || d === 'no-store')) return 0
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find((m) => m !== null)
  if (maxAge == null) return undefined
  const aged = Number(maxAge[1]) - (age !== undefined && /^\d+$/.test(age) ? Number(age) : 0)
  return Math.max(0, aged) * 1000
}

export async function tryPath (s: DiscoveryState, path: string): Promise<Attempt> {
  // A2A-Version asks a server that speaks both generations for its v1.0 card, whose
  // signatures are over the v1.0 form; a v0.x server ignores the header
  const headers: Record<string, string> = { 'a2a-version': '1.0' }
  const held = s.card !== undefined && s.raw !== undefined && s.cardPath === path
  if (held && s.etag !== undefined) headers['if-none-match'] = s.etag
  let res
  try {
    res = await s.o.client.get(path, { op: 'agent_card', maxBytes: s.o.cardMaxBytes, headers })
  } catch (err) {
    return { error: err instanceof UpstreamCallError ? err.kind : 'error' }
  }
  const maxAgeMs = freshnessMs(header(res.headers, 'cache-control'), header(res.headers, 'age'))
  if (res.status === 304) {
    // unchanged: the card held is still the card (and is checked again by the refresh, keys may have changed)
    if (!held) return { error: 'HTTP 304 without a card held' }
    return { card: s.card!, raw: s.raw!, hash: s.cardHash!, path, etag: header(res.headers, 'etag') ?? s.etag, maxAgeMs }
  }
  if (res.status === 404 || res.status === 405) return { fallback: true, why: `HTTP ${res.status}` }
  if (res.status < 200 || res.status >= 300) return { error: `HTTP ${res.status}` }
  let json: unknown
  try {
    json = JSON.parse(res.body.toString('utf8'))
  } catch {
    return { fallback: true, why: 'not JSON' }
  }
  const parsed = AgentCardSchema.safeParse(json)
  if (!parsed.success || Array.isArray(json)) return { fallback: true, why: 'not a valid card' }
  return { card: parsed.data, raw: json as Record<string, unknown>, hash: createHash('sha256').update(res.body).digest('hex'), path, etag: header(res.headers, 'etag'), maxAgeMs }
}
