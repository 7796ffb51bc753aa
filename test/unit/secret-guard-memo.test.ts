// The secret guard remembers the last text it found clean (docs/design.md#hot-path): the same text
// passes again without a search, and any other text — the same length, one character apart, or
// the remembered text with the secret appended — is searched as if nothing were remembered.
// Over a real socket: the guard is the last line of defence, so it is tested as it runs, in an
// onSend hook of a listening Fastify.
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { afterEach, describe, expect, it } from 'vitest'
import secretGuard from '../../src/http/secret-guard.js'

const SECRET = 'memo-secret-4b1d9e7c03a2f856'

let app: FastifyInstance | undefined
afterEach(async () => { await app?.close(); app = undefined })

async function guarded (): Promise<{ url: string, answer: (text: string) => Promise<{ status: number, text: string }> }> {
  app = Fastify()
  await app.register(fp(async (a) => { a.decorate('gatewayConfig', { upstream: { secret: SECRET } } as never) }, { name: 'gateway-config' }))
  await app.register(secretGuard)
  let next = ''
  app.get('/t', async (_req, reply) => await reply.type('application/json').send(next))
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return {
    url,
    answer: async (text) => {
      next = text
      const res = await fetch(`${url}/t`)
      return { status: res.status, text: await res.text() }
    }
  }
}

describe('the secret guard\'s memory of a clean answer', () => {
  it('passes the same text again, and searches any other text', async () => {
    const { answer } = await guarded()
    const clean = JSON.stringify({ note: 'x'.repeat(SECRET.length) })
    expect(await answer(clean)).toEqual({ status: 200, text: clean })
    expect(await answer(clean)).toEqual({ status: 200, text: clean })
    // the same length as the remembered text, the secret in place of the x's
    const sameLength = JSON.stringify({ note: SECRET })
    expect(sameLength.length).toBe(clean.length)
    const refused = await answer(sameLength)
    expect(refused.status).toBe(502)
    expect(refused.text).not.toContain(SECRET)
    expect(JSON.parse(refused.text).error.code).toBe('upstream_invalid_response')
    // the remembered text with the secret after it
    expect((await answer(clean + SECRET)).status).toBe(502)
    // a refused text is never remembered as clean
    expect((await answer(sameLength)).status).toBe(502)
    expect((await answer(clean)).status).toBe(200)
  })

  it('a text over the remembered size is searched every time', async () => {
    const { answer } = await guarded()
    const big = JSON.stringify({ note: 'y'.repeat(70 * 1024) })
    expect((await answer(big)).status).toBe(200)
    expect((await answer(big)).status).toBe(200)
    expect((await answer(big.slice(0, -SECRET.length - 2) + SECRET + '"}')).status).toBe(502)
  })
})
