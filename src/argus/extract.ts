// Where an Argus answer hides its payload or its safe error code (docs/design.md#argus-reads):
// the first `data` part of a message, or of a completed task's artifacts, then its status
// message; a code may sit in error.data.code, error.message, or a payload's `error`. The shapes are
// checked by hand (schemas/a2a.ts `isPart`…, docs/design.md#hot-path).
import { isArtifact, isMessage, isPart, type A2aTask } from '../../schemas/a2a.js'
import type { RpcErrorObject } from '../../schemas/jsonrpc.js'
import { ARGUS_CODES, type ArgusCode } from './envelope.js'

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const asCode = (v: unknown): ArgusCode | undefined => (ARGUS_CODES as readonly unknown[]).includes(v) ? v as ArgusCode : undefined

function firstData (parts: unknown[]): Record<string, unknown> | undefined {
  for (const p of parts) {
    if (isPart(p) && p.kind === 'data' && isObject(p.data)) return p.data
  }
  return undefined
}

export function payloadOfMessage (message: unknown): Record<string, unknown> | undefined {
  return isMessage(message) ? firstData(message.parts) : undefined
}

export function payloadOfTask (task: A2aTask): Record<string, unknown> | undefined {
  for (const a of task.artifacts ?? []) {
    const data = isArtifact(a) ? firstData(a.parts) : undefined
    if (data !== undefined) return data
  }
  const msg = task.status.message
  if (isObject(msg) && Array.isArray(msg.parts)) return firstData(msg.parts)
  return undefined
}

/** `{"error":"<code>"}` or `{"error":{"code":"<code>"}}`; `other` when an unknown error is present */
export function payloadError (payload: Record<string, unknown>): ArgusCode | 'other' | undefined {
  if (!('error' in payload) || payload.error === null || payload.error === undefined || payload.error === false) return undefined
  const e = payload.error
  return asCode(e) ?? (isObject(e) ? asCode(e.code) : undefined) ?? 'other'
}

export function rpcErrorArgusCode (error: RpcErrorObject): ArgusCode | undefined {
  const d = error.data
  if (isObject(d)) {
    const fromData = asCode(d.code) ?? asCode(d.error) ?? (isObject(d.error) ? asCode(d.error.code) : undefined)
    if (fromData !== undefined) return fromData
  }
  return ARGUS_CODES.find((c) => new RegExp(`(^|[^a-z_])${c}([^a-z_]|$)`).test(error.message))
}
