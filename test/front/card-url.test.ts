// The URL the front door's card names (docs/design.md#front-door, CONTRACT §14 "The card's URL
// is the operator's"): GATEWAY_PUBLIC_URL when set, whatever a request says; else the request's
// own scheme and Host — the forwarded ones only under GATEWAY_TRUST_PROXY, and of those only an
// http or https scheme and a host name, never `evil.example/a2a`, a space, a userinfo or
// `javascript`; a card built from request headers varies on each of them. In production without
// GATEWAY_PUBLIC_URL the start warns, naming it. Behind the reference nginx
// (docker/nginx/gateway.conf) a client's own X-Forwarded-Host never reaches the card; skipped,
// saying so, without nginx.
import { afterEach, describe, expect } from 'vitest'
import { loadConfig } from '../../src/config/index.js'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'
import { startIngress } from '../helpers/ingress.js'
import { NGINX_SKIP, nginxAvailable } from '../helpers/nginx.js'

const NGINX = nginxAvailable()
if (!NGINX) console.warn(`SKIP the card's URL behind the reference nginx: ${NGINX_SKIP}`)

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const f of cleanups.splice(0).reverse()) await f() })

const cardAt = async (base: string, headers: Record<string, string>, version?: '1.0') =>
  await call(`${base}/a2a/.well-known/agent-card.json`, { headers: { ...headers, ...(version !== undefined ? { 'a2a-version': version } : {}) } })
const urlsOf = (card: { url?: string; supportedInterfaces: Array<{ url: string }> }): string[] => [...(card.url !== undefined ? [card.url] : []), ...card.supportedInterfaces.map((i) => i.url)]

const BAD_HOSTS = ['evil.example/a2a', 'evil example', 'user@evil.example', 'javascript:alert(1)', 'evil.example:99999', 'evil.example:', 'good.example, evil.example/a2a', '']
const BAD_PROTOS = ['javascript', 'ftp', 'http://evil.example', 'https:', 'https, javascript']

describe('the card\'s URL', () => {
  it('without a trusted proxy: the request\'s own scheme and Host, forwarded headers ignored; Vary names Host', async ({ gw }) => {
    for (const version of [undefined, '1.0'] as const) {
      const res = await cardAt(gw.url, { host: 'gw.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }, version)
      expect(res.status).toBe(200)
      for (const u of urlsOf(res.body)) expect(u).toBe('http://gw.example:8443/a2a/')
      expect(res.headers.vary).toBe('A2A-Version, Host')
    }
  })

  it('under GATEWAY_TRUST_PROXY: a forwarded http(s) scheme and host name are taken, anything else falls back to the request\'s own; Vary names all three', async ({ startPair }) => {
    const { gw } = await startPair({ env: { GATEWAY_TRUST_PROXY: '1' } })
    const good = await cardAt(gw.url, { host: 'inner.example', 'x-forwarded-host': 'public.example:8443', 'x-forwarded-proto': 'HTTPS' })
    for (const u of urlsOf(good.body)) expect(u).toBe('https://public.example:8443/a2a/')
    expect(good.headers.vary).toBe('A2A-Version, Host, X-Forwarded-Host, X-Forwarded-Proto')
    for (const h of BAD_HOSTS) {
      const res = await cardAt(gw.url, { host: 'inner.example', 'x-forwarded-host': h, 'x-forwarded-proto': 'https' }, '1.0')
      expect(res.status, h).toBe(200)
      expect(urlsOf(res.body), h).toEqual(['https://inner.example/a2a/', 'https://inner.example/a2a/'])
      expect(res.text, h).not.toContain('evil')
    }
    for (const p of BAD_PROTOS) {
      const res = await cardAt(gw.url, { host: 'inner.example', 'x-forwarded-proto': p })
      expect(res.status, p).toBe(200)
      for (const u of urlsOf(res.body)) expect(u, p).toBe('http://inner.example/a2a/')
      expect(res.text, p).not.toMatch(/javascript|ftp:|evil/)
    }
  })

  it('GATEWAY_PUBLIC_URL is named whatever the request says, and the answer varies on A2A-Version alone', async ({ startPair }) => {
    const { gw } = await startPair({ env: { GATEWAY_TRUST_PROXY: '1', GATEWAY_PUBLIC_URL: 'https://gateway.example/base/' } })
    for (const version of [undefined, '1.0'] as const) {
      const res = await cardAt(gw.url, { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }, version)
      for (const u of urlsOf(res.body)) expect(u).toBe('https://gateway.example/base/a2a/')
      expect(res.headers.vary).toBe('A2A-Version')
    }
  })

  it('in production, a start without GATEWAY_PUBLIC_URL warns, naming the variable; with it, nothing is said', () => {
    const prod = { NODE_ENV: 'production', OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 'a-random-upstream-secret-0123456789', GATEWAY_LEDGER_URL: 'sqlite:/tmp/x.db', GATEWAY_CALLERS: JSON.stringify([{ name: 'r', tokenSha256: 'a'.repeat(64), scopes: ['read'] }]) }
    expect(loadConfig(prod).warnings).toContainEqual(expect.stringMatching(/^GATEWAY_PUBLIC_URL is unset: the A2A card/))
    expect(loadConfig({ ...prod, GATEWAY_PUBLIC_URL: 'https://gw.example' }).warnings.join('\n')).not.toContain('GATEWAY_PUBLIC_URL')
    // outside production the request's own URL is the documented development default
    expect(loadConfig({ OPENOPERATOR_URL: 'https://oo.example' }).warnings.join('\n')).not.toContain('GATEWAY_PUBLIC_URL')
  })

  it.skipIf(!NGINX)('behind the reference nginx under GATEWAY_TRUST_PROXY=1: the Host the client reached nginx by, never the X-Forwarded-Host it wrote', async ({ startPair }) => {
    const { gw } = await startPair({ env: { GATEWAY_TRUST_PROXY: '1' } })
    const replica = gw.url.slice('http://'.length)
    const ingress = await startIngress([replica, replica])
    cleanups.push(ingress.close)
    for (const version of [undefined, '1.0'] as const) {
      const res = await cardAt(ingress.url, { host: 'gw.example:8080', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'javascript' }, version)
      expect(res.status).toBe(200)
      for (const u of urlsOf(res.body)) expect(u).toBe('http://gw.example:8080/a2a/')
      expect(res.text).not.toMatch(/evil|javascript/)
    }
  })
})
