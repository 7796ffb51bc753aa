// A burst of GET requests from a worker thread: its own event loop (the machine's second core),
// so the gateway's latency is not inflated by the load generator's own parsing. Each request has
// a socket of its own, opened beforehand in waves, so the figure is the gateway's and not the
// kernel's SYN backlog. Loopback only; the worker ends when the burst has answered.
import { Worker } from 'node:worker_threads'

export interface BurstAnswer { ms: number; status: number; retryAfter: string | undefined; code: string | undefined; retryable: boolean | undefined }

export interface Burst {
  /** resolves once every socket is open */
  ready: Promise<void>
  /** fires every request at once; resolves with each answer */
  fire: () => Promise<BurstAnswer[]>
}

const WORKER = `
const { Client } = require('undici')
const { parentPort, workerData: w } = require('node:worker_threads')
const clients = Array.from({ length: w.count }, () => new Client(w.url, { pipelining: 1, keepAliveTimeout: 60000 }))
async function get (c, path, headers) {
  const t = performance.now()
  const res = await c.request({ method: 'GET', path, headers })
  const text = await res.body.text()
  let body
  try { body = JSON.parse(text) } catch { body = undefined }
  const ra = res.headers['retry-after']
  return { ms: performance.now() - t, status: res.statusCode, retryAfter: typeof ra === 'string' ? ra : undefined, code: body && body.error ? body.error.code : undefined, retryable: body && body.error ? body.error.retryable : undefined }
}
;(async () => {
  for (let i = 0; i < clients.length; i += 250) await Promise.all(clients.slice(i, i + 250).map((c) => get(c, '/healthz', {})))
  parentPort.postMessage({ ready: true })
  parentPort.once('message', async () => {
    const answers = await Promise.all(clients.map((c, i) => get(c, w.paths[i % w.paths.length].replace('{i}', String(i)), w.headers)))
    await Promise.all(clients.map((c) => c.close()))
    parentPort.postMessage({ answers })
  })
})().catch((err) => parentPort.postMessage({ error: String(err) }))
`

/** `count` requests to `paths` (`{i}` replaced by the request's index), round robin */
export function startBurst (o: { url: string; count: number; paths: string[]; headers: Record<string, string> }): Burst {
  const worker = new Worker(WORKER, { eval: true, workerData: o })
  let answered: (a: BurstAnswer[]) => void = () => undefined
  let failed: (e: Error) => void = () => undefined
  const answers = new Promise<BurstAnswer[]>((resolve, reject) => { answered = resolve; failed = reject })
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; answers?: BurstAnswer[]; error?: string }) => {
      if (m.ready === true) resolve()
      if (m.answers !== undefined) { answered(m.answers); void worker.terminate() }
      if (m.error !== undefined) { const e = new Error(`burst worker: ${m.error}`); reject(e); failed(e); void worker.terminate() }
    })
    worker.on('error', (e) => { reject(e); failed(e) })
  })
  return {
    ready,
    fire: async () => { worker.postMessage('go'); return await answers }
  }
}
