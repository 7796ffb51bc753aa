// Small HTTP helpers for tests: a request with a bearer token, JSON parsed.
import { request } from 'undici'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into answers freely
export interface JsonResponse { status: number; headers: Record<string, string | string[] | undefined>; body: any; text: string }

export async function call (url: string, opts: { method?: 'GET' | 'POST' | 'DELETE'; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let body: string | undefined = opts.rawBody
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] = 'application/json'
  }
  const res = await request(url, { method: opts.method ?? 'GET', headers, body })
  const text = await res.body.text()
  let json: unknown
  try { json = JSON.parse(text) } catch { json = undefined }
  return { status: res.statusCode, headers: res.headers, body: json, text }
}

/** every key of a JSON value, at any depth */
export function allKeys (v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) allKeys(x, out)
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) { out.push(k); allKeys(x, out) }
  }
  return out
}

let rpcSeq = 0
/** one JSON-RPC request to a gateway's A2A front door (`POST <url>/a2a/`), a fresh id each */
export async function frontRpc (url: string, token: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return await call(`${url}/a2a/`, { method: 'POST', token, body: { jsonrpc: '2.0', id: `rpc-${++rpcSeq}`, method, params }, headers })
}
