// The serializer of the hot read routes (docs/design.md#hot-path): plain JSON.stringify for
// answers the gateway itself builds field by field — the task projection, the Argus read
// envelope, the error body — instead of fastify-type-provider-zod's serializer, which parses every
// answer against its zod schema (a walk and a copy) before stringifying it. The route keeps its
// response schemas: they still document the answer in /openapi.json. Routes whose answers pass
// through objects the gateway did not build field by field keep the zod serializer, whose strip
// of stray fields is their safety net.
import type { FastifySerializerCompiler } from 'fastify/types/schema.js'

const stringify = (data: unknown): string => JSON.stringify(data)

export const trustedSerializer: FastifySerializerCompiler<unknown> = () => stringify
