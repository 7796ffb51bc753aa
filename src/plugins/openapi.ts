// The OpenAPI document (STYLE: one zod schema gives validation, types and the document):
// generated from the routes' schemas, served at /openapi.json and browsable at /docs.
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      info: { title: 'openoperator-gateway', version: '0.1.0', description: 'Supervise and control OpenOperator training campaigns over A2A.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }]
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'openapi' })
