// The card's refresh (docs/design.md#card-caching), the keys a signed card is checked against
// (docs/design.md#signed-cards), and the front door's own card: its signing key and the public URL
// it names (docs/design.md#front-door).
import { frontCardConfig } from './signing-key.js'
import type { ParsedEnv } from './env.js'
import { jwksFile } from './jwks-file.js'
import type { Config } from './types.js'

const DEFAULT_MIN_DISCOVERY_INTERVAL_MS = 5000

export function discoverySettings (e: ParsedEnv, fine: (...names: string[]) => boolean, problems: string[], warnings: string[], read: (p: string) => string): Pick<Config, 'discoveryIntervalMs' | 'discoveryMinIntervalMs' | 'cardJwks' | 'frontCard'> {
  if (fine('GATEWAY_DISCOVERY_MIN_INTERVAL_MS', 'GATEWAY_DISCOVERY_INTERVAL_MS') && e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS !== undefined && e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS > e.GATEWAY_DISCOVERY_INTERVAL_MS) problems.push('GATEWAY_DISCOVERY_MIN_INTERVAL_MS: must not exceed GATEWAY_DISCOVERY_INTERVAL_MS (the two bound the refresh period a card\'s Cache-Control may ask for)')
  const frontCard = frontCardConfig(e.GATEWAY_CARD_SIGNING_KEY, e.GATEWAY_PUBLIC_URL, e.NODE_ENV === 'production', problems, warnings)
  let cardJwks: Config['cardJwks']
  if (e.GATEWAY_CARD_JWKS_FILE !== undefined) {
    const jwks = jwksFile('GATEWAY_CARD_JWKS_FILE', e.GATEWAY_CARD_JWKS_FILE, read, problems)
    if (jwks !== undefined) cardJwks = { path: e.GATEWAY_CARD_JWKS_FILE, jwks }
  }
  return {
    discoveryIntervalMs: e.GATEWAY_DISCOVERY_INTERVAL_MS,
    discoveryMinIntervalMs: Math.min(e.GATEWAY_DISCOVERY_MIN_INTERVAL_MS ?? DEFAULT_MIN_DISCOVERY_INTERVAL_MS, e.GATEWAY_DISCOVERY_INTERVAL_MS),
    cardJwks,
    frontCard
  }
}
