// The pino logger (docs/design.md#logging): credentials are redacted by path, and as a last line of
// defence every serialised line is scrubbed of the upstream secret and the caller tokens
// the process knows, whatever object carried them.
import pino, { type Logger } from 'pino'

export interface LoggerOptions {
  level: string
  /** values never to be written; the set may grow after creation (the dev token) */
  secrets: Set<string>
  pretty?: boolean
  destination?: pino.DestinationStream
}

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'authorization',
  'secret',
  'token'
]

export function createLogger (o: LoggerOptions): Logger {
  const scrub = (line: string): string => {
    let out = line
    for (const s of o.secrets) if (s.length >= 8) out = out.split(s).join('[REDACTED]')
    return out
  }
  const options: pino.LoggerOptions = {
    level: o.level,
    redact: { paths: REDACT, censor: '[REDACTED]' },
    hooks: { streamWrite: scrub }
  }
  if (o.destination !== undefined) return pino(options, o.destination)
  if (o.pretty === true) return pino({ ...options, transport: { target: 'pino-pretty', options: { destination: 1 } } })
  return pino(options, pino.destination(1))
}
