// How an injected fault is written to the wire. The misbehaving ones (drop, oversized
// bodies without or with a content-length) take the raw response from Fastify with
// reply.hijack(), because they must break HTTP rules Fastify would otherwise enforce.
import { STATUS_CODES } from 'node:http'
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RequestFault } from '../books/fault-book.js'
import type { SimulatorState } from '../state.js'

/** Faults answered instead of the normal reply (delay and wrong-id only modify it; hold postpones it). */
export type TerminalFault = Exclude<RequestFault, { kind: 'delay' | 'wrong-id' | 'hold' }>

const CHUNK = 'x'.repeat(64 * 1024)

/** Waits out an injected delay; false when the simulator closed meanwhile (the socket is then gone). */
export async function pause (state: SimulatorState, request: FastifyRequest, reply: FastifyReply, ms: number): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal: state.closing.signal })
    return true
  } catch {
    dropConnection(request, reply)
    return false
  }
}

export function dropConnection (request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack()
  request.raw.socket.destroy()
}

/**
 * Writes a terminal fault. `base` is the body the route would have sent (an oversized
 * answer pads it, so it stays a plausible, valid document); `rpcId` is the JSON-RPC id.
 */
export async function sendFault (request: FastifyRequest, reply: FastifyReply, fault: TerminalFault, base: Record<string, unknown>, rpcId: unknown = null): Promise<void> {
  switch (fault.kind) {
    case 'drop':
      dropConnection(request, reply)
      return
    case 'status':
      await reply
        .code(fault.status)
        .type(fault.contentType ?? 'text/plain; charset=utf-8')
        .send(fault.body ?? STATUS_CODES[fault.status] ?? 'Error')
      return
    case 'redirect':
      await reply.code(fault.status ?? 302).header('location', fault.location).send()
      return
    case 'invalid-json':
      // Truncated mid-document: looks like JSON to anything that only checks the first byte.
      await reply.code(200).type('application/json').send('{"jsonrpc":"2.0","result":{"kind":"task","id":')
      return
    case 'rpc-error': {
      const error = fault.data === undefined ? { code: fault.code, message: fault.message } : { code: fault.code, message: fault.message, data: fault.data }
      await reply.code(200).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: rpcId, error }))
      return
    }
    case 'result':
      // a planted answer under the caller's own id: nothing is applied
      await reply.code(200).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: rpcId, result: fault.result }))
      return
    case 'raw-result':
      await reply.code(200).type('application/json').send(`{"jsonrpc":"2.0","id":${JSON.stringify(rpcId)},"result":${fault.json}}`)
      return
    case 'oversized':
      reply.hijack()
      await writeOversized(reply.raw, base, fault.bytes, fault.mode)
  }
}

/** `{"padding":"xxx…", …base}`, about `bytes` long, streamed with backpressure. */
async function writeOversized (res: ServerResponse, base: Record<string, unknown>, bytes: number, mode: 'chunked' | 'content-length'): Promise<void> {
  res.on('error', () => undefined) // the client is expected to hang up mid-body
  const rest = JSON.stringify(base).slice(1)
  const prefix = '{"padding":"'
  const suffix = rest === '}' ? '"}' : `",${rest}`
  const padding = Math.max(0, bytes - Buffer.byteLength(prefix) - Buffer.byteLength(suffix))
  const headers: Record<string, string | number> = { 'content-type': 'application/json' }
  if (mode === 'content-length') headers['content-length'] = Buffer.byteLength(prefix) + padding + Buffer.byteLength(suffix)
  res.writeHead(200, headers)
  let left = padding
  let ok = res.write(prefix)
  while (left > 0 && !res.destroyed) {
    if (!ok) await drainOrClose(res)
    if (res.destroyed) return
    const piece = left >= CHUNK.length ? CHUNK : CHUNK.slice(0, left)
    left -= piece.length
    ok = res.write(piece)
  }
  if (!res.destroyed) res.end(suffix)
}

function drainOrClose (res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.once('drain', done)
    res.once('close', done)
  })
}
