// Metrics on their own listener (docs/design.md#metrics): route templates and enums as labels,
// never ids; OpenAPI generated from the zod schemas.
import { describe, expect } from 'vitest'
import { it } from '../helpers/fixtures.js'
import { call } from '../helpers/http.js'

describe('metrics', () => {
  it('request and upstream counts handed over at each scrape add up: every request once, none twice', async ({ startPair }) => {
    const { gw } = await startPair({ sim: { profile: 'fasta2a' } })
    const count = (text: string, re: RegExp): number => Number(re.exec(text)?.[1] ?? 0)
    const served = /gateway_http_requests_total\{route="\/v1\/supervisor\/health",method="GET",status="200"\} (\d+)/
    const upstream = /gateway_upstream_requests_total\{rpc_method="supervisor.health",outcome="ok"\} (\d+)/
    for (let i = 0; i < 3; i++) expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
    const first = (await call(`${gw.metricsUrl}/metrics`)).text
    expect(count(first, served)).toBe(3)
    expect(count(first, upstream)).toBe(3)
    for (let i = 0; i < 2; i++) expect((await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })).status).toBe(200)
    // past the exposition's one-second cache (src/server.ts)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const second = (await call(`${gw.metricsUrl}/metrics`)).text
    expect(count(second, served)).toBe(5)
    expect(count(second, upstream)).toBe(5)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(count((await call(`${gw.metricsUrl}/metrics`)).text, served)).toBe(5)
  })

  it('exposes the contract families with bounded labels', async ({ startPair }) => {
    const { gw } = await startPair({ sim: { profile: 'fasta2a' } })
    await call(`${gw.url}/v1/tasks/task-demo-1`, { token: gw.tokens.reader })
    await call(`${gw.url}/v1/tasks/unknown-task-77`, { token: gw.tokens.reader })
    await call(`${gw.url}/v1/supervisor/health`, { token: gw.tokens.reader })
    await call(`${gw.url}/no/such/route-55`)
    const text = (await call(`${gw.metricsUrl}/metrics`)).text
    expect(text).toMatch(/gateway_http_requests_total\{route="\/v1\/tasks\/:taskId",method="GET",status="200"\} 1/)
    expect(text).toMatch(/gateway_http_requests_total\{route="\/v1\/tasks\/:taskId",method="GET",status="404"\} 1/)
    expect(text).toMatch(/gateway_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/)
    expect(text).toMatch(/gateway_upstream_requests_total\{rpc_method="tasks.get",outcome="ok"\} [1-9]/)
    expect(text).toMatch(/gateway_upstream_requests_total\{rpc_method="tasks.get",outcome="rpc_error"\} 1/)
    expect(text).toMatch(/gateway_upstream_requests_total\{rpc_method="supervisor.health",outcome="ok"\} 1/)
    expect(text).toMatch(/gateway_upstream_request_duration_seconds_count\{rpc_method="agent_card"\} \d/)
    expect(text).toMatch(/gateway_discovery_total\{outcome="ok"\} 1/)
    expect(text).toMatch(/gateway_capability_available\{capability="argus.supervisor.health"\} 1/)
    expect(text).toMatch(/gateway_capability_available\{capability="control.claim_control"\} 0/)
    expect(text).toMatch(/gateway_controller_mode 0/)
    expect(text).toMatch(/gateway_read_coalesced_total 0/)
    expect(text).toMatch(/# TYPE gateway_mutations_total counter/)
    expect(text).toMatch(/gateway_ambiguous_mutations 0/)
    expect(text).toMatch(/process_cpu_user_seconds_total/)
    for (const id of ['task-demo-1', 'unknown-task-77', 'route-55', 'argus-']) expect(text).not.toContain(id)
    // the API listener does not serve metrics
    expect((await call(`${gw.url}/metrics`)).status).toBe(404)
  })
})

describe('OpenAPI', () => {
  it('is generated from the schemas and served with a docs page', async ({ gw }) => {
    const spec = (await call(`${gw.url}/openapi.json`)).body
    expect(spec.openapi).toMatch(/^3\./)
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/a2a/',
      '/a2a/.well-known/agent-card.json',
      '/a2a/.well-known/agent.json',
      '/a2a/.well-known/jwks.json',
      '/v1/admin/callers',
      '/v1/admin/controllers',
      '/v1/admin/controllers/{controllerId}',
      '/v1/admin/ledger/backup',
      '/v1/campaigns',
      '/v1/campaigns/{campaignId}/cancel',
      '/v1/campaigns/{campaignId}/control',
      '/v1/campaigns/{campaignId}/control/claim',
      '/v1/campaigns/{campaignId}/control/fence',
      '/v1/campaigns/{campaignId}/control/release',
      '/v1/campaigns/{campaignId}/control/renew',
      '/v1/campaigns/{campaignId}/interventions',
      '/v1/campaigns/{campaignId}/requests',
      '/v1/campaigns/{campaignId}/requests/{requestId}',
      '/v1/campaigns/{campaignId}/requests/{requestId}/acknowledge',
      '/v1/campaigns/{campaignId}/requests/{requestId}/reconcile',
      '/v1/campaigns/{campaignId}/submissions',
      '/v1/requests',
      '/v1/supervisor/health', '/v1/supervisor/status', '/v1/tasks/{taskId}', '/v1/upstream', '/v1/upstream/refresh'
    ])
    expect(JSON.stringify(spec.paths['/v1/tasks/{taskId}'])).toContain('#/components/schemas/TaskProjection')
    expect(Object.keys(spec.components.schemas.TaskProjection.properties)).toContain('outcomeScope')
    const docs = await call(`${gw.url}/docs/`)
    expect(docs.status).toBe(200)
    expect(docs.text).toContain('swagger')
  })

  it('a refresh body with unknown keys is 400 invalid_request', async ({ gw }) => {
    const res = await call(`${gw.url}/v1/upstream/refresh`, { method: 'POST', token: gw.tokens.admin, body: { force: true } })
    expect(res.status).toBe(400)
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'unknown field: force', retryable: false })
    const notObject = await call(`${gw.url}/v1/upstream/refresh`, { method: 'POST', token: gw.tokens.admin, body: [] })
    expect(notObject.body.error.message).toBe('body: must be a JSON object')
    expect((await call(`${gw.url}/v1/upstream/refresh`, { method: 'POST', token: gw.tokens.admin })).status).toBe(200)
  })
})
