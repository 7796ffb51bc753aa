// The production logger (docs/design.md#logging): credential headers are redacted by path, and any
// line is scrubbed of the secrets the process knows, whatever carried them.
import { Writable } from 'node:stream'
import type pino from 'pino'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/logger.js'

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
})
