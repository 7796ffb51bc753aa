// The OpenAPI document (STYLE: one zod schema gives validation, types and the document):
// generated from the routes' schemas and their declared answers (src/openapi/document.ts),
// served at /openapi.json and browsable at /docs. The typed client in clients/typescript/ is
// generated from this same document (`npm run client:generate`).
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { transform, transformObject } from '../openapi/document.js'

export const OPENAPI_INFO = {
  title: 'openoperator-gateway',
  version: '0.1.0',
  description: [
    'Supervise and control OpenOperator training campaigns over A2A.',
    '',
    'Every failure is `{"error": {"code", "message", "retryable", "requestId"?, "missingPrerequisites"?, "reconcile"?}}` with an `x-request-id` header; each operation lists the codes it can answer, by status. `retryable` is true only where sending the same request again may succeed (after `Retry-After` when given).',
    '',
    'A mutation is sent to the remote at most once. Its request id (`requestId` in the body, or the `Idempotency-Key` header) makes a repeat safe: a request id used before answers the stored answer with `Idempotent-Replayed: true`, and nothing is sent again. An outcome the gateway cannot know is 504 `ambiguous_write` with the path to reconcile it.'
  ].join('\n')
}

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      info: OPENAPI_INFO,
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A caller token (GATEWAY_CALLERS); each route needs the read, control or admin scope.' } } },
      security: [{ bearer: [] }]
    },
    transform,
    transformObject
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'openapi' })
