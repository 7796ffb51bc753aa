// The pino logger (docs/design.md#logging): credentials are redacted by path, and as a last line of
// defence every serialised line is scrubbed of the upstream secret and the caller tokens
// the process knows, in every form the secret guard knows, whatever object carried them.
import { createRequire } from 'node:module'
import pino, { type Logger } from 'pino'
import { RequestListQuerySchema, UnresolvedQuerySchema } from '../../schemas/control.js'
import { entryScanSuffices, secretMatcher, uuidScanSuffices, type SecretMatcher } from './secret-match.js'
import { routeUrlOf } from './route-of.js'

export interface LoggerOptions {
  level: string
  /** values never to be written; the set may grow after creation (the dev token) */
  secrets: Set<string>
  pretty?: boolean
  destination?: pino.DestinationStream
  /** fields added to every line: the active span's `traceId` when tracing is on (src/tracing/log.ts) */
  mixin?: () => object
}

/**
 * pino-pretty is a development dependency (docs/design.md#logging): a production install
 * (`npm ci --omit=dev`, the image) has none, and a terminal there gets the JSON lines. Resolved,
 * never loaded, here: pino loads it in its transport's worker.
 */
function prettyInstalled (): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty')
    return true
  } catch {
    return false
  }
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

/**
 * The query names the access line keeps: the API's own, and the usual names a credential is sent
 * under, which tell an operator that one was put in a URL. Any other name may be the credential
 * itself (`?<token>=`, `?a[<token>]=1`) and is replaced with its value (docs/design.md#logging).
 */
const KEPT_QUERY_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(RequestListQuerySchema.shape), ...Object.keys(UnresolvedQuerySchema.shape),
  'token', 'access_token', 'api_key', 'apikey', 'api-key', 'x-api-key', 'key', 'auth', 'authorization', 'password', 'secret'
])

/** a query string's shape with every value replaced: `?token=[REDACTED]&api_key=[REDACTED]` */
export function redactQuery (url: string): string {
  const q = url.indexOf('?')
  const path = (q < 0 ? url : url.slice(0, q)).slice(0, 512)
  if (q < 0) return path
  const parts = url.slice(q + 1).split('&').slice(0, 32).map((p) => {
    const eq = p.indexOf('=')
    // a bare part may itself be the value (`?<token>`), and a name the credential: only known names are kept
    return eq > 0 && KEPT_QUERY_NAMES.has(p.slice(0, eq).toLowerCase()) ? `${p.slice(0, eq)}=[REDACTED]` : '[REDACTED]'
  })
  return `${path}?${parts.join('&')}`
}

