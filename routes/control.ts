// Campaign control over REST (docs/design.md#rest-interface): the lease read and the six
// mutations. The body rules (constraints, reserved fields) and the snake_case aliases run
// before the strict schema; from the request id on, the control plane's pipeline decides.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { checkBodyRules, normaliseAliases } from '../src/control/rules.js'
import type { MutationAnswer } from '../src/control/pipeline.js'
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

/** constraints and reserved fields are refused before the schema sees the body */
async function bodyRules (request: FastifyRequest): Promise<void> {
  checkBodyRules(request.body)
  request.body = normaliseAliases(request.body)
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
      preValidation: bodyRules,
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
        idempotencyKey: request.headers['idempotency-key']
      })
      return send(reply, answer)
    })
  }
}

export default control
