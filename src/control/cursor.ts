// The opaque cursor of GET /v1/requests (docs/design.md#finding-unresolved): the position
// of the last record of a page in creation order, so the next page starts after it whatever was
// written or resolved meanwhile. Callers pass it back as given; its content is not part of the API.
import { GatewayError } from '../core/errors.js'
import type { RecordPosition } from '../ledger/types.js'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function encodeCursor (p: RecordPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt, p.requestId]), 'utf8').toString('base64url')
}

export function decodeCursor (cursor: string): RecordPosition {
  let value: unknown
  try {
    value = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined
  } catch {
    value = undefined
  }
  if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string' && REQUEST_ID.test(value[1])) {
    return { createdAt: value[0] as number, requestId: value[1] }
  }
  throw new GatewayError('invalid_request', { message: 'The cursor is not one this gateway gave: pass nextCursor as it came.' })
}
