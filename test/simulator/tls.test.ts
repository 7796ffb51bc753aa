import { readFileSync } from 'node:fs'
import { Agent } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import type { Simulator } from '../../src/simulator/index.js'
import { argusParams, call } from './helpers.js'

const tlsFile = (name: string): string => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), 'utf8')

let sim: Simulator | undefined
let agent: Agent | undefined
afterEach(async () => {
  await sim?.close()
  await agent?.close()
  sim = undefined
  agent = undefined
})

describe('HTTPS', () => {
  it('serves the card and the JSON-RPC endpoint over TLS with the test certificate', async () => {
    sim = await startSimulator({ secret: 'tls-secret', tls: { key: tlsFile('trusted-server.key'), cert: tlsFile('trusted-server.pem') } })
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    agent = new Agent({ connect: { ca: tlsFile('trusted-ca.pem') } })
    const card = await call(sim, 'GET', '/a2a/.well-known/agent-card.json', { dispatcher: agent })
    expect(card.json.url).toBe(`${sim.url}/a2a/`)
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'tls-1', method: 'message/send', params: argusParams('supervisor.health', 'tls-1') })
    const sent = await call(sim, 'POST', '/a2a/', { body, headers: { 'content-type': 'application/json', authorization: 'Bearer tls-secret' }, dispatcher: agent })
    expect(sent.json.result.status.state).toBe('completed')
  })

  it('is refused by a client that does not trust the issuer', async () => {
    sim = await startSimulator({ tls: { key: tlsFile('trusted-server.key'), cert: tlsFile('trusted-server.pem') } })
    agent = new Agent({ connect: { ca: tlsFile('unknown-ca.pem') } })
    await expect(call(sim, 'GET', '/health', { dispatcher: agent })).rejects.toThrow()
    expect(sim.received).toHaveLength(0)
  })
})
