// The console's one way to the gateway: the public REST API (docs/api.md), same origin, with the
// operator's token as `Authorization: Bearer` — what the token's scopes allow is what the console
// can show and do. The answers' types are the typed client's, generated from the gateway's own
// OpenAPI document (clients/typescript), so the console reads the API as it is documented.
import type { components } from '../../clients/typescript/src/schema.js'
import { session } from './session.js'

type Schemas = components['schemas']
export type Upstream = Schemas['Upstream']
export type RequestRecord = Schemas['Request']
export type RequestList = Schemas['RequestList']
export type UnresolvedList = Schemas['UnresolvedRequestList']
export type ControlView = Schemas['Control']
export type Lease = Schemas['Lease']
export type Task = Schemas['TaskProjection']
export type BindingList = Schemas['ControllerBindingList']

/** GET /readyz (docs/api.md#readyz): outside the OpenAPI document, so typed here */
export interface Ready {
  ready: boolean
  draining: boolean
  checks: {
    card: boolean
    ledger: boolean
    upstreamCircuit: 'closed' | 'open' | 'half_open'
    redis?: boolean
    jwtKeys?: boolean
    clock: { ok: boolean, ledgerOffsetMs: number | null, remoteOffsetMs: number | null, marginMs: number }
  }
  mode: 'controller' | 'observer'
}

/** an answer that was not a success, in the API's error shape (docs/api.md#errors) */
export class ApiError extends Error {
  constructor (
    readonly status: number,
    readonly code: string,
    message: string,
    /** seconds, from Retry-After */
    readonly retryAfter: number | undefined
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** told when the gateway refuses the token (401): the console signs out */
let onUnauthorized: () => void = () => {}
export function whenUnauthorized (f: () => void): void { onUnauthorized = f }

export async function api<T> (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {}
  const token = session.token()
  if (token !== null) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  return await send<T>(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
}

/** a route without a scope (the readiness probe): no token sent where none is needed */
export async function publicGet<T> (path: string, okStatuses: number[] = [200]): Promise<T> {
  return await send<T>(path, { method: 'GET', headers: {} }, okStatuses)
}

async function send<T> (path: string, init: RequestInit, okStatuses: number[] = []): Promise<T> {
  let res: Response
  try {
    res = await fetch(path, { ...init, credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer' })
  } catch {
    throw new ApiError(0, 'no_answer', 'The gateway did not answer.', undefined)
  }
  const text = await res.text()
  let parsed: unknown
  try { parsed = text === '' ? undefined : JSON.parse(text) } catch { parsed = undefined }
  if (res.ok || okStatuses.includes(res.status)) return parsed as T
  const error = (parsed as { error?: { code?: unknown, message?: unknown } } | undefined)?.error
  const code = typeof error?.code === 'string' ? error.code : 'unknown'
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${res.status}`
  const retry = Number(res.headers.get('retry-after'))
  if (res.status === 401) onUnauthorized()
  throw new ApiError(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined)
}

/** a path segment, encoded: ids come from the API or the operator, never trusted as path syntax */
export const seg = (s: string): string => encodeURIComponent(s)
