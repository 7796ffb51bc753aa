// The qualification's own read-only probe client (docs/design.md#qualification). Not the
// gateway's upstream client: the smoke must send what the gateway never sends (wrong routes,
// no credential, a wrong credential, a legacy request_id). Its own rules still follow the wire
// rules' spirit: undici, TLS verified with an extra CA added to the system roots, no redirect
// followed (undici's request follows none), finite connect/headers/body timeouts, every
// request bounded by its assertion's signal, and a byte cap enforced while the body streams.
// A failure is described in the tool's own words; no remote text or undici message passes.
import { randomBytes } from 'node:crypto'
import { rootCertificates } from 'node:tls'
import { Pool } from 'undici'
import { BodyTooLarge, readCappedBody } from '../core/capped-body.js'
import type { QualifyConfig } from './config.js'
import { ProbeFailure } from './types.js'

/** Which credential a probe carries: the configured scheme, a named one, none, or a random wrong one. */
export type ProbeAuth = 'configured' | 'bearer' | 'x-api-key' | 'none' | 'wrong'

export interface ProbeRequest {
  method: 'GET' | 'POST'
  /** path from the origin, e.g. `/a2a/` (the configured prefix already applied) */
  path: string
  auth: ProbeAuth
  body?: string
  headers?: Record<string, string>
  maxBytes: number
  signal: AbortSignal
}

export interface ProbeAnswer {
  status: number
  contentType: string
  text: string
}

export interface Probe {
  send: (req: ProbeRequest) => Promise<ProbeAnswer>
  close: () => Promise<void>
}

export function createProbe (c: Pick<QualifyConfig, 'origin' | 'secret' | 'authScheme' | 'caPem' | 'connectTimeoutMs' | 'assertionTimeoutMs'>): Probe {
  const pool = new Pool(c.origin, {
    // Node's `ca` alone would replace the system roots: add to them, never disable verification,
    // not even when NODE_TLS_REJECT_UNAUTHORIZED=0 (Node's default only where the option is unset)
    connect: { timeout: c.connectTimeoutMs, rejectUnauthorized: true, ...(c.caPem !== undefined && { ca: [...rootCertificates, c.caPem] }) },
    connections: 4,
    headersTimeout: c.assertionTimeoutMs,
    bodyTimeout: c.assertionTimeoutMs
  })
  const wrong = `qualify-wrong-${randomBytes(16).toString('hex')}`

  const credential = (auth: ProbeAuth): Record<string, string> => {
    const scheme = auth === 'configured' ? c.authScheme : auth
    if (scheme === 'bearer') return { authorization: `Bearer ${c.secret}` }
    if (scheme === 'x-api-key') return { 'x-api-key': c.secret }
    if (scheme === 'wrong') return { authorization: `Bearer ${wrong}` }
    return {}
  }

  const send = async (req: ProbeRequest): Promise<ProbeAnswer> => {
    if (req.signal.aborted) throw new ProbeFailure('no answer within the time bound')
    let res
    try {
      res = await pool.request({
        method: req.method,
        path: req.path,
        headers: { accept: 'application/json, text/html;q=0.5, */*;q=0.1', ...(req.body !== undefined && { 'content-type': 'application/json' }), ...req.headers, ...credential(req.auth) },
        body: req.body,
        signal: req.signal
      })
    } catch (err) {
      throw new ProbeFailure(describeFailure(err, req.signal))
    }
    let body: Buffer
    try {
      body = await readCappedBody(res, req.maxBytes)
    } catch (err) {
      throw new ProbeFailure(err instanceof BodyTooLarge ? err.message : describeFailure(err, req.signal))
    }
    const type = res.headers['content-type']
    return { status: res.statusCode, contentType: typeof type === 'string' ? type : '', text: body.toString('utf8') }
  }

  return { send, close: async () => { await pool.destroy() } }
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL|HOSTNAME|ALTNAME/

/** The probe's own words for a transport failure: the error's code decides, its message is never used. */
export function describeFailure (err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer within the time bound'
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : ''
  const causeCode = typeof err === 'object' && err !== null ? String(((err as { cause?: { code?: unknown } }).cause)?.code ?? '') : ''
  const c = code !== '' && code !== 'undefined' ? code : causeCode
  if (c === 'UND_ERR_CONNECT_TIMEOUT') return 'the connection was not established in time'
  if (c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT') return 'the answer did not arrive in time'
  if (c === 'ECONNREFUSED') return 'the connection was refused'
  if (c === 'ENOTFOUND' || c === 'EAI_AGAIN') return 'the host name did not resolve'
  if (TLS_CODE.test(c)) return 'TLS verification failed: the certificate is not trusted or does not name the host'
  if (c === 'ECONNRESET' || c === 'UND_ERR_SOCKET' || c === 'EPIPE') return 'the remote closed the connection'
  return 'the exchange failed (network)'
}
