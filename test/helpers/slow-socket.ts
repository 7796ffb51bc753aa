// A slow client on a raw socket (docs/design.md#http-edges): headers then one byte of a
// 60,000-byte body, or the headers a byte at a time, optionally from a loopback address of its
// own (127.0.0.0/8 is all loopback on Linux), so tests can play several client addresses. Also
// the dropped-connection counter, read from /metrics.
import { connect, type Socket } from 'node:net'
import type { TestGateway } from './gateway.js'
import { call } from './http.js'
import { endpoint } from './raw-http.js'

export interface Slow { socket: Socket; openedAt: () => number; connected: Promise<void>; closedAt: Promise<number>; closed: () => boolean; answer: () => string; stop: () => void }

export function openSlow (url: string, kind: 'body' | 'headers', token: string, localAddress?: string): Slow {
  const { host, port } = endpoint(url)
  const socket = connect({ port, host, localAddress })
  // from the moment it is connected (a SYN the kernel dropped is retried a second later)
  let openedAt = Date.now()
  socket.on('connect', () => { openedAt = Date.now() })
  let got = ''
  let trickle: NodeJS.Timeout | undefined
  socket.on('data', (d: Buffer) => { got += d.toString('latin1') })
  socket.on('error', () => {})
  let isClosed = false
  const closedAt = new Promise<number>((resolve) => socket.on('close', () => { isClosed = true; clearInterval(trickle); resolve(Date.now()) }))
  // a socket the server dropped at once counts as connected too
  const connected = new Promise<void>((resolve) => { socket.on('connect', resolve); socket.on('close', () => resolve()) })
  const head = `POST /v1/upstream/refresh HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`
  if (kind === 'body') {
    socket.write(`${head}{`)
  } else {
    // headers a byte at a time, never finished within the bound
    let i = 0
    socket.write(head[i++]!)
    trickle = setInterval(() => { if (i < head.length - 2 && !socket.destroyed) socket.write(head[i++]!) }, 300)
  }
  return { socket, openedAt: () => openedAt, connected, closedAt, closed: () => isClosed, answer: () => got, stop: () => { clearInterval(trickle); socket.destroy() } }
}

/** gateway_http_connections_dropped_total for one listener and reason */
export async function dropped (g: TestGateway, listener: string, reason: string): Promise<number> {
  const text = (await call(`${g.metricsUrl}/metrics`)).text
  return Number(new RegExp(`^gateway_http_connections_dropped_total\\{listener="${listener}",reason="${reason}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
}

export const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
export const ms = (x: number): string => `${x.toFixed(1)} ms`
