// Per-caller rate limits (docs/design.md#rate-limits): after authentication (a 401 never counts), a
// read budget and a control budget covering every POST under /v1/campaigns, each a fixed window of
// a minute. Shared through Redis when GATEWAY_REDIS_URL is set: @fastify/rate-limit with its Redis
// store (the `redis` plugin's client); a failing store serves the request and counts the error
// (src/http/rate-limit-store.ts): rate limiting fails open. Without Redis the same plugin's in-memory
// store (an LRU of 10,000 keys) is called from a callback hook, synchronously: the plugin's async
// hook makes every read pay its promise and awaits for a count that never waits
// (docs/design.md#hot-path; what it cost: BENCHMARKS.md#hot-path-choices).
// Both answer the same headers and the same 429.
// A front-door mutation is known only once its body is read, so `POST /a2a/` counts as a read when
// it arrives, and the front door charges a mutation to the same control key in the same store
// through `app.chargeControl` before it reaches the pipeline (docs/api.md#a2a-front-door).
import fp from 'fastify-plugin'
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../core/errors.js'
import { rateLimitStore } from './rate-limit-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** charges one request to its caller's control budget; rejects with `rate_limited` (Retry-After set) past it */
    chargeControl: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  }
}

export interface RateLimitOptions { read: number; control: number }

const WINDOW_MS = 60_000
/** keys in the in-memory store's LRU, and caller names whose keys are kept (docs/design.md#bounded-maps) */
export const KEYS = 10_000
const NAMESPACE = 'oogw-rl-'

type Counter = Pick<FastifyRateLimitStore, 'incr'>
interface Counted { current: number; ttl: number }

const isControl = (r: FastifyRequest): boolean => r.method === 'POST' && (r.routeOptions.url ?? '').startsWith('/v1/campaigns')
/**
 * A caller's two keys, made once per name: a key made per request is a new string the store's map
 * must flatten and hash each time (docs/design.md#hot-path). At most KEYS names are kept; past that
 * the table starts again.
 */
const keysByName = new Map<string, { read: string; control: string }>()
/** caller names whose keys are kept (tests: at most KEYS) */
export const keyNamesKept = (): number => keysByName.size
export function keyOf (control: boolean, name: string): string {
  let k = keysByName.get(name)
  if (k === undefined) {
    if (keysByName.size >= KEYS) keysByName.clear()
    k = { read: `read:${name}`, control: `control:${name}` }
    keysByName.set(name, k)
  }
  return control ? k.control : k.read
}

export default fp<RateLimitOptions>(async (app, opts) => {
  const limited = (r: FastifyRequest, ttl: number): GatewayError => {
    app.metrics.rateLimited.inc({ route: r.routeOptions.url ?? 'unmatched' })
    return new GatewayError('rate_limited', {
      message: `Too many requests; retry after ${Math.ceil(ttl / 1000)} s.`,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(ttl / 1000))) }
    })
  }
  // the headers' values as text: Node checks a header's value with a regular expression, which
  // for a number takes V8's slow path to make its text first; `'' + n` here costs less than that,
  // and less than String(n) for a number missing V8's cache, three values a read
  // (docs/design.md#hot-path; the counts: BENCHMARKS.md#hot-path-choices)
  const readMax = String(opts.read)
  const controlMax = String(opts.control)
  /** the headers of @fastify/rate-limit's hook for the read or the control budget; the refusal past it, else undefined */
  const verdict = (request: FastifyRequest, reply: FastifyReply, control: boolean, res: Counted): GatewayError | undefined => {
    const max = control ? opts.control : opts.read
    const reset = '' + Math.ceil(res.ttl / 1000)
    reply.header('x-ratelimit-limit', control ? controlMax : readMax)
    reply.header('x-ratelimit-reset', reset)
    if (res.current <= max) {
      reply.header('x-ratelimit-remaining', '' + (max - res.current))
      return undefined
    }
    reply.header('x-ratelimit-remaining', '0')
    reply.header('retry-after', reset)
    return limited(request, res.ttl)
  }
  let counter: Counter
  if (app.redis !== undefined) {
    const store = rateLimitStore(app, NAMESPACE, KEYS)
    await app.register(rateLimit, {
      global: true,
      timeWindow: WINDOW_MS,
      // eslint-disable-next-line no-restricted-syntax -- the plugin's options, built once at startup
      ...store,
      // routes without a scope (health, docs) are not limited; the others always have a caller here
      allowList: (r) => r.caller === null,
      keyGenerator: (r) => keyOf(isControl(r), r.caller?.name ?? ''),
      max: (r) => isControl(r) ? opts.control : opts.read,
      errorResponseBuilder: (r, ctx) => limited(r, ctx.ttl)
    })
    // a second handle on the same keys (same client, same namespace): the counts are the plugin's
    const Store = store.store as FastifyRateLimitStoreCtor
    counter = new Store({})
  } else {
    const store = new LocalStore(false, false, KEYS)
    counter = store
    // the headers and the 429 of @fastify/rate-limit's hook, without its promises
    app.addHook('onRequest', (request, reply, done) => {
      const caller = request.caller
      if (caller === null) { done(); return }
      const control = isControl(request)
      const max = control ? opts.control : opts.read
      store.incr(keyOf(control, caller.name), (_err: Error | null, res: Counted) => { done(verdict(request, reply, control, res)) }, WINDOW_MS, max)
    })
  }

  app.decorate('chargeControl', async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const caller = request.caller
    if (caller === null) return
    await new Promise<void>((resolve, reject) => {
      counter.incr(keyOf(true, caller.name), (err, res) => {
        // a failed store serves the request (counted by the store's wrapper): fail open, as the hook does
        if (err !== null || res === undefined) { resolve(); return }
        const refused = verdict(request, reply, true, res)
        if (refused === undefined) resolve(); else reject(refused)
      }, WINDOW_MS, opts.control)
    })
  })
}, { name: 'rate-limit', dependencies: ['auth', 'metrics', 'redis'] })
