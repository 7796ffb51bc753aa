// The rules for OPENOPERATOR_URL (docs/design.md#configuration), in one place for the gateway's
// configuration and the qualification command alike: no userinfo, query or fragment; https,
// unless the host is loopback outside production. Pure: no environment, no I/O.
import { isIP } from 'node:net'

export function isLoopbackHost (hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h === '::1') return true
  return isIP(h) === 4 && h.startsWith('127.')
}

/** origin and the URL's path without a trailing slash ('' at the root), or the problem */
export function parseOpenOperatorUrl (raw: string, production: boolean): { origin: string; path: string; plainHttp: boolean } | string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'OPENOPERATOR_URL is not a valid URL'
  }
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/]*@/i.test(raw)) return 'OPENOPERATOR_URL must not contain userinfo'
  if (url.search !== '' || raw.includes('?')) return 'OPENOPERATOR_URL must not contain a query'
  if (url.hash !== '' || raw.includes('#')) return 'OPENOPERATOR_URL must not contain a fragment'
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'OPENOPERATOR_URL must be https://'
  const plainHttp = url.protocol === 'http:'
  if (plainHttp && (production || !isLoopbackHost(url.hostname))) {
    return 'OPENOPERATOR_URL must be https:// (plain http is allowed only for a loopback host outside production)'
  }
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, ''), plainHttp }
}
