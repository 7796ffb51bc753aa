// The three Argus reads (docs/design.md#argus-reads): no query parameters, `{operation,
// requestId, result}`.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ArgusOperation } from '../src/argus/envelope.js'
import { ArgusReadResponseSchema } from '../schemas/rest.js'
import { ARGUS_READ, AUTHENTICATED, answers } from '../schemas/responses.js'
import { sharedAnswerSerializer } from '../src/http/trusted-serializer.js'

const ROUTES: Array<[string, ArgusOperation, string, string]> = [
  ['/v1/supervisor/health', 'supervisor.health', 'getSupervisorHealth', 'Argus supervisor health'],
  ['/v1/supervisor/status', 'supervisor.status', 'getSupervisorStatus', 'Argus supervisor status'],
  ['/v1/campaigns', 'campaign.list', 'listCampaigns', 'Argus campaign list']
]

const supervisor: FastifyPluginAsyncZod = async (app) => {
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
        description: `One ${operation} read of the remote's Argus supervisor; identical reads in flight share one upstream call.`,
        querystring: z.strictObject({}),
        // eslint-disable-next-line no-restricted-syntax -- the route's schema, built once at startup
        ...answers({
          200: { schema: ArgusReadResponseSchema, description: `The remote's ${operation} payload as it answered it, with the request id the read carried.` }
        }, [...AUTHENTICATED, ...ARGUS_READ])
      }
    // the read's promise as it is, no async wrapper: Fastify awaits it (docs/design.md#hot-path)
    }, () => app.argus.read(operation))
  }
}

export default supervisor
