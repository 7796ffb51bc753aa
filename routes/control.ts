// Campaign control over REST (docs/design.md#rest-interface): the lease read and the six
// mutations. A mutation body is validated in one place, the control plane's pipeline (body
// rules, aliases, then the strict schema); the route's body schema only documents it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { z } from 'zod'
import type { MutationAnswer } from '../src/control/pipeline.js'
import { validatorCompiler } from '../src/http/errors.js'
import { trustedSerializer } from '../src/http/trusted-serializer.js'
import type { MutationOperation } from '../src/ledger/types.js'
import {
  AcceptedAnswerSchema, CAMPAIGN_ID_EXAMPLE, EXAMPLE_REQUEST_IDS, CampaignIdSchema, CanceledAnswerSchema, ControlViewSchema, LeaseAnswerSchema,
  MUTATION_BODY_SCHEMAS, PrunedAnswerSchema, ReleasedAnswerSchema, RequestViewSchema, SubmittedAnswerSchema
} from '../schemas/control.js'
import { AUTHENTICATED, MUTATION, NEEDS_LEASE, PER_CAMPAIGN, UPSTREAM_READ, USES_LEDGER, WITH_PATH_PARAMS, answers, type OkAnswer } from '../schemas/responses.js'
import type { ErrorCode } from '../src/core/errors.js'

const Params = z.strictObject({ campaignId: CampaignIdSchema.meta({ example: CAMPAIGN_ID_EXAMPLE }) })
/**
 * each mutation's headers, the Idempotency-Key's example that of its own body's requestId: a
 * "Try it out" fills in both, and two ids that differ are 400 conflicting_fields
 */
const headersOf = (op: MutationOperation) => z.looseObject({
  'idempotency-key': z.string().optional()
    .describe('The request id, instead of requestId in the body (8-128 characters of [A-Za-z0-9._:-]); both given, they must agree.')
    .meta({ example: EXAMPLE_REQUEST_IDS[op] })
})

/**
 * a resolved request replays as its record (docs/design.md#reconcile-and-acknowledge), an applied
 * one retention pruned as its final state (docs/design.md#request-ids-are-forever). The record
 * comes before the pruned answer: the first that fits is what is sent, and a pruned resolved
 * record would fit the pruned answer too, losing its resolution
 */
const or = <T extends z.ZodType>(s: T) => z.union([s, RequestViewSchema, PrunedAnswerSchema])
const REPLAY_OF_RESOLVED = ' A request id whose ambiguous outcome was since resolved answers its Request record instead (the one of the three with `caller`; its state applied or not_applied); an applied one whose record retention pruned, its PrunedAnswer (`pruned: true`). The typed client\'s mutationResult() tells the three apart.'

