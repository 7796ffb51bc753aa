// The simulator's admin routes (docs/design.md#simulator-faults): set, list and clear faults, and
// deliver or drop the requests a `hold` fault parked, at run time and without code. They live on
// the simulator's own listener, never on the gateway's, and answer only loopback peers (403
// otherwise, whatever address the simulator listens on): whoever can set a fault can make the
// remote lose or delay any call. They take no credential, so the embedded simulator's random
// secret need not be known; requests to them are not recorded as requests to the remote.
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { z } from 'zod'
import { parseFaultRules } from '../books/fault-spec.js'
import { handleRpc } from '../dispatch.js'
import type { SimulatorState } from '../state.js'

export const ADMIN_PREFIX = '/_sim'

/** Whether a socket's remote address is loopback: 127.0.0.0/8 (also IPv4-mapped) or ::1. */
export function isLoopbackPeer (address: string | undefined): boolean {
  if (address === undefined) return false
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address
  return /^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$/.test(v4) || address === '::1'
}

const FAULTS_SHAPE = 'must be a string of rules, e.g. "drop-after-apply@submit:1", or an array of 1 to 32 of them'
const error = FAULTS_SHAPE
const AddFaultsBody = z.strictObject({
  faults: z.union([z.string({ error }).min(1, { error }).max(4096, { error }), z.array(z.string({ error }).min(1, { error }).max(512, { error }), { error }).min(1, { error }).max(32, { error })], { error })
}, { error: 'must be a JSON object: {"faults": "<rule>[,<rule>…]"}' })
const EmptyBody = z.strictObject({}, { error: 'must be empty or {}' })

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string }

function parseJsonBody<S extends z.ZodType> (schema: S, raw: unknown, emptyAllowed: boolean): Parsed<z.infer<S>> {
  const text = typeof raw === 'string' ? raw : ''
  let value: unknown
  if (text.trim() === '') {
    if (!emptyAllowed) return { ok: false, message: 'the body must be JSON: {"faults": "<rule>[,<rule>…]"}' }
    value = {}
  } else {
    try {
      value = JSON.parse(text)
    } catch {
      return { ok: false, message: 'the body is not valid JSON' }
    }
  }
  const result = schema.safeParse(value)
  if (result.success) return { ok: true, value: result.data }
  // an unknown field first: {"fault": …} is a misspelt "faults", not a missing one
  const issues = result.error.issues
  const unknown = issues.find((i) => i.code === 'unrecognized_keys')
  if (unknown?.code === 'unrecognized_keys') return { ok: false, message: `unknown field ${unknown.keys.map((k) => `"${k}"`).join(', ')}` }
  const issue = issues[0]!
  const path = issue.path.length === 0 ? 'the body' : issue.path.map(String).join('.')
  return { ok: false, message: `${path} ${issue.message}` }
}

function invalid (reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).send({ error: { code: 'invalid_request', message } })
}

export function adminRoutes (state: SimulatorState): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (isLoopbackPeer(request.socket.remoteAddress)) return
      await reply.code(403).send({ error: { code: 'forbidden', message: 'the simulator\'s admin routes answer only to loopback peers (127.0.0.0/8, ::1)' } })
    })

    app.get('/faults', async () => ({ faults: state.faults.list() }))

    app.post('/faults', async (request, reply) => {
      const body = parseJsonBody(AddFaultsBody, request.body, false)
      if (!body.ok) return invalid(reply, body.message)
      const text = Array.isArray(body.value.faults) ? body.value.faults.join(',') : body.value.faults
      const parsed = parseFaultRules(text, { campaignControl: state.opts.control !== undefined })
      if (!parsed.ok) return invalid(reply, `faults: ${parsed.problems.join('; ')}`)
      for (const rule of parsed.rules) state.faults.inject(rule.target, rule.fault, rule.times, rule.text)
      return { added: parsed.rules.length, faults: state.faults.list() }
    })

    app.delete('/faults', async (request, reply) => {
      const body = parseJsonBody(EmptyBody, request.body, true)
      if (!body.ok) return invalid(reply, body.message)
      return { cleared: state.faults.clear() }
    })

    app.get('/held', async () => ({ held: state.held.list() }))

    // delivered through the same handler as a POST /a2a/ that arrives now (late, but applied)
    app.post('/held/deliver', async (request, reply) => {
      const body = parseJsonBody(EmptyBody, request.body, true)
      if (!body.ok) return invalid(reply, body.message)
      return { delivered: state.held.deliver((input) => handleRpc(state, input)) }
    })

    app.post('/held/drop', async (request, reply) => {
      const body = parseJsonBody(EmptyBody, request.body, true)
      if (!body.ok) return invalid(reply, body.message)
      return { dropped: state.held.drop() }
    })
  }
}
