// The remote as the gateway sees it (docs/design.md#discovery-and-capabilities,
// docs/design.md#rest-interface): card summary, mode, every capability with its state and
// reason, what is missing for controller mode, and a manual refresh.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { DiscoverySnapshot } from '../src/discovery/discovery.js'
import { skillIds } from '../schemas/card.js'
import { UpstreamViewSchema } from '../schemas/rest.js'
import { AUTHENTICATED, WITH_BODY, answers } from '../schemas/responses.js'

const str = (v: unknown): string | null => typeof v === 'string' ? v : null

export function upstreamView (s: DiscoverySnapshot) {
  return {
    mode: s.mode,
    card: s.card === undefined
      ? null
      : {
          name: s.card.name,
          version: str(s.card.version),
          protocolVersion: str(s.card.protocolVersion),
          path: s.cardPath ?? '',
          sha256: s.cardHash ?? '',
          skillIds: [...skillIds(s.card)]
        },
    cardUrlMismatch: s.cardUrlMismatch,
    protocol: s.protocol === undefined
      ? null
      : {
          version: s.protocol.version ?? null,
          reason: s.protocol.reason,
          refusedVersion: s.protocol.refused ?? null,
          refusedUntil: s.protocol.refusedUntil ?? null,
          interfaces: s.protocol.interfaces.map((i) => ({ protocolBinding: i.binding, protocolVersion: i.version, url: i.url, atEndpoint: i.atEndpoint }))
        },
    signature: s.signature === undefined
      ? null
      : {
          state: s.signature.state,
          keyId: s.signature.state === 'verified' ? s.signature.keyId : null,
          algorithm: s.signature.state === 'verified' ? s.signature.algorithm : null,
          reason: s.signature.reason
        },
    nextRefreshAt: s.nextRefreshAt ?? null,
    lastRefreshAt: s.lastRefreshAt ?? null,
    lastSuccessAt: s.lastSuccessAt ?? null,
    consecutiveFailures: s.consecutiveFailures,
    lastError: s.lastError ?? null,
    capabilities: s.capabilities,
    missingPrerequisites: s.missingPrerequisites
  }
}

const upstream: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/upstream', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getUpstream',
      tags: ['upstream'],
      summary: 'Card, mode and capabilities',
      ...answers({
        200: { schema: UpstreamViewSchema, description: 'The remote as discovery holds it now: the card summary, the mode, every capability with its state and reason, and what controller mode still misses. Read from memory: nothing is sent to the remote.' }
      }, AUTHENTICATED)
    }
  }, async () => upstreamView(app.discovery.snapshot()))

  app.post('/v1/upstream/refresh', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'refreshUpstream',
      tags: ['upstream'],
      summary: 'Re-run discovery now',
      description: 'Fetches the agent card again (one refresh at a time: a refresh already running is shared). A failed fetch is not an error of this call: it keeps the last good card and shows in lastError and consecutiveFailures.',
      body: z.strictObject({}).nullish(),
      ...answers({
        200: { schema: UpstreamViewSchema, description: 'The remote as discovery holds it after the refresh, as GET /v1/upstream answers it.' }
      }, [...AUTHENTICATED, ...WITH_BODY])
    }
  }, async () => upstreamView(await app.discovery.refresh()))
}

export default upstream
