// Raw HTTP/1.1 over a plain `net` socket, for requests a well-behaved client (undici) refuses to
// send: malformed request lines and headers, duplicate Authorization, `..` kept in the path,
// bodies that never arrive. The answer is parsed just enough for assertions.
import { connect, type Socket } from 'node:net'

export interface RawAnswer {
  /** 0 when the server closed without answering */
  status: number
  headers: Record<string, string>
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into answers freely
  body: any
  /** the whole answer as received */
  raw: string
}

export function parseRawAnswer (raw: string): RawAnswer {
  const end = raw.indexOf('\r\n\r\n')
  const head = end < 0 ? raw : raw.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0)
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  const text = end < 0 ? '' : raw.slice(end + 4)
  let body: unknown
  try { body = JSON.parse(text) } catch { body = undefined }
  return { status, headers, text, body, raw }
}

/**
 * Every answer in `raw`, in the order they came: pipelined requests on one socket get their
 * answers one after another, each framed by its `content-length` (the gateway sends no chunked
 * answers to these tests). An interim `100 Continue` is skipped.
 */
export function parseRawAnswers (raw: string): RawAnswer[] {
  const out: RawAnswer[] = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) { out.push(parseRawAnswer(rest)); break }
    const head = parseRawAnswer(rest.slice(0, end + 4))
    const length = Number(head.headers['content-length'] ?? 0)
    const one = rest.slice(0, end + 4 + length)
    rest = rest.slice(end + 4 + length)
    if (head.status !== 100) out.push(parseRawAnswer(one))
  }
  return out
}

/** host and port of a gateway URL */
export function endpoint (url: string): { host: string; port: number } {
  const u = new URL(url)
  return { host: u.hostname, port: Number(u.port) }
}

/**
 * Sends `data` as is and collects what comes back until the server closes the socket (or
 * `ms` pass). Use `Connection: close` in well-formed requests so the answer ends with it.
 */
export async function rawExchange (url: string, data: string | Buffer, ms = 5000): Promise<RawAnswer> {
  const { host, port } = endpoint(url)
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const s: Socket = connect(port, host)
    const done = (): void => { clearTimeout(timer); resolve(parseRawAnswer(Buffer.concat(chunks).toString('latin1'))) }
    const timer = setTimeout(() => { s.destroy(); reject(new Error(`no close within ${ms} ms; got: ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`)) }, ms)
    s.on('data', (d: Buffer) => chunks.push(d))
    // the server may reset after answering; what arrived still counts
    s.on('error', () => {})
    s.on('close', done)
    s.write(data)
  })
}
