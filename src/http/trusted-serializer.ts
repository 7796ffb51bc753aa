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

/**
 * The Argus reads' serializer: coalesced reads (docs/design.md#coalescing) resolve every waiter
 * with the one answer object the shared upstream call produced, which nothing mutates after; its
 * text is made once and handed to each waiter as the same string — which the secret guard, having
 * found it clean for the first, passes for the others by identity (src/http/secret-guard.ts).
 * One entry, per route: the last answer object and its text.
 */
export const sharedAnswerSerializer: FastifySerializerCompiler<unknown> = () => {
  let last: unknown
  let text = ''
  return (data: unknown): string => {
    if (data !== last || typeof data !== 'object' || data === null) {
      text = JSON.stringify(data)
      last = data
    }
    return text
  }
}
