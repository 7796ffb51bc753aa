// A response body read under a byte cap (docs/design.md#upstream-wire-rules): refused from its
// declared length before a byte is read, or as soon as what streams in passes the cap. A body
// given up on is destroyed with its error handled. The JWKS fetch and the qualification's probe
// read through it; the upstream client keeps its own reader, which also holds the in-flight
// byte budget as the body streams.
import type { Dispatcher } from 'undici'

type Body = Dispatcher.ResponseData['body']

/** thrown when a body declares or streams more than its cap; the caller words it */
export class BodyTooLarge extends Error {
  constructor (readonly maxBytes: number, readonly declared: boolean) {
    super(declared ? `the answer declares more than ${maxBytes} bytes` : `the answer exceeded ${maxBytes} bytes`)
  }
}

/** destroyed, its error handled: nothing else is listening */
export function discardBody (body: Body): void {
  body.on('error', () => undefined)
  body.destroy()
}

export async function readCappedBody (res: Pick<Dispatcher.ResponseData, 'headers' | 'body'>, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    discardBody(res.body)
    throw new BodyTooLarge(maxBytes, true)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      discardBody(res.body)
      throw new BodyTooLarge(maxBytes, false)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks, size)
}
