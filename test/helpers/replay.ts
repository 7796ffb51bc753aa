// A purpose-built upstream that answers with the recorded responses of real A2A servers
// (test/fixtures/recorded, copied from shared/fixtures), only rewriting the JSON-RPC id to
// the request's so the gateway's id check can pass. Anything else is the server's own words.
import { readFileSync } from 'node:fs'
import http from 'node:http'

const dir = new URL('../fixtures/recorded/', import.meta.url)
export const recorded = (name: string): string => readFileSync(new URL(name, dir), 'utf8')

export interface ReplayScript {
  cards: Record<string, string | number> // path suffix → fixture file or HTTP status
  /** JSON-RPC method → fixture files answered in turn (the last one repeats); `.http` files are raw responses */
  rpc: Record<string, string[]>
  /** rewrites each card before it is served (e.g. a dual server's card as a v0.3-only server's) */
  card?: (card: Record<string, unknown>) => Record<string, unknown>
}

export interface Replay { url: string; calls: Array<{ method: string; params: unknown }>; close: () => Promise<void> }

export async function startReplay (script: ReplayScript): Promise<Replay> {
  const calls: Replay['calls'] = []
  const turns = new Map<string, number>()
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => { body += d.toString() })
    req.on('end', () => {
      const path = req.url ?? ''
      if (req.method === 'GET' && path.startsWith('/a2a/.well-known/')) {
        const entry = script.cards[path.slice('/a2a'.length)]
        if (entry === undefined || typeof entry === 'number') { res.writeHead(entry ?? 404).end(); return }
        const text = script.card !== undefined ? JSON.stringify(script.card(JSON.parse(recorded(entry)) as Record<string, unknown>)) : recorded(entry)
        res.writeHead(200, { 'content-type': 'application/json' }).end(text)
        return
      }
      if (req.method !== 'POST' || path !== '/a2a/') { res.writeHead(404).end(); return }
      const rpc = JSON.parse(body) as { id: string; method: string; params: unknown }
      calls.push({ method: rpc.method, params: rpc.params })
      const files = script.rpc[rpc.method] ?? []
      const n = turns.get(rpc.method) ?? 0
      turns.set(rpc.method, n + 1)
      const file = files[Math.min(n, files.length - 1)]
      if (file === undefined) { res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error'); return }
      if (file.endsWith('.http')) {
        // a raw recorded HTTP answer: status line, headers, blank line, body
        const [head = '', text = ''] = recorded(file).split(/\r?\n\r?\n/, 2)
        const [status, ...headers] = head.split(/\r?\n/)
        const h: Record<string, string> = {}
        for (const line of headers) { const i = line.indexOf(':'); h[line.slice(0, i).trim()] = line.slice(i + 1).trim() }
        delete h['content-length']
        res.writeHead(Number(status?.split(' ')[1]), h).end(text.replace(/\n$/, ''))
        return
      }
      const answer = JSON.parse(recorded(file)) as { id: unknown }
      if (answer.id !== null) answer.id = rpc.id
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    calls,
    close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)) }
  }
}
