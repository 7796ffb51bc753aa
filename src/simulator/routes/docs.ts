// The discovery documents of the seed: /docs (html), /docs/a2a.json (machine-readable) and
// FastA2A's own /a2a/docs page. Their content restates the seed, nothing more.
import { ARGUS_URN } from '../extensions/argus.js'
import type { ResolvedOptions } from '../options.js'

// the seed's three, plus /a2a/tasks/cancel, the third method name a client might mistake for a path
export const WRONG_ROUTES = ['/a2a/message/send', '/a2a/tasks/get', '/a2a/tasks/cancel', '/a2a/agent-card']

export function a2aDocs (opts: ResolvedOptions): Record<string, unknown> {
  const auth = opts.authSchemes.map((scheme) =>
    scheme === 'bearer'
      ? { type: 'http', scheme: 'bearer', header: 'Authorization', format: 'Bearer <secret>' }
      : { type: 'apiKey', in: 'header', name: 'X-API-KEY', format: '<secret>' }
  )
  return {
    protocol: 'A2A JSON-RPC 2.0 (FastA2A 0.5)',
    endpoint: '/a2a/',
    agentCard: ['/a2a/.well-known/agent.json', '/a2a/.well-known/agent-card.json'],
    methods: ['message/send', 'tasks/get', 'tasks/cancel'],
    methodsAreNotPaths: WRONG_ROUTES,
    wireCasing: 'camelCase',
    requiredCamelCaseFields: ['messageId', 'contextId', 'acceptedOutputModes', 'historyLength'],
    authentication: { required: opts.secret !== undefined, schemes: auth },
    extensions: [
      {
        uri: ARGUS_URN,
        enabled: opts.argusEnabled,
        operations: ['supervisor.health', 'supervisor.status', 'campaign.list'],
        envelope: { metadataKey: ARGUS_URN, fields: ['operation', 'requestId'], legacyFields: ['request_id'] },
        errors: ['invalid_argus_envelope', 'argus_supervisor_disabled', 'unsupported_argus_operation', 'argus_supervisor_unavailable']
      }
    ]
  }
}

export const DOCS_HTML = `<!doctype html>
<html><head><title>OpenOperator</title></head><body>
<h1>OpenOperator A2A integration</h1>
<p>JSON-RPC endpoint: <code>POST /a2a/</code>. <code>message/send</code>, <code>tasks/get</code> and
<code>tasks/cancel</code> are method names in the POST body, not URL paths.</p>
<p>Machine-readable description: <a href="/docs/a2a.json">/docs/a2a.json</a>.
Agent card: <a href="/a2a/.well-known/agent.json">/a2a/.well-known/agent.json</a>.</p>
</body></html>
`

export const FASTA2A_DOCS_HTML = `<!doctype html>
<html><head><title>FastA2A</title></head><body>
<h1>FastA2A</h1><p>Agent-to-agent endpoint served at <code>/a2a/</code>.</p>
</body></html>
`
