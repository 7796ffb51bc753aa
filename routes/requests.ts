// The mutation ledger over REST (docs/design.md#rest-interface): listing and lookup (ledger
// only; params and answers only to the request's own caller or an admin), the unresolved
// records of every campaign for admins (the ambiguous-write runbook's first step,
// docs/runbooks/ambiguous-write.md), reconcile with `request_status`, and an admin's
// acknowledgement.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  AcknowledgeBodySchema, CampaignIdSchema, RequestIdSchema, RequestListQuerySchema, RequestListSchema,
  RequestViewSchema, UnresolvedListSchema, UnresolvedQuerySchema, controlErrorResponses
} from '../schemas/control.js'

const CampaignParams = z.strictObject({ campaignId: CampaignIdSchema })
const RequestParams = z.strictObject({ campaignId: CampaignIdSchema, requestId: RequestIdSchema })
const response = { 200: RequestViewSchema, ...controlErrorResponses }

const requests: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/campaigns/:campaignId/requests', {
    config: { scope: 'read' },
    schema: { tags: ['requests'], summary: 'The campaign\'s mutation records, newest first', params: CampaignParams, querystring: RequestListQuerySchema, response: { 200: RequestListSchema, ...controlErrorResponses } }
  }, async (request) => {
    const { campaignId } = request.params
    return { campaignId, requests: await app.control.listRequests(campaignId, request.caller!, request.query) }
  })

  app.get('/v1/requests', {
    config: { scope: 'admin' },
    schema: {
      tags: ['requests'],
      summary: 'The unresolved (ambiguous or pending) mutation records of every campaign, oldest first',
      description: 'Ledger only. Oldest first, by creation time then request id; a record written while the pages are read sorts after them, so pages never shift. Pass nextCursor as cursor for the next page (null: the last page). Each record is shown whole, as to an admin.',
      querystring: UnresolvedQuerySchema,
      response: { 200: UnresolvedListSchema, ...controlErrorResponses }
    }
  }, async (request) => await app.control.listUnresolved(request.caller!, request.query))

  app.get('/v1/campaigns/:campaignId/requests/:requestId', {
    config: { scope: 'read' },
    schema: { tags: ['requests'], summary: 'One mutation record', params: RequestParams, querystring: z.strictObject({}), response }
  }, async (request) => await app.control.getRequest(request.params.campaignId, request.params.requestId, request.caller!))

  app.post('/v1/campaigns/:campaignId/requests/:requestId/reconcile', {
    config: { scope: 'control' },
    schema: {
      tags: ['requests'],
      summary: 'Ask the remote whether an ambiguous mutation was applied (request_status); never re-sends it',
      params: RequestParams,
      body: z.strictObject({}).nullish(),
      response
    }
  }, async (request) => await app.control.reconcile(request.params.campaignId, request.params.requestId, request.caller!))

  app.post('/v1/campaigns/:campaignId/requests/:requestId/acknowledge', {
    config: { scope: 'admin' },
    schema: {
      tags: ['requests'],
      summary: 'Resolve an ambiguous mutation by an admin\'s decision, where reconcile cannot',
      description: 'Allowed only when request_status is not advertised or a reconcile has failed; assume_not_applied for a record with an epoch needs a higher epoch on the remote (else 409 acknowledge_unsafe).',
      params: RequestParams,
      body: AcknowledgeBodySchema,
      response
    }
  }, async (request) => await app.control.acknowledge(request.params.campaignId, request.params.requestId, request.caller!, request.body))
}

export default requests
