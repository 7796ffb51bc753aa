// One exchange through undici's `request` (a mutation's; the read Pool's, JSON-RPC reads and card
// fetches, take rpcExchange), and the refusals every exchange shares
// (docs/design.md#upstream-wire-rules): a 3xx is never followed, a body is read under its byte cap
// (and the body budget, when held) while it streams whatever `content-length` says, and the whole
// answer within the deadline.
import type { Dispatcher } from 'undici'
import { discardBody } from '../../core/capped-body.js'
import type { ByteBudget, Hold } from '../byte-budget.js'
import { classifyTransportError, UpstreamCallError } from '../errors.js'
import type { ClientState } from './state.js'
import type { Exchange, ExchangeRequest } from './types.js'

export async function exchange (s: ClientState, dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
  const remaining = req.deadline - Date.now()
  if (remaining <= 0) throw new UpstreamCallError('timeout', { nothingSent: true })
  let res: Dispatcher.ResponseData
  try {
    // undici's headersTimeout is the deadline until the headers; the body is bounded below
    res = await dispatcher.request({
      method: req.method,
      path: req.path,
      body: req.body,
      headers: req.headers,
      reset: req.reset ?? false,
      headersTimeout: remaining,
      bodyTimeout: remaining
    })
  } catch (err) {
    throw classifyTransportError(err, typeof err === 'object' && err !== null && s.preConnect.has(err), Date.now() >= req.deadline)
  }
  const declared = Number(res.headers['content-length'])
  const refused = headersRefusal(s.budget, res.statusCode, Number.isFinite(declared) ? declared : undefined, req)
  if (refused !== undefined) {
    discardBody(res.body)
    throw refused
  }
  const { hold } = req
  // the whole answer within the deadline, however slowly it trickles (src/upstream/deadlines.ts)
  const body = res.body
  const watch = s.deadlines.watch(req.deadline, () => { body.destroy(new UpstreamCallError('timeout')) })
  try {
    return { status: res.statusCode, body: await readCapped(s.budget, body, req.maxBytes, hold, res.statusCode), headers: res.headers }
  } catch (err) {
    throw classifyTransportError(err, false, Date.now() >= req.deadline)
  } finally {
    s.deadlines.unwatch(watch)
  }
}

/** the body under its byte cap (and the budget, when held) as it streams; listeners, not an async iterator */
async function readCapped (budget: ByteBudget, body: Dispatcher.ResponseData['body'], maxBytes: number, hold: Hold | undefined, status: number): Promise<Buffer> {
  return await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const fail = (err: unknown): void => {
      body.off('data', onData)
      discardBody(body)
      reject(err)
    }
    const onData = (buf: Buffer): void => {
      size += buf.length
      const refused = bodyRefusal(budget, size, status, maxBytes, hold)
      if (refused !== undefined) return fail(refused)
      chunks.push(buf)
    }
    body.on('data', onData)
    body.once('error', reject)
    body.once('end', () => { resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)) })
  })
}

/**
 * What an answer's head refuses, both exchanges alike (this one and rpcExchange's): a 3xx is never
 * followed, a declared length over the cap is not read, and a budgeted answer reserves its declared
 * length or is shed
 */
export function headersRefusal (budget: ByteBudget, status: number, declared: number | undefined, req: Pick<ExchangeRequest, 'maxBytes' | 'hold'>): UpstreamCallError | undefined {
  if (status >= 300 && status < 400) return new UpstreamCallError('redirect', { httpStatus: status })
  if (declared === undefined) return undefined
  if (declared > req.maxBytes) return new UpstreamCallError('too_large', { httpStatus: status })
  if (req.hold !== undefined && !budget.reserve(req.hold, declared)) return overBudget(status)
  return undefined
}

/** what the body refuses once `size` bytes have streamed in: past the cap, or past the budget (a missing or short declaration reserves what actually streams in) */
export function bodyRefusal (budget: ByteBudget, size: number, status: number, maxBytes: number, hold: Hold | undefined): UpstreamCallError | undefined {
  if (size > maxBytes) return new UpstreamCallError('too_large', { httpStatus: status })
  if (hold !== undefined && size > hold.bytes && !budget.reserve(hold, size - hold.bytes)) return overBudget(status)
  return undefined
}

/** shed past the budget: the answer was coming, so something was sent, but nothing is held */
function overBudget (status: number): UpstreamCallError {
  return new UpstreamCallError('saturated', { httpStatus: status, retryAfterSeconds: 1 })
}