const MUTATIONS: Array<{ op: MutationOperation; operationId: string; path: string; summary: string; ok: Record<number, OkAnswer>; errors: readonly ErrorCode[]; scope?: 'admin' }> = [
  {
    op: 'claim',
    operationId: 'claimControl',
    path: 'control/claim',
    summary: 'Claim the campaign\'s lease (claim_control)',
    ok: { 200: { schema: or(LeaseAnswerSchema), description: `The remote granted the lease: the caller is the campaign's controller until lease.expiresAt, at lease.epoch.${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, 'upstream_invalid_response']
  },
  {
    op: 'renew',
    operationId: 'renewControl',
    path: 'control/renew',
    summary: 'Renew the lease, then read it back (renew_control + read_control)',
    ok: { 200: { schema: or(LeaseAnswerSchema), description: `The remote renewed the lease and read_control shows exactly the renewed lease.${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, ...NEEDS_LEASE, 'lease_readback_mismatch']
  },
  {
    op: 'release',
    operationId: 'releaseControl',
    path: 'control/release',
    summary: 'Release the lease (release_control)',
    ok: { 200: { schema: or(ReleasedAnswerSchema), description: `The remote released the lease: the campaign has no controller.${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, ...NEEDS_LEASE]
  },
  {
    op: 'submit',
    operationId: 'submitWork',
    path: 'submissions',
    summary: 'Submit work: non-blocking message/send; the task becomes the bound task',
    ok: {
      // the pruned answer first: a submitted answer never carries `pruned`, a pruned one would fit the submitted answer stripped of it
      202: { schema: z.union([PrunedAnswerSchema, SubmittedAnswerSchema]), description: 'The remote accepted the work as a task, which is now the campaign\'s bound task (the one cancel targets); follow it with GET /v1/tasks/{taskId}. A replay of a submission whose record retention pruned answers its PrunedAnswer (`pruned: true`).' },
      200: { schema: RequestViewSchema, description: 'A replay of a request id whose ambiguous outcome was since resolved: its Request record (state applied or not_applied). The typed client\'s mutationResult() tells it from the 202 answers.' }
    },
    errors: [...MUTATION, ...NEEDS_LEASE]
  },
  {
    op: 'intervene',
    operationId: 'intervene',
    path: 'interventions',
    summary: 'Send an intervention (intervene)',
    ok: { 200: { schema: or(AcceptedAnswerSchema), description: `The remote accepted the intervention.${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, ...NEEDS_LEASE]
  },
  {
    op: 'cancel',
    operationId: 'cancelTask',
    path: 'cancel',
    summary: 'Cancel the bound task (tasks/get, then the advertised cancel)',
    ok: { 200: { schema: or(CanceledAnswerSchema), description: `The remote canceled the campaign's bound task; state is the task's state as the remote answered the cancel.${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, ...NEEDS_LEASE, 'no_bound_task']
  },
  {
    op: 'fence',
    operationId: 'fenceControl',
    path: 'control/fence',
    scope: 'admin',
    summary: 'An admin claims a campaign blocked by an ambiguous record, under the admin\'s own controller id (claim_control)',
    ok: { 200: { schema: or(LeaseAnswerSchema), description: `The remote granted the admin the lease at a higher epoch: every record of the campaign under a lower epoch can no longer apply, and may be acknowledged assume_not_applied (a cancel still after its deadline).${REPLAY_OF_RESOLVED}` } },
    errors: [...MUTATION, 'upstream_invalid_response']
  }
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
    schema: {
      operationId: 'getControl',
      tags: ['control'],
      summary: 'The campaign\'s lease as the remote reports it now (read_control)',
      description: 'Always a fresh read_control, never coalesced; its answer becomes the lease the gateway knows.',
      params: Params,
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: ControlViewSchema, description: 'The lease the remote reports now; lease is null when the campaign has none.' }
      }, [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...USES_LEDGER, ...UPSTREAM_READ, ...PER_CAMPAIGN])
    }
  }, async (request) => ({ campaignId: request.params.campaignId, lease: await app.control.readControl(request.params.campaignId, request.caller!) }))

  for (const m of MUTATIONS) {
    app.post(`/v1/campaigns/:campaignId/${m.path}`, {
      config: { scope: m.scope ?? 'control' },
      validatorCompiler: bodyToPipeline,
      // every answer is built field by field by the gateway — the effect's answer, a stored one of
      // those, a record's view, an error body — so plain JSON.stringify (docs/design.md#hot-path)
      serializerCompiler: trustedSerializer,
      schema: {
        operationId: m.operationId,
        tags: ['control'],
        summary: m.summary,
        description: m.op === 'fence'
          ? 'The runbook\'s way out where the remote has no request_status (docs/runbooks/ambiguous-write.md): a claim, allowed while the campaign is blocked by an ambiguous record (never while one is pending). Single-shot as every mutation; its own outcome is reconcilable.'
          : 'Single-shot: sent at most once; a repeated request id replays the stored answer with Idempotent-Replayed: true. An ambiguous outcome is 504 ambiguous_write with the reconcile path.',
        params: Params,
        headers: headersOf(m.op),
        body: MUTATION_BODY_SCHEMAS[m.op],
        ...answers(m.ok, m.errors, { replays: true })
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
