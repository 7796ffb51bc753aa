// The per-address connection bound keeps an address only while it has a socket open
// (docs/design.md#bounded-maps): after many addresses came and went it holds none, and an address
// forgotten is bounded again from zero. Real sockets from loopback addresses of their own
// (127.0.0.0/8 is all loopback on Linux).
import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { guardConnections } from '../../src/http/edges.js'
import { createMetrics } from '../../src/http/metrics.js'

const servers: Server[] = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve))
})

/** a socket from `from` that the server kept (true) or destroyed on arrival (false) */
async function open (port: number, from: string): Promise<boolean> {
  const s = connect({ port, host: '127.0.0.1', localAddress: from })
  sockets.push(s)
  s.on('error', () => {})
  await new Promise((resolve) => s.once('connect', resolve))
  // a socket destroyed on arrival closes at once; a kept one answers a request
  s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n')
  return await new Promise<boolean>((resolve) => {
    s.once('data', () => { resolve(true) })
    s.once('close', () => { resolve(false) })
  })
}

async function closeAll (): Promise<void> {
  await Promise.all(sockets.splice(0).map(async (s) => await new Promise((resolve) => { if (s.closed) resolve(undefined); else { s.once('close', resolve); s.destroy() } })))
}

describe('the per-address connection bound', () => {
  it('forgets an address once its last socket closes, and bounds it again from zero', async () => {
    const server = createServer((_req, res) => { res.end('ok') })
    servers.push(server)
    const metrics = createMetrics()
    const guard = guardConnections(server, { listener: 'api', maxConnections: 1000, perAddress: 2 }, metrics, pino({ level: 'silent' }))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port

    const addresses = Array.from({ length: 40 }, (_, i) => `127.0.${1 + (i >> 8)}.${1 + (i & 255)}`)
    for (const a of addresses) expect(await open(port, a)).toBe(true)
    expect(guard.addresses()).toBe(40)
    expect(await open(port, addresses[0]!)).toBe(true)
    expect(await open(port, addresses[0]!)).toBe(false)
    await closeAll()
    // the server sees each close a moment after the client
    for (let i = 0; i < 200 && guard.addresses() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(guard.addresses()).toBe(0)
    // forgotten, bounded again: two sockets, not a third
    expect([await open(port, addresses[0]!), await open(port, addresses[0]!), await open(port, addresses[0]!)]).toEqual([true, true, false])
    expect(guard.addresses()).toBe(1)
  })
})
