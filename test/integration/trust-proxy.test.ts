// GATEWAY_TRUST_PROXY behind a real nginx that appends the client's address to X-Forwarded-For
// (`proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`), docs/design.md#rate-limits.
// With a hop count of 1 or the ingress's address, the failed-login limit counts the address
// nginx saw: 300 guesses from one client, each with a different leftmost X-Forwarded-For it
// wrote itself, are 30 401s and then 429s; and a client that writes another's address there
// locks out only itself. `true` trusts what the client wrote — which is why it warns at start.
// Each client is a loopback address of its own. Skipped, saying so, without nginx.
import { randomInt } from 'node:crypto'
import { Agent, request } from 'undici'
import { afterEach, describe, expect } from 'vitest'
import { it, type Fixtures } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { NGINX_SKIP, nginxAvailable, startNginx } from '../helpers/nginx.js'

const NGINX = nginxAvailable()
if (!NGINX) console.warn(`SKIP trust-proxy behind nginx: ${NGINX_SKIP}`)

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const f of cleanups.splice(0).reverse()) await f() })

const BAD = 'tok-not-a-configured-token'
const ATTACKER = '127.0.0.3'
const VICTIM = '127.0.0.2'
const LIMIT = 30

interface Front { g: TestGateway; from: (address: string, token: string, xff?: string) => Promise<number> }

async function behindNginx (startPair: Fixtures['startPair'], trustProxy: string): Promise<Front> {
  // the default budget: 30 failed logins per address per minute
  const { gw: g } = await startPair({ env: { GATEWAY_TRUST_PROXY: trustProxy } })
  const nginx = await startNginx(g.url, 'proxy_set_header Host $host;\n      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;')
  cleanups.push(nginx.close)
  const agents = new Map<string, Agent>()
  cleanups.push(async () => { for (const a of agents.values()) await a.close() })
  const from = async (address: string, token: string, xff?: string): Promise<number> => {
    let agent = agents.get(address)
    if (agent === undefined) {
      agent = new Agent({ localAddress: address })
      agents.set(address, agent)
    }
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (xff !== undefined) headers['x-forwarded-for'] = xff
    const res = await request(`${nginx.url}/v1/upstream`, { dispatcher: agent, headers })
    await res.body.text()
    return res.statusCode
  }
  return { g, from }
}

const spoofed = (): string => `198.51.100.${randomInt(1, 255)}, 203.0.113.${randomInt(1, 255)}`
const tally = (statuses: number[]): string => [...new Set(statuses)].map((s) => `${statuses.filter((x) => x === s).length}×${s}`).join(' ')

describe.skipIf(!NGINX)('behind nginx appending to X-Forwarded-For', () => {
  for (const [name, value] of [['a hop count of 1', '1'], ["the ingress's address", '127.0.0.1']] as const) {
    it(`${name}: a spoofed leftmost entry does not escape the failed-login limit, nor lock out another address`, async ({ startPair }) => {
      const { g, from } = await behindNginx(startPair, value)
      const guesses: number[] = []
      for (let i = 0; i < 300; i++) guesses.push(await from(ATTACKER, BAD, spoofed()))
      // the victim's address written by the attacker counts against the attacker alone
      const framing: number[] = []
      for (let i = 0; i < 40; i++) framing.push(await from('127.0.0.4', BAD, VICTIM))
      const victim = await from(VICTIM, g.tokens.reader)
      console.log(`trust proxy ${value}: 300 guesses with a spoofed leftmost X-Forwarded-For → ${tally(guesses)}; 40 guesses naming the victim → ${tally(framing)}; the victim with its token → ${victim}`)
      expect(guesses.slice(0, LIMIT).every((s) => s === 401)).toBe(true)
      expect(guesses.slice(LIMIT).every((s) => s === 429)).toBe(true)
      expect(framing.slice(LIMIT).every((s) => s === 429)).toBe(true)
      expect(victim).toBe(200)
      expect(g.logs.some((l) => l.includes('GATEWAY_TRUST_PROXY=true'))).toBe(false)
      // a count cannot tell the ingress from a client that connects directly: the start says so
      expect(g.logs.some((l) => l.includes('trusts the last 1 hop(s) whoever connects'))).toBe(value === '1')
    })
  }

  it('true trusts what the client wrote: guesses escape the limit and the victim is locked out (hence the warning at start)', async ({ startPair }) => {
    const { g, from } = await behindNginx(startPair, 'true')
    const guesses: number[] = []
    for (let i = 0; i < 100; i++) guesses.push(await from(ATTACKER, BAD, spoofed()))
    for (let i = 0; i < 40; i++) await from(ATTACKER, BAD, VICTIM)
    const victim = await from(VICTIM, g.tokens.reader)
    console.log(`trust proxy true: 100 guesses with a spoofed leftmost X-Forwarded-For → ${tally(guesses)}; after 40 naming the victim, the victim with its token → ${victim}`)
    expect(guesses.filter((s) => s === 401).length).toBeGreaterThan(LIMIT)
    expect(victim).toBe(429)
    expect(g.logs.some((l) => l.includes('GATEWAY_TRUST_PROXY=true trusts every X-Forwarded-For entry'))).toBe(true)
  })
})
