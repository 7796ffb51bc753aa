// The production logger (docs/design.md#logging): credential headers are redacted by path, and any
// line is scrubbed of the secrets the process knows, whatever carried them.
import { Writable } from 'node:stream'
import type pino from 'pino'
import { describe, expect, it } from 'vitest'
import { createLogger, redactQuery } from '../../src/core/logger.js'

function capture (secrets: Set<string>): { log: pino.Logger; text: () => string } {
  const lines: string[] = []
  const sink = new Writable({ write (c, _e, cb) { lines.push(String(c)); cb() } })
  return { log: createLogger({ level: 'trace', secrets, destination: sink as unknown as pino.DestinationStream }), text: () => lines.join('') }
}

describe('logger', () => {
  it('redacts authorization and x-api-key headers', () => {
    const { log, text } = capture(new Set())
    log.info({ req: { headers: { authorization: 'Bearer tok-abc-123456', 'x-api-key': 'key-abc-123456', accept: 'json' } } }, 'incoming')
    expect(text()).not.toContain('tok-abc-123456')
    expect(text()).not.toContain('key-abc-123456')
    expect(text()).toContain('[REDACTED]')
    expect(text()).toContain('"accept":"json"')
  })

  it('keeps a query string\'s known names, never its values or another name', () => {
    expect(redactQuery('/v1/tasks/t-1?token=abc&api_key=def')).toBe('/v1/tasks/t-1?token=[REDACTED]&api_key=[REDACTED]')
    expect(redactQuery('/v1/campaigns/c/requests?state=ambiguous&limit=5&Access_Token=x')).toBe('/v1/campaigns/c/requests?state=[REDACTED]&limit=[REDACTED]&Access_Token=[REDACTED]')
    expect(redactQuery('/x?tok-bare-value&=v&a%20b=c')).toBe('/x?[REDACTED]&[REDACTED]&[REDACTED]')
    // a name may be the credential itself: any name that is not a known word goes whole
    expect(redactQuery('/x?tok-name-as-value=&a[tok-in-brackets]=1&tok-3[a]=1&page=2')).toBe('/x?[REDACTED]&[REDACTED]&[REDACTED]&[REDACTED]')
    expect(redactQuery('/plain')).toBe('/plain')
  })

  it('never writes an error\'s raw packet or a query found in its message', () => {
    const { log, text } = capture(new Set())
    const err = Object.assign(new Error('bad /path?token=tok-in-message'), { code: 'HPE_X', rawPacket: Buffer.from('Authorization: Bearer tok-raw-bytes') })
    log.trace({ err }, 'client error')
    log.warn('Reply was already sent in the "/v1/x?token=tok-in-text" route')
    expect(text()).not.toMatch(/rawPacket|tok-raw-bytes|tok-in-message|tok-in-text/)
    expect(text()).toContain('"code":"HPE_X"')
  })

  it('scrubs a known secret wherever it appears, including one added after creation', () => {
    const secrets = new Set(['upstream-secret-value'])
    const { log, text } = capture(secrets)
    log.warn({ detail: { nested: 'prefix upstream-secret-value suffix' } }, 'odd place')
    secrets.add('dev-token-added-later')
    log.error('message with dev-token-added-later inside')
    expect(text()).not.toContain('upstream-secret-value')
    expect(text()).not.toContain('dev-token-added-later')
    expect(text().match(/\[REDACTED\]/g)).toHaveLength(2)
  })

  it('scrubs a known secret in every form the secret guard knows: base64, percent-encoded, hex (docs/design.md#secret-echo)', () => {
    const secret = 'upstream/secret+value=0123'
    const { log, text } = capture(new Set([secret]))
    const forms = [Buffer.from(`Bearer ${secret}`).toString('base64'), encodeURIComponent(secret), Buffer.from(secret).toString('hex')]
    log.warn({ detail: forms.join(' and ') }, 'encoded')
    for (const f of forms) expect(text()).not.toContain(f)
    expect(text().match(/\[REDACTED\]/g)).toHaveLength(3)
  })
})
