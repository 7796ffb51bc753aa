// The mutation ledger over REST (docs/design.md#rest-interface): listing and lookup (ledger
// only; params and answers only to the request's own caller or an admin), the unresolved
// records of every campaign for admins (the ambiguous-write runbook's first step,
// docs/runbooks/ambiguous-write.md), reconcile with `request_status`, and an admin's
// acknowledgement.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  AcknowledgeBodySchema, CAMPAIGN_ID_EXAMPLE, CampaignIdSchema, REQUEST_ID_EXAMPLE, RequestIdSchema, RequestListQuerySchema, RequestListSchema,
  RequestViewSchema, UnresolvedListSchema, UnresolvedQuerySchema
} from '../schemas/control.js'
import { AUTHENTICATED, PER_CAMPAIGN, UPSTREAM_READ, USES_LEDGER, WITH_BODY, WITH_PATH_PARAMS, answers } from '../schemas/responses.js'

const CampaignId = CampaignIdSchema.meta({ example: CAMPAIGN_ID_EXAMPLE })
const CampaignParams = z.strictObject({ campaignId: CampaignId })
const RequestParams = z.strictObject({ campaignId: CampaignId, requestId: RequestIdSchema.meta({ example: REQUEST_ID_EXAMPLE }) })
/** a route about one record: it may not exist (404), or be still in flight (409) */
const ONE_RECORD = [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...USES_LEDGER, ...PER_CAMPAIGN, 'not_found'] as const
const RESOLVED = 'The record as it stands now, resolved: state is applied or not_applied and resolution says who decided, when and how. A record that was not ambiguous is answered as it stands, unchanged.'

const requests: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/campaigns/:campaignId/requests', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listCampaignRequests',
      tags: ['requests'],
      summary: 'The campaign\'s mutation records, newest first',
      description: 'Ledger only: nothing is sent to the remote. Params, answers and outcomes only to the request\'s own caller or an admin.',
      params: CampaignParams,
      querystring: RequestListQuerySchema,
      ...answers({
        200: { schema: RequestListSchema, description: 'At most limit records of the campaign, newest first (none: an empty list).' }
      }, [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...USES_LEDGER, ...PER_CAMPAIGN])
    }
  }, async (request) => {
    const { campaignId } = request.params
    return { campaignId, requests: await app.control.listRequests(campaignId, request.caller!, request.query) }
  })

  app.get('/v1/requests', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'listUnresolvedRequests',
      tags: ['requests'],
      summary: 'The unresolved (ambiguous or pending) mutation records of every campaign, oldest first',
      description: 'Ledger only. Oldest first, by creation time then request id; a record written while the pages are read sorts after them, so pages never shift. Pass nextCursor as cursor for the next page (null: the last page). Each record is shown whole, as to an admin; admins keep every campaign, so no grant narrows it.',
      querystring: UnresolvedQuerySchema,
      ...answers({
        200: { schema: UnresolvedListSchema, description: 'One page of unresolved records, oldest first; nextCursor is null on the last page.' }
      }, [...AUTHENTICATED, ...USES_LEDGER])
    }
  }, async (request) => await app.control.listUnresolved(request.caller!, request.query))

  app.get('/v1/campaigns/:campaignId/requests/:requestId', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getRequest',
      tags: ['requests'],
      summary: 'One mutation record',
      description: 'Ledger only: nothing is sent to the remote.',
      params: RequestParams,
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: RequestViewSchema, description: 'The record: whole to its own caller or an admin, only its id, operation, state, caller and times to anyone else with read.' }
      }, ONE_RECORD)
    }
  }, async (request) => await app.control.getRequest(request.params.campaignId, request.params.requestId, request.caller!))

  app.post('/v1/campaigns/:campaignId/requests/:requestId/reconcile', {
    config: { scope: 'control' },
    schema: {
      operationId: 'reconcileRequest',
      tags: ['requests'],
      summary: 'Ask the remote whether an ambiguous mutation was applied (request_status); never re-sends it',
      description: 'One request_status with the original id. applied settles the record at once; not_applied only once the record\'s deadline has passed (before it: 409 reconcile_too_early with Retry-After). A failed reconcile counts in reconcileFailures.',
      params: RequestParams,
      body: z.strictObject({}).nullish(),
      ...answers({ 200: { schema: RequestViewSchema, description: RESOLVED } }, [...ONE_RECORD, ...WITH_BODY, ...UPSTREAM_READ, 'request_in_flight', 'reconcile_too_early'])
    }
  }, async (request) => await app.control.reconcile(request.params.campaignId, request.params.requestId, request.caller!))

  app.post('/v1/campaigns/:campaignId/requests/:requestId/acknowledge', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'acknowledgeRequest',
      tags: ['requests'],
      summary: 'Resolve an ambiguous mutation by an admin\'s decision, where reconcile cannot',
      description: 'Allowed only when request_status is not advertised or a reconcile has failed; assume_not_applied for a record with an epoch needs a higher epoch on the remote (else 409 acknowledge_unsafe).',
      params: RequestParams,
      body: AcknowledgeBodySchema,
      ...answers({ 200: { schema: RequestViewSchema, description: RESOLVED.replace('A record that was not ambiguous is answered as it stands, unchanged.', 'The note is kept with the resolution.') } }, [...ONE_RECORD, ...WITH_BODY, ...UPSTREAM_READ, 'request_in_flight', 'acknowledge_unsafe', 'reconcile_too_early'])
    }
  }, async (request) => await app.control.acknowledge(request.params.campaignId, request.params.requestId, request.caller!, request.body))
}

export default requests
