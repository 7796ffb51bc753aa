// Campaign control over REST (docs/design.md#rest-interface): the lease read and the six
// mutations. A mutation body is validated in one place, the control plane's pipeline (body
// rules, aliases, then the strict schema); the route's body schema only documents it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { z } from 'zod'
import type { MutationAnswer } from '../src/control/pipeline.js'
import { validatorCompiler } from '../src/plugins/error-handler.js'
import type { MutationOperation } from '../src/ledger/types.js'
import {
  AcceptedAnswerSchema, CampaignIdSchema, CanceledAnswerSchema, ControlViewSchema, LeaseAnswerSchema,
  MUTATION_BODY_SCHEMAS, ReleasedAnswerSchema, RequestViewSchema, SubmittedAnswerSchema, controlErrorResponses
} from '../schemas/control.js'

const Params = z.strictObject({ campaignId: CampaignIdSchema })
const Headers = z.looseObject({ 'idempotency-key': z.string().optional().describe('the request id, instead of requestId in the body') })

/** a resolved request replays as its record (docs/design.md#reconcile-and-acknowledge) */
const or = <T extends z.ZodType>(s: T) => z.union([s, RequestViewSchema])

const MUTATIONS: Array<{ op: MutationOperation; path: string; summary: string; ok: Record<number, z.ZodType> }> = [
  { op: 'claim', path: 'control/claim', summary: 'Claim the campaign\'s lease (claim_control)', ok: { 200: or(LeaseAnswerSchema) } },
  { op: 'renew', path: 'control/renew', summary: 'Renew the lease, then read it back (renew_control + read_control)', ok: { 200: or(LeaseAnswerSchema) } },
  { op: 'release', path: 'control/release', summary: 'Release the lease (release_control)', ok: { 200: or(ReleasedAnswerSchema) } },
  { op: 'submit', path: 'submissions', summary: 'Submit work: non-blocking message/send; the task becomes the bound task', ok: { 202: SubmittedAnswerSchema, 200: RequestViewSchema } },
  { op: 'intervene', path: 'interventions', summary: 'Send an intervention (intervene)', ok: { 200: or(AcceptedAnswerSchema) } },
  { op: 'cancel', path: 'cancel', summary: 'Cancel the bound task (tasks/get, then the advertised cancel)', ok: { 200: or(CanceledAnswerSchema) } }
]

/**
 * The pipeline owns the body (its rules come before the schema, and no recursive validator may
 * see a body before its depth is bounded); params and headers are validated here as elsewhere.
 */
const bodyToPipeline: FastifySchemaCompiler<any> = (route) => // eslint-disable-line @typescript-eslint/no-explicit-any -- the compiler is handed every part's schema
  route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : validatorCompiler(route)

/** every Idempotency-Key header as sent: Node joins repeated ones into one string */
function idempotencyKeys (request: FastifyRequest): string | string[] | undefined {
  const raw = request.raw.rawHeaders
  const found: string[] = []
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'idempotency-key') found.push(raw[i + 1]!)
  }
  return found.length > 1 ? found : found[0]
}

function send (reply: FastifyReply, a: MutationAnswer): FastifyReply {
  if (a.replayed) reply.header('idempotent-replayed', 'true')
  return reply.code(a.httpStatus).send(a.body)
}

const control: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/campaigns/:campaignId/control', {
    config: { scope: 'read' },
    schema: { tags: ['control'], summary: 'The campaign\'s lease as the remote reports it now (read_control)', params: Params, querystring: z.strictObject({}), response: { 200: ControlViewSchema, ...controlErrorResponses } }
  }, async (request) => ({ campaignId: request.params.campaignId, lease: await app.control.readControl(request.params.campaignId) }))

  for (const m of MUTATIONS) {
    app.post(`/v1/campaigns/:campaignId/${m.path}`, {
      config: { scope: 'control' },
      validatorCompiler: bodyToPipeline,
      schema: {
        tags: ['control'],
        summary: m.summary,
        description: 'Single-shot: sent at most once; a repeated request id replays the stored answer with Idempotent-Replayed: true. An ambiguous outcome is 504 ambiguous_write with the reconcile path.',
        params: Params,
        headers: Headers,
        body: MUTATION_BODY_SCHEMAS[m.op],
        response: { ...m.ok, ...controlErrorResponses }
      }
    }, async (request, reply) => {
      const answer = await app.control.mutate({
        operation: m.op,
        campaignId: request.params.campaignId,
        // the route's scope guarantees an authenticated caller
        caller: request.caller!,
        body: request.body,
        idempotencyKey: idempotencyKeys(request)
      })
      return send(reply, answer)
    })
  }
}

export default control
