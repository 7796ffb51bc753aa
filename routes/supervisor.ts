// The three Argus reads (docs/design.md#argus-reads): no query parameters, `{operation,
// requestId, result}`.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ArgusOperation } from '../src/argus/envelope.js'
import { ArgusReadResponseSchema, errorResponses } from '../schemas/rest.js'
import { trustedSerializer } from '../src/trusted-serializer.js'

const ROUTES: Array<[string, ArgusOperation, string]> = [
  ['/v1/supervisor/health', 'supervisor.health', 'Argus supervisor health'],
  ['/v1/supervisor/status', 'supervisor.status', 'Argus supervisor status'],
  ['/v1/campaigns', 'campaign.list', 'Argus campaign list']
]

const supervisor: FastifyPluginAsyncZod = async (app) => {
  for (const [url, operation, summary] of ROUTES) {
    app.get(url, {
      config: { scope: 'read' },
      // built by the reader: JSON.stringify, not the zod serializer (docs/design.md#hot-path)
      serializerCompiler: trustedSerializer,
      schema: { tags: ['argus'], summary, querystring: z.strictObject({}), response: { 200: ArgusReadResponseSchema, ...errorResponses } }
    }, async () => await app.argus.read(operation))
  }
}

export default supervisor
