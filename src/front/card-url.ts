// The URL an unsigned card names when GATEWAY_PUBLIC_URL is unset (docs/design.md#front-door):
// the one the request reached the gateway by. Behind a trusted proxy (GATEWAY_TRUST_PROXY) that
// is what X-Forwarded-Proto and X-Forwarded-Host say, else the socket's scheme and the Host
// header — but only a scheme of http or https and a host name (`name[:port]`, `[v6][:port]`) are
// ever taken from them: a forwarded `javascript`, `evil.example/a2a`, a space or a userinfo falls
// back to the request's own. The card then depends on those headers, so its answer varies on them.

/** a DNS name or IPv4 address (labels of letters, digits and inner hyphens), or a bracketed IPv6 one; a port of 1–65535 */
const HOST_NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/

export function isHostName (h: string): boolean {
  if (h.length > 261) return false
  const m = HOST_NAME.exec(h)
  return m !== null && (m[1] === undefined || (Number(m[1]) >= 1 && Number(m[1]) <= 65535))
}

export interface RequestAddress {
  /** Fastify's `request.protocol` and `request.host`: the forwarded ones only from a trusted hop */
  protocol: string
  host: string
  /** the request's own Host header and whether its socket is TLS */
  hostHeader: string | undefined
  encrypted: boolean
  /** GATEWAY_TRUST_PROXY is set: the forwarded headers may decide the answer */
  trustProxy: boolean
}

/** the origin the card names and the headers it depends on; undefined when not even the Host header is a host name */
export function requestOrigin (r: RequestAddress): { origin: string; vary: string[] } | undefined {
  const own = r.encrypted ? 'https' : 'http'
  const proto = r.protocol.toLowerCase()
  const scheme = proto === 'http' || proto === 'https' ? proto : own
  const host = isHostName(r.host) ? r.host : r.hostHeader !== undefined && isHostName(r.hostHeader) ? r.hostHeader : undefined
  if (host === undefined) return undefined
  return { origin: `${scheme}://${host}`, vary: r.trustProxy ? ['Host', 'X-Forwarded-Host', 'X-Forwarded-Proto'] : ['Host'] }
}