/** any `?query` inside free text (an error message, a dependency's warning) */
const QUERY_IN_TEXT = /\?[^\s"'`?]+/g
const scrubQuery = (text: string): string => text.includes('?') ? text.replace(QUERY_IN_TEXT, '?[REDACTED]') : text

interface LoggedRequest {
  method?: string
  url?: string
  ip?: string
  routeOptions?: { url?: string }
  socket?: { remoteAddress?: string; remotePort?: number }
}

/** the access line's request, as `req` is written */
export interface AccessRequest { method: string | undefined; url: string; route: string | undefined; remoteAddress: string | undefined; remotePort: number | undefined }

/**
 * The access line's request (docs/design.md#logging): method, route template, the path with a
 * redacted query, the peer. Never headers: Authorization and X-API-KEY stay out at the source.
 */
function requestSerializer (req: LoggedRequest): unknown {
  // something else logged under `req` is left to the redaction paths
  if (req === null || typeof req !== 'object' || typeof req.url !== 'string') return req
  return accessRequest(req as LoggedRequest & { url: string })
}

/** the fields of `req` in an access line (src/http/access-log.ts writes them without pino's serializer) */
export function accessRequest (req: LoggedRequest & { url: string }): AccessRequest {
  let route: string | undefined
  try {
    route = routeUrlOf(req)
  } catch {
    // a request the router refused has no route
  }
  return {
    method: req.method,
    url: redactQuery(req.url),
    route,
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort
  }
}

/** pino's error serializer without what carries the caller's bytes: Node's `rawPacket`, a query */
function errorSerializer (err: Error): Record<string, unknown> {
  const out = pino.stdSerializers.err(err) as unknown as Record<string, unknown>
  const clean = (o: Record<string, unknown>, depth: number): void => {
    delete o.rawPacket
    if (typeof o.message === 'string') o.message = scrubQuery(o.message)
    if (typeof o.stack === 'string') o.stack = scrubQuery(o.stack)
    if (depth < 4 && o.cause !== null && typeof o.cause === 'object') clean(o.cause as Record<string, unknown>, depth + 1)
  }
  if (out !== null && typeof out === 'object') clean(out, 0)
  return out
}

const SCRUB = Symbol('oogw.scrub')

export interface Scrubber {
  /** the line with every form of every secret replaced */
  line: (line: string) => string
  /**
   * Whether a line whose text outside `tokens` is fixed — `template` shows it with every token
   * empty and every number 0 — is clean when `tokens` is (docs/design.md#hot-path): each token a
   * JSON string (quotes included) or a run of whole JSON members, concatenated. True only when
   * no secret holds a character of JSON's structure nor has a form written with a number's
   * characters alone (so every match lies inside one quoted string or none at all), the template
   * carries none, and the tokens carry none. False: scrub the line.
   */
  cleanOutside: (template: string, tokens: string) => boolean
  /**
   * What tokens of the access line were found clean before, for the secrets as they are now: a new
   * record whenever a secret is added (docs/design.md#hot-path). Valid only where cleanOutside's
   * conditions hold, which cleanOutside checks whatever the tokens.
   */
  seen: () => SeenClean
}

/** at most this many token values are remembered as clean; past it the record starts again */
export const SEEN_MAX = 256

export interface SeenClean {
  /** a token's JSON text by its value, for values found clean in an access line: methods, routes, addresses */
  texts: Map<string, string>
  /** the logger's bindings before a request's id (pid, hostname), once found clean */
  bindings: string | undefined
  /**
   * No form of any secret lies inside a UUID as `randomUUID` writes it (uuidScanSuffices), nor in
   * the fixed text around the request id and the time: a request id of that shape and pino's epoch
   * time need no search
   */
  uuidsAndTime: boolean
}

/**
 * The scrub of a logger made by createLogger, which every line it writes goes through; its child
 * loggers share it. Undefined for any other logger (src/http/access-log.ts then lets pino write).
 */
export function scrubberOf (log: object): Scrubber | undefined {
  return (log as { [SCRUB]?: Scrubber })[SCRUB]
}

/** a secret's matcher, and what it judged of the last template it was shown */
interface Known { matcher: SecretMatcher; tokensSuffice: boolean; template: string | undefined; templateClean: boolean }

/** values shorter than this are not scrubbed: a short one would match ordinary text (the scrub, the access line's search and its record all agree) */
const SCRUBBED_MIN = 8

/** the access line's fixed text around pino's epoch time and Fastify's request id (src/http/access-log.ts) */
const FIXED_AROUND_ID_AND_TIME = ',"time":,"reqId":""'

export function createLogger (o: LoggerOptions): Logger {
  // each secret in every form the secret guard knows (src/core/secret-match.ts), built once per value
  const known = new Map<string, Known>()
  const knownOf = (s: string): Known => {
    let k = known.get(s)
    if (k === undefined) {
      k = { matcher: secretMatcher(s), tokensSuffice: entryScanSuffices(s), template: undefined, templateClean: false }
      known.set(s, k)
    }
    return k
  }
  const scrub = (line: string): string => {
    let out = line
    for (const s of o.secrets) {
      if (s.length < SCRUBBED_MIN) continue
      const m = knownOf(s).matcher
      // test first: the common line carries no secret and costs one search per form, no copy
      if (m.test(out)) out = m.replace(out, '[REDACTED]')
    }
    return out
  }
  const cleanOutside = (template: string, tokens: string): boolean => {
    for (const s of o.secrets) {
      if (s.length < SCRUBBED_MIN) continue
      const k = knownOf(s)
      if (!k.tokensSuffice) return false
      if (k.template !== template) {
        k.templateClean = !k.matcher.test(template)
        k.template = template
      }
      if (!k.templateClean || (tokens !== '' && k.matcher.test(tokens))) return false
    }
    return true
  }
  let seenRecord: SeenClean | undefined
  let seenFor = -1
  const seen = (): SeenClean => {
    if (seenRecord === undefined || seenFor !== o.secrets.size) {
      let uuidsAndTime = true
      for (const s of o.secrets) {
        if (s.length < SCRUBBED_MIN) continue
        if (!uuidScanSuffices(s) || knownOf(s).matcher.test(FIXED_AROUND_ID_AND_TIME)) uuidsAndTime = false
      }
      seenRecord = { texts: new Map(), bindings: undefined, uuidsAndTime }
      seenFor = o.secrets.size
    }
    return seenRecord
  }
  const options: pino.LoggerOptions = {
    level: o.level,
    redact: { paths: REDACT, censor: '[REDACTED]' },
    serializers: { req: requestSerializer, err: errorSerializer },
    ...(o.mixin !== undefined ? { mixin: o.mixin } : {}),
    hooks: {
      streamWrite: scrub,
      // a dependency's message may embed a URL with its query (Fastify's "Reply was already sent")
      logMethod (args, method) {
        for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrubQuery(args[i] as string)
        method.apply(this, args)
      }
    }
  }
  const logger = o.destination !== undefined
    ? pino(options, o.destination)
    : o.pretty === true && prettyInstalled()
      ? pino({ ...options, transport: { target: 'pino-pretty', options: { destination: 1 } } })
      : pino(options, stdoutDestination())
  Object.defineProperty(logger, SCRUB, { value: { line: scrub, cleanOutside, seen } satisfies Scrubber })
  return logger
}

/**
 * Standard output, buffered (docs/design.md#hot-path). Lines wait here as text, joined as they
 * come (a rope: no copy), and go to pino's sonic-boom as one buffer of bytes per batch — one UTF-8
 * encoding per batch, not per line (`Buffer.from` and sonic-boom's bookkeeping of a write's bytes
 * are paid per call). Sonic-boom's own text mode is not used: it measures the bytes of all the
 * text waiting on every write, which flattens it, a copy of all that waits per line (the costs:
 * BENCHMARKS.md#hot-path-choices). Whatever flushes the stream — the batch timer, pino at exit
 * (`flushSync`), the end — first hands it what waits here, so the order of lines and pino's
 * promise at exit are kept.
 */
function stdoutDestination (): pino.DestinationStream {
  const boom = pino.destination({ dest: 1, contentMode: 'buffer', minLength: 0 })
  // its types know only the text mode's write(string)
  const writeBytes = boom.write as unknown as (this: typeof boom, data: Buffer) => boolean
  let waiting = ''
  const handOver = (): void => {
    if (waiting === '') return
    const text = waiting
    waiting = ''
    try {
      writeBytes.call(boom, Buffer.from(text))
    } catch {
      // the stream is gone (ended, destroyed, or its pipe broke): what waited goes with it
    }
  }
  // what waits below a batch is written at most LOG_FLUSH_MS after the line that started the wait;
  // one timer per wait, not an interval: sonic-boom's periodicFlush writes even when idle. The timer
  // holds the process open (not unref'd): a process whose work is done still writes its last lines
  // before it ends, rather than leaving them to pino's exit hooks, which lost them now and then on
  // Node 24 (test/unit/log-destination.test.ts); at most LOG_FLUSH_MS later
  let armed = false
  const flushWaiting = (): void => {
    armed = false
    handOver()
  }
  boom.write = function (data: string): boolean {
    waiting += data
    if (waiting.length >= LOG_BATCH_CHARS) handOver()
    else if (!armed) {
      armed = true
      setTimeout(flushWaiting, LOG_FLUSH_MS)
    }
    return true
  }
  for (const method of ['flush', 'flushSync', 'end'] as const) {
    const own = boom[method] as (this: typeof boom, ...args: unknown[]) => unknown
    boom[method] = function (this: typeof boom, ...args: unknown[]) {
      handOver()
      return own.apply(this, args)
    } as never
  }
  return boom
}

/**
 * Standard output is written in batches of this many characters, or LOG_FLUSH_MS after a line, whichever
 * is first (docs/design.md#hot-path): one write per request was a thread-pool round trip each
 * (what that cost: BENCHMARKS.md#hot-path-choices). At exit pino writes what waits synchronously;
 * only a process killed outright (SIGKILL) or aborted loses up to LOG_FLUSH_MS of lines
 * (docs/operating.md#logs).
 */
const LOG_BATCH_CHARS = 4096
const LOG_FLUSH_MS = 100
