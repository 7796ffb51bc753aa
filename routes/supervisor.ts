// The three Argus reads (docs/design.md#argus-reads): no query parameters, `{operation,
// requestId, result}`. The campaign list shows a caller with grants only the campaigns it may
// read (docs/design.md#grants).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ArgusOperation } from '../src/argus/envelope.js'
import type { ArgusReadResult } from '../src/argus/reader.js'
import { ArgusReadResponseSchema } from '../schemas/rest.js'
import { ARGUS_READ, AUTHENTICATED, answers } from '../schemas/responses.js'
import { sharedAnswerSerializer } from '../src/http/trusted-serializer.js'

const ROUTES: Array<[string, ArgusOperation, string, string]> = [
  ['/v1/supervisor/health', 'supervisor.health', 'getSupervisorHealth', 'Argus supervisor health'],
  ['/v1/supervisor/status', 'supervisor.status', 'getSupervisorStatus', 'Argus supervisor status'],
  ['/v1/campaigns', 'campaign.list', 'listCampaigns', 'Argus campaign list']
]

const supervisor: FastifyPluginAsyncZod = async (app) => {
  const grants = app.control.grants
  /** every list read teaches the campaigns' projects; a caller that reaches every campaign gets the shared answer itself */
  const listFor = (caller: Parameters<typeof grants.campaignList>[0], a: ArgusReadResult): ArgusReadResult => {
    const result = grants.campaignList(caller, a.result) as ArgusReadResult['result']
    return result === a.result ? a : { operation: a.operation, requestId: a.requestId, result }
  }
  for (const [url, operation, operationId, summary] of ROUTES) {
    app.get(url, {
      config: { scope: 'read' },
      // built by the reader: JSON.stringify, not the zod serializer, once per shared answer
      // (docs/design.md#hot-path)
      serializerCompiler: sharedAnswerSerializer,
      schema: {
        operationId,
        tags: ['argus'],
        summary,
        description: operation === 'campaign.list'
          ? `One ${operation} read of the remote's Argus supervisor; identical reads in flight share one upstream call. To a caller whose grants are in force, result holds only \`campaigns\` (the entries of the campaigns it may read, by campaign_id or by the entry's project) beside the payload's operation and requestId.`
          : `One ${operation} read of the remote's Argus supervisor; identical reads in flight share one upstream call.`,
        querystring: z.strictObject({}),
        // eslint-disable-next-line no-restricted-syntax -- the route's schema, built once at startup
        ...answers({
          200: { schema: ArgusReadResponseSchema, description: `The remote's ${operation} payload as it answered it, with the request id the read carried.` }
        }, [...AUTHENTICATED, ...ARGUS_READ])
      }
    // the read's promise as it is, no async wrapper: Fastify awaits it (docs/design.md#hot-path)
    }, operation === 'campaign.list' ? (request) => app.argus.read(operation).then((a) => listFor(request.caller!, a)) : () => app.argus.read(operation))
  }
}

export default supervisor
